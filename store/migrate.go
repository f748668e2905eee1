package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] takes the schema from version i to i+1 (PRAGMA user_version).
// Append only: never edit a migration that has shipped.
var migrations = []string{
	// 1: conversations, messages and settings.
	`
CREATE TABLE conversations (
	id            INTEGER PRIMARY KEY,
	title         TEXT    NOT NULL DEFAULT '',
	system_prompt TEXT    NOT NULL DEFAULT '',
	sampling      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(sampling)),
	model         TEXT    NOT NULL DEFAULT '',
	created_ms    INTEGER NOT NULL,
	updated_ms    INTEGER NOT NULL
);
CREATE INDEX conversations_updated ON conversations(updated_ms DESC);

CREATE TABLE messages (
	id              INTEGER PRIMARY KEY,
	conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
	role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
	content         TEXT    NOT NULL DEFAULT '',
	reasoning       TEXT    NOT NULL DEFAULT '',
	prompt_tokens   INTEGER NOT NULL DEFAULT 0,
	gen_tokens      INTEGER NOT NULL DEFAULT 0,
	model           TEXT    NOT NULL DEFAULT '',
	ttft_ms         INTEGER NOT NULL DEFAULT 0,
	gen_ms          INTEGER NOT NULL DEFAULT 0,
	state           TEXT    NOT NULL DEFAULT 'complete' CHECK (state IN ('complete', 'streaming', 'interrupted')),
	created_ms      INTEGER NOT NULL
);
CREATE INDEX messages_conversation ON messages(conversation_id, id);

CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
`,
	// 2: known model files, and a full-text index over message text. FTS4 is in
	// go-sqlite3's default build; FTS5 would need the sqlite_fts5 build tag on
	// every go command.
	`
CREATE TABLE models (
	path        TEXT PRIMARY KEY,
	name        TEXT    NOT NULL DEFAULT '',
	arch        TEXT    NOT NULL DEFAULT '',
	size        INTEGER NOT NULL DEFAULT 0,
	quant       TEXT    NOT NULL DEFAULT '',
	ctx_length  INTEGER NOT NULL DEFAULT 0,
	fingerprint TEXT    NOT NULL DEFAULT '',
	source      TEXT    NOT NULL DEFAULT '',
	added_ms    INTEGER NOT NULL
) WITHOUT ROWID;

CREATE VIRTUAL TABLE messages_fts USING fts4(content='messages', content, reasoning, tokenize=unicode61);
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
CREATE TRIGGER messages_fts_bu BEFORE UPDATE OF content, reasoning ON messages BEGIN
	DELETE FROM messages_fts WHERE docid = old.id;
END;
CREATE TRIGGER messages_fts_bd BEFORE DELETE ON messages BEGIN
	DELETE FROM messages_fts WHERE docid = old.id;
END;
CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, reasoning ON messages BEGIN
	INSERT INTO messages_fts(docid, content, reasoning) VALUES (new.id, new.content, new.reasoning);
END;
CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN
	INSERT INTO messages_fts(docid, content, reasoning) VALUES (new.id, new.content, new.reasoning);
END;
`,
}

// SchemaVersion is the schema version this build writes.
func SchemaVersion() int { return len(migrations) }

// migrate brings db to version target, one transaction per migration, each setting
// user_version with its changes, so a crash leaves the database at a whole version.
// Another process migrating at the same time is fine: the version is read again
// under the write lock.
func migrate(ctx context.Context, db *sql.DB, target int) error {
	for {
		done, err := migrateOne(ctx, db, target)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next migration below target; done when there is none.
func migrateOne(ctx context.Context, db *sql.DB, target int) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock first
	if err != nil {
		return false, wrapErr("migrate schema", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, wrapErr("read schema version", err)
	}
	if v > len(migrations) {
		return false, fmt.Errorf("store: the database has schema version %d, newer than this Ember knows (%d); update Ember", v, len(migrations))
	}
	if v >= target {
		return true, nil
	}
	op := fmt.Sprintf("migrate schema to version %d", v+1)
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return false, wrapErr(op, err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
		return false, wrapErr(op, err)
	}
	if err := tx.Commit(); err != nil {
		return false, wrapErr(op, err)
	}
	return v+1 >= target, nil
}
