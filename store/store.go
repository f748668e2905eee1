// Package store keeps Ember's conversations, messages, settings and known models in
// one SQLite database (github.com/mattn/go-sqlite3). It is the only package that
// imports the SQL driver.
//
// Durability: the database runs in WAL mode with synchronous=FULL, so a committed
// call survives a crash of the process or of the machine. A reply is saved in pieces
// while it streams (UpdatePartial) and finished with FinishMessage; replies that a
// crash left "streaming" are marked "interrupted" when the database is next opened.
//
// Concurrency: a Store is safe for use by several goroutines. It holds a single
// connection, so calls run one at a time; other processes wait on SQLite's busy
// timeout.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/mattn/go-sqlite3"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrNotFound: no conversation, message, setting or model with that key.
	ErrNotFound = errors.New("not found")
	// ErrDiskFull: SQLite could not grow the database (SQLITE_FULL). Nothing
	// committed before is lost; the failed call changed nothing.
	ErrDiskFull = errors.New("the disk is full: free some space and try again")
	// ErrCorrupt: the database file is not an SQLite database or is damaged
	// (SQLITE_NOTADB, SQLITE_CORRUPT). Open leaves the file as it is.
	ErrCorrupt = errors.New("the database file is damaged")
)

// busyTimeout is how long a call waits for another process's write lock.
const busyTimeout = 5 * time.Second

// Store is an open conversation database.
type Store struct {
	db   *sql.DB
	path string
	lock *flock.Flock // shared while open: tells a later opener it is not alone
}

// Open opens (creating it if needed) the database at path, brings its schema up to
// date and marks replies left streaming by a crash as interrupted. The directory
// must exist.
//
// Every open Store holds a shared lock on path + ".lock" (an advisory file lock,
// released by the system when a process dies). Replies are marked interrupted only by
// an opener that can first take that lock exclusively: one with no other process
// holding the database open, so a second app instance (or `ember serve` beside the app)
// never marks the first one's streaming reply as cut short.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("store: open: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if _, err := os.Stat(filepath.Dir(abs)); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_txlock", "immediate") // take the write lock at BEGIN: no upgrade deadlocks
	// A file: URI with an empty authority: file:///home/u/ember.db, and on
	// Windows file:///C:/Users/u/ember.db; characters like ? # % are escaped.
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	dsn := "file://" + (&url.URL{Path: p}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// One connection: calls are serialized in this process, and per-connection
	// settings (pragmas) hold for every call.
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	lk := flock.New(abs + ".lock")
	alone, err := lk.TryLock()
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: lock: %w", path, err)
	}
	s := &Store{db: db, path: abs, lock: lk}
	if err = s.init(ctx, alone); err == nil {
		if alone { // exclusive for the crash recovery only, then shared like any opener
			err = lk.Unlock()
		}
		if err == nil {
			err = lk.RLock()
		}
		if err != nil {
			err = fmt.Errorf("lock: %w", err)
		}
	}
	if err != nil {
		db.Close()
		lk.Close()
		// init's errors say "store: <what>"; name the file in the one prefix.
		return nil, fmt.Errorf("store: open %s: %w", path, trimPrefix{err})
	}
	return s, nil
}

// init checks the connection's settings, migrates the schema and, when alone (no other
// process has the database open), marks replies a crash left streaming as interrupted.
func (s *Store) init(ctx context.Context, alone bool) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return wrapErr("read journal mode", err)
	}
	if mode != "wal" {
		return fmt.Errorf("journal mode is %q, want wal", mode)
	}
	var fk int
	if err := s.db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		return fmt.Errorf("foreign keys are off (%v)", err)
	}
	if err := migrate(ctx, s.db, len(migrations)); err != nil {
		return err
	}
	if !alone {
		return nil // another process's replies may still be streaming
	}
	if _, err := s.db.ExecContext(ctx,
		`UPDATE messages SET state = ? WHERE state = ?`, StateInterrupted, StateStreaming); err != nil {
		return wrapErr("mark interrupted replies", err)
	}
	return nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close checkpoints the WAL into the database file and closes it.
func (s *Store) Close() error {
	err := s.db.Close()
	if lerr := s.lock.Close(); err == nil && lerr != nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// IntegrityCheck runs PRAGMA integrity_check and returns nil when it says "ok".
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return wrapErr("integrity check", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return wrapErr("integrity check", err)
		}
		problems = append(problems, line)
	}
	if err := rows.Err(); err != nil {
		return wrapErr("integrity check", err)
	}
	if len(problems) == 1 && problems[0] == "ok" {
		return nil
	}
	return fmt.Errorf("store: integrity check: %q", problems)
}

// wrapErr names the operation that failed, and turns SQLITE_FULL into ErrDiskFull and
// SQLITE_NOTADB and SQLITE_CORRUPT into ErrCorrupt.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code {
		case sqlite3.ErrFull:
			return fmt.Errorf("store: %s: %w (%v)", op, ErrDiskFull, err)
		case sqlite3.ErrNotADB, sqlite3.ErrCorrupt:
			return fmt.Errorf("store: %s: %w (%v)", op, ErrCorrupt, err)
		}
	}
	return fmt.Errorf("store: %s: %w", op, err)
}

// trimPrefix is an error without its leading "store: ", for wrapping in another
// store error; Unwrap keeps errors.Is working.
type trimPrefix struct{ err error }

func (e trimPrefix) Error() string { return strings.TrimPrefix(e.err.Error(), "store: ") }
func (e trimPrefix) Unwrap() error { return e.err }

// tx runs f in a transaction, committing when it returns nil.
func (s *Store) tx(ctx context.Context, op string, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return wrapErr(op, err)
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return wrapErr(op, err)
	}
	if err := tx.Commit(); err != nil {
		return wrapErr(op, err)
	}
	return nil
}

// millis is t as Unix milliseconds, the unit of every time column.
func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms) }

// mustAffect turns an UPDATE or DELETE that touched no row into ErrNotFound.
func mustAffect(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}
