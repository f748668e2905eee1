package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// BlockCache is the persistent prefix cache: KV-cache blocks written to files in a
// folder and indexed in SQLite by (model fingerprint, chain hash of the block's tokens),
// so a conversation reopened after a restart loads its prompt's keys and values instead
// of recomputing them. Each file's size and CRC-32C are in the index: a file that was
// changed, truncated or removed is detected, dropped and reported as missing. The
// folder is kept under a size cap by removing the least recently used blocks.
//
// Safe for concurrent use.
type BlockCache struct {
	db    *sql.DB
	dir   string
	model string
	cap   int64

	mu    sync.Mutex // guards total and serializes Put's write-then-trim
	total int64      // bytes indexed, all models
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
	abs, err := filepath.Abs(filepath.Join(dir, "index.db"))
	if err != nil {
		return nil, fmt.Errorf("store: block cache: %w", err)
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL") // a lost index row only costs a recompute
	q.Set("_busy_timeout", "5000")
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	db, err := sql.Open("sqlite3", "file://"+(&url.URL{Path: p}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: block cache: %w", err)
	}
	db.SetMaxOpenConns(1)
	c := &BlockCache{db: db, dir: dir, model: model, cap: capBytes}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS blocks (
		model TEXT NOT NULL, hash INTEGER NOT NULL, size INTEGER NOT NULL, crc INTEGER NOT NULL,
		used INTEGER NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID`); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: block cache index: %w", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0) FROM blocks`).Scan(&c.total); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: block cache index: %w", err)
	}
	return c, nil
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
	data, err := os.ReadFile(c.path(c.model, hash))
	if err != nil || int64(len(data)) != size || crc32.Checksum(data, castagnoli) != sum {
		c.mu.Lock()
		c.drop(c.model, hash, size)
		c.mu.Unlock()
		return nil, false
	}
	_, _ = c.db.Exec(`UPDATE blocks SET used = ? WHERE model = ? AND hash = ?`, time.Now().UnixNano(), c.model, int64(hash))
	return data, true
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
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: block cache: write block: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: block cache: %w", err)
	}
	var old int64
	_ = c.db.QueryRow(`SELECT size FROM blocks WHERE model = ? AND hash = ?`, c.model, int64(hash)).Scan(&old)
	if _, err := c.db.Exec(`INSERT INTO blocks (model, hash, size, crc, used) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (model, hash) DO UPDATE SET size = excluded.size, crc = excluded.crc, used = excluded.used`,
		c.model, int64(hash), len(data), crc32.Checksum(data, castagnoli), time.Now().UnixNano()); err != nil {
		os.Remove(path)
		return fmt.Errorf("store: block cache index: %w", err)
	}
	c.total += int64(len(data)) - old
	return c.trim()
}

// trim removes least recently used blocks, of any model, until the total is under 90%
// of the cap.
func (c *BlockCache) trim() error {
	for c.total > c.cap {
		rows, err := c.db.Query(`SELECT model, hash, size FROM blocks ORDER BY used LIMIT 64`)
		if err != nil {
			return fmt.Errorf("store: block cache trim: %w", err)
		}
		type victim struct {
			model string
			hash  int64
			size  int64
		}
		var vs []victim
		for rows.Next() {
			var v victim
			if err := rows.Scan(&v.model, &v.hash, &v.size); err != nil {
				rows.Close()
				return fmt.Errorf("store: block cache trim: %w", err)
			}
			vs = append(vs, v)
		}
		rows.Close()
		if len(vs) == 0 {
			c.total = 0
			return nil
		}
		for _, v := range vs {
			c.drop(v.model, uint64(v.hash), v.size)
			if c.total <= c.cap*9/10 {
				return nil
			}
		}
	}
	return nil
}

// drop removes one entry and its file; c.mu is held.
func (c *BlockCache) drop(model string, hash uint64, size int64) {
	res, err := c.db.Exec(`DELETE FROM blocks WHERE model = ? AND hash = ?`, model, int64(hash))
	if err == nil {
		if n, _ := res.RowsAffected(); n > 0 {
			c.total -= size
		}
	}
	os.Remove(c.path(model, hash))
}

// Size returns the bytes of block files indexed.
func (c *BlockCache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}
