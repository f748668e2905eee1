package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// BlockCache is the persistent prefix cache: KV-cache blocks written to files in a
// folder and indexed in SQLite by (model fingerprint, chain hash of the block's tokens),
// so a conversation reopened after a restart loads its prompt's keys and values instead
// of recomputing them. Each file's size and CRC-32C are in the index: a file that was
// changed, truncated or removed is detected, dropped and reported as missing. The
// folder is kept under a size cap by removing the least recently used blocks.
//
// The cache is disposable: an index that SQLite finds damaged is deleted with the
// block files and started afresh, and files a crash left unindexed are removed when
// the cache is next opened. Several processes may share the folder: the total size
// lives in the index (kept by triggers), so they keep it under the cap together.
//
// Safe for concurrent use.
type BlockCache struct {
	db    *sql.DB
	dir   string
	model string
	cap   int64

	mu sync.Mutex // serializes Put's write-then-trim in this process
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blockSchema creates the index: one row per block, and the bytes of all of them in
// totals, kept by triggers in the same transactions so that every process sharing
// the folder sees the same total. Idempotent; it also upgrades an index from before
// totals existed.
const blockSchema = `
CREATE TABLE IF NOT EXISTS blocks (
	model TEXT NOT NULL, hash INTEGER NOT NULL, size INTEGER NOT NULL, crc INTEGER NOT NULL,
	used INTEGER NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS totals (id INTEGER PRIMARY KEY CHECK (id = 0), bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO totals (id, bytes) SELECT 0, COALESCE(SUM(size), 0) FROM blocks;
CREATE TRIGGER IF NOT EXISTS blocks_total_ai AFTER INSERT ON blocks BEGIN
	UPDATE totals SET bytes = bytes + new.size WHERE id = 0;
END;
CREATE TRIGGER IF NOT EXISTS blocks_total_ad AFTER DELETE ON blocks BEGIN
	UPDATE totals SET bytes = bytes - old.size WHERE id = 0;
END;
CREATE TRIGGER IF NOT EXISTS blocks_total_au AFTER UPDATE OF size ON blocks BEGIN
	UPDATE totals SET bytes = bytes - old.size + new.size WHERE id = 0;
END;
`

// OpenBlockCache opens (creating) the block cache in dir for the model with the given
// fingerprint (its file digest and the backend: K/V depend on both), holding at most
// capBytes of block files in all.
func OpenBlockCache(ctx context.Context, dir, model string, capBytes int64) (*BlockCache, error) {
	if model == "" || capBytes <= 0 {
		return nil, errors.New("store: block cache needs a model fingerprint and a positive size cap")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: block cache: %w", err)
	}
	index, err := filepath.Abs(filepath.Join(dir, "index.db"))
	if err != nil {
		return nil, fmt.Errorf("store: block cache: %w", err)
	}
	db, err := openIndex(ctx, index)
	if isDamaged(err) {
		// The index is only a cache: start a new one, without the files it indexed.
		if rerr := resetBlockDir(dir, index); rerr != nil {
			return nil, fmt.Errorf("store: block cache: reset the damaged index (%v): %w", err, rerr)
		}
		db, err = openIndex(ctx, index)
	}
	if err != nil {
		return nil, fmt.Errorf("store: block cache index %s: %w", index, err)
	}
	c := &BlockCache{db: db, dir: dir, model: model, cap: capBytes}
	// Housekeeping only: a folder it cannot read costs disk space, not correctness.
	_ = c.sweep(ctx, time.Now().Add(-orphanAge))
	return c, nil
}

// openIndex opens the index database at path and brings its schema up to date.
func openIndex(ctx context.Context, path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL") // a lost index row only costs a recompute
	q.Set("_busy_timeout", "5000")
	q.Set("_txlock", "immediate")
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	db, err := sql.Open("sqlite3", "file://"+(&url.URL{Path: p}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	tx, err := db.BeginTx(ctx, nil)
	if err == nil {
		if _, err = tx.ExecContext(ctx, blockSchema); err == nil {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
	}
	if err == nil {
		var ok string
		// A damaged index may still read its first pages: check it all (it is small).
		if err = db.QueryRowContext(ctx, `PRAGMA quick_check(1)`).Scan(&ok); err == nil && ok != "ok" {
			err = sqlite3.Error{Code: sqlite3.ErrCorrupt}
		}
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// isDamaged reports whether err says the database file is not one or is corrupt.
func isDamaged(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB)
}

// resetBlockDir removes a damaged index and the block folders in dir.
func resetBlockDir(dir, index string) error {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(index + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() && isModelFolder(e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes the index.
func (c *BlockCache) Close() error { return c.db.Close() }

// path is where a block's file lives: one folder per model.
func (c *BlockCache) path(model string, hash uint64) string {
	return filepath.Join(c.dir, fmt.Sprintf("%08x", crc32.Checksum([]byte(model), castagnoli)), fmt.Sprintf("%016x.kv", hash))
}

// Get returns the block stored under hash for this cache's model. false means missing,
// stale or corrupt (then the entry is dropped).
func (c *BlockCache) Get(hash uint64) ([]byte, bool) {
	var size int64
	var sum uint32
	err := c.db.QueryRow(`SELECT size, crc FROM blocks WHERE model = ? AND hash = ?`, c.model, int64(hash)).Scan(&size, &sum)
	if err != nil {
		return nil, false
	}
	data, err := readSized(c.path(c.model, hash), size)
	if err != nil || crc32.Checksum(data, castagnoli) != sum {
		c.mu.Lock()
		c.drop(c.model, hash)
		c.mu.Unlock()
		return nil, false
	}
	_, _ = c.db.Exec(`UPDATE blocks SET used = ? WHERE model = ? AND hash = ?`, time.Now().UnixNano(), c.model, int64(hash))
	return data, true
}

// readSized reads the regular file at path, which must be size bytes long; a file of
// another size is not read.
func readSized(path string, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() || info.Size() != size {
		return nil, fmt.Errorf("block file %s: %d bytes, want %d", path, info.Size(), size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("block file %s: %w", path, err)
	}
	return data, nil
}

// Put stores a block under hash (replacing one there), then trims the folder to the
// cap. Errors (a full disk) are returned; the cache stays consistent.
func (c *BlockCache) Put(hash uint64, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	path := c.path(c.model, hash)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("store: block cache: %w", err)
	}
	// A temporary file of its own: another process may be writing the same block.
	if err := writeFileAtomic(path, data); err != nil {
		return fmt.Errorf("store: block cache: write block %016x: %w", hash, err)
	}
	if _, err := c.db.Exec(`INSERT INTO blocks (model, hash, size, crc, used) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (model, hash) DO UPDATE SET size = excluded.size, crc = excluded.crc, used = excluded.used`,
		c.model, int64(hash), len(data), crc32.Checksum(data, castagnoli), time.Now().UnixNano()); err != nil {
		os.Remove(path)
		return fmt.Errorf("store: block cache index: add block %016x: %w", hash, err)
	}
	return c.trim()
}

// writeFileAtomic writes data to a new temporary file beside path and renames it
// there, so path never holds a partly written block.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// total is the bytes indexed, all models, as the index says (every process's puts).
func (c *BlockCache) total() (int64, error) {
	var n int64
	if err := c.db.QueryRow(`SELECT bytes FROM totals WHERE id = 0`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: block cache index: total size: %w", err)
	}
	return n, nil
}

// trim removes least recently used blocks, of any model, until the total is under 90%
// of the cap; c.mu is held.
func (c *BlockCache) trim() error {
	total, err := c.total()
	if err != nil || total <= c.cap {
		return err
	}
	for total > c.cap*9/10 {
		rows, err := c.db.Query(`SELECT model, hash FROM blocks ORDER BY used LIMIT 64`)
		if err != nil {
			return fmt.Errorf("store: block cache trim: %w", err)
		}
		type victim struct {
			model string
			hash  int64
		}
		var vs []victim
		for rows.Next() {
			var v victim
			if err := rows.Scan(&v.model, &v.hash); err != nil {
				rows.Close()
				return fmt.Errorf("store: block cache trim: %w", err)
			}
			vs = append(vs, v)
		}
		rows.Close()
		if len(vs) == 0 {
			return nil
		}
		before := total
		for _, v := range vs {
			c.drop(v.model, uint64(v.hash))
			if total, err = c.total(); err != nil || total <= c.cap*9/10 {
				return err
			}
		}
		if total >= before { // the deletes fail: stop rather than spin
			return fmt.Errorf("store: block cache trim: %d blocks dropped, %d bytes still indexed", len(vs), total)
		}
	}
	return nil
}

// drop removes one entry and its file; c.mu is held.
func (c *BlockCache) drop(model string, hash uint64) {
	_, _ = c.db.Exec(`DELETE FROM blocks WHERE model = ? AND hash = ?`, model, int64(hash))
	os.Remove(c.path(model, hash))
}

// Size returns the bytes of block files indexed, by every process sharing the folder.
func (c *BlockCache) Size() int64 {
	n, _ := c.total()
	return n
}
