package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// orphanAge is how old an unindexed block file must be before it is removed as left
// by a crash: younger ones may be another process's Put between its rename and its
// index row.
const orphanAge = 10 * time.Minute

// isModelFolder reports whether name is a model's block folder (BlockCache.path).
func isModelFolder(name string) bool {
	if len(name) != 8 {
		return false
	}
	_, err := strconv.ParseUint(name, 16, 32)
	return err == nil
}

// sweep removes what a crash left in the folder and the index does not know, last
// changed before cutoff: temporary files of a Put, and block files without an index
// row (written but not indexed, or dropped from the index but not yet removed).
// Without it they would fill the disk outside the cap, across crashes.
func (c *BlockCache) sweep(ctx context.Context, cutoff time.Time) error {
	indexed := map[string]bool{} // paths of indexed blocks
	rows, err := c.db.QueryContext(ctx, `SELECT model, hash FROM blocks`)
	if err != nil {
		return fmt.Errorf("store: block cache sweep: %w", err)
	}
	for rows.Next() {
		var model string
		var hash int64
		if err := rows.Scan(&model, &hash); err != nil {
			rows.Close()
			return fmt.Errorf("store: block cache sweep: %w", err)
		}
		indexed[c.path(model, uint64(hash))] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: block cache sweep: %w", err)
	}
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("store: block cache sweep: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() || !isModelFolder(e.Name()) {
			continue
		}
		folder := filepath.Join(c.dir, e.Name())
		files, err := os.ReadDir(folder)
		if err != nil {
			return fmt.Errorf("store: block cache sweep: %w", err)
		}
		for _, f := range files {
			name := f.Name()
			p := filepath.Join(folder, name)
			if !f.Type().IsRegular() || indexed[p] || !(strings.HasSuffix(name, ".kv") || strings.HasSuffix(name, ".tmp")) {
				continue
			}
			info, err := f.Info()
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("store: block cache sweep: %w", err)
			}
			if info.ModTime().Before(cutoff) {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("store: block cache sweep: %w", err)
				}
			}
		}
	}
	return nil
}
