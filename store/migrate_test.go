package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// schema is the database's schema: every object's SQL, sorted.
func schema(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestMigrations opens databases left at every older schema version, with data in
// them, and checks that each ends with the schema of a new database and keeps its data.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	fresh := openTemp(t)
	want := schema(t, fresh.db)
	if v := userVersion(t, fresh.db); v != SchemaVersion() {
		t.Fatalf("new database at version %d, want %d", v, SchemaVersion())
	}

	for from := 0; from < SchemaVersion(); from++ {
		path := filepath.Join(t.TempDir(), "old.db")
		db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		if err := migrate(ctx, db, from); err != nil {
			t.Fatalf("to version %d: %v", from, err)
		}
		if from >= 1 { // version 1 has conversations and messages
			mustExec(t, db, `INSERT INTO conversations (id, title, created_ms, updated_ms) VALUES (7, 'old chat', 1, 1)`)
			mustExec(t, db, `INSERT INTO messages (conversation_id, role, content, state, created_ms) VALUES (7, 'user', 'kept across upgrades', 'complete', 1)`)
			mustExec(t, db, `INSERT INTO messages (conversation_id, role, content, state, created_ms) VALUES (7, 'assistant', 'half', 'streaming', 2)`)
		}
		db.Close()

		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open a version %d database: %v", from, err)
		}
		if got := schema(t, s.db); !slices.Equal(got, want) {
			t.Errorf("from version %d: schema\n%s\nwant\n%s", from, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if from >= 1 {
			msgs, err := s.Messages(ctx, 7)
			if err != nil || len(msgs) != 2 || msgs[0].Content != "kept across upgrades" || msgs[1].State != StateInterrupted {
				t.Errorf("from version %d: messages %+v, %v", from, msgs, err)
			}
			// Rows from before the index existed are found.
			if got, err := s.SearchConversations(ctx, "upgrades"); err != nil || len(got) != 1 {
				t.Errorf("from version %d: search = %+v, %v", from, got, err)
			}
		}
		if err := s.IntegrityCheck(ctx); err != nil {
			t.Error(err)
		}
		s.Close()
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `PRAGMA user_version = 999`)
	db.Close()
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("open = %v, want a refusal of a newer schema", err)
	}
}

func userVersion(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
