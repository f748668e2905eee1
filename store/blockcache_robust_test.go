package store

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kvBytes is the bytes of every block file under dir, and how many there are.
func kvBytes(t *testing.T, dir string) (total int64, files int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".kv") {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total, files
}

// TestBlockCacheCorruptIndex: a damaged index (garbage, or a truncated database)
// does not stop the cache from opening: it starts empty, the block files it indexed
// are removed, and it works.
func TestBlockCacheCorruptIndex(t *testing.T) {
	ctx := context.Background()
	for _, damage := range []string{"garbage", "truncated"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			c, err := OpenBlockCache(ctx, dir, "m/cpu", 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			for h := uint64(1); h <= 40; h++ {
				if err := c.Put(h, bytes.Repeat([]byte{byte(h)}, 1000)); err != nil {
					t.Fatal(err)
				}
			}
			c.Close()
			index := filepath.Join(dir, "index.db")
			switch damage {
			case "garbage":
				if err := os.WriteFile(index, bytes.Repeat([]byte("not sqlite"), 500), 0o600); err != nil {
					t.Fatal(err)
				}
			case "truncated":
				info, err := os.Stat(index)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(index, info.Size()/3); err != nil {
					t.Fatal(err)
				}
			}
			c, err = OpenBlockCache(ctx, dir, "m/cpu", 1<<20)
			if err != nil {
				t.Fatalf("open with a damaged index: %v", err)
			}
			defer c.Close()
			if _, ok := c.Get(3); ok {
				t.Error("a block was served from a damaged index")
			}
			if n, files := kvBytes(t, dir); n != c.Size() {
				t.Errorf("%d bytes in %d block files left, %d indexed", n, files, c.Size())
			}
			if err := c.Put(7, []byte("seven")); err != nil {
				t.Fatal(err)
			}
			if got, ok := c.Get(7); !ok || string(got) != "seven" {
				t.Errorf("get after recovery: %q %v", got, ok)
			}
		})
	}
}

// TestBlockCacheOrphans: files a crash left behind (a block written but never
// indexed, a half-written temporary file) are removed at the next open once they
// are old enough not to belong to a Put in progress elsewhere, so they do not pile up
// outside the size cap.
func TestBlockCacheOrphans(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := OpenBlockCache(ctx, dir, "m/cpu", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for h := uint64(1); h <= 3; h++ {
		if err := c.Put(h, bytes.Repeat([]byte{byte(h)}, 100)); err != nil {
			t.Fatal(err)
		}
	}
	folder := filepath.Dir(c.path(c.model, 1))
	c.Close()
	old := time.Now().Add(-time.Hour)
	orphans := []string{
		filepath.Join(folder, "00000000000000aa.kv"),          // renamed, never indexed
		filepath.Join(folder, "00000000000000bb.kv.tmp"),      // killed while writing (old name)
		filepath.Join(folder, "00000000000000cc.kv.123.tmp"),  // killed while writing
		filepath.Join(dir, "0badf00d", "00000000000000dd.kv"), // a model whose rows are gone
	}
	for _, p := range orphans {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, 5000), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	fresh := filepath.Join(folder, "00000000000000ee.kv") // maybe another process's Put
	if err := os.WriteFile(fresh, make([]byte, 10), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = OpenBlockCache(ctx, dir, "m/cpu", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range orphans {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("orphan %s was kept", p)
		}
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a recent file was removed: %v", err)
	}
	for h := uint64(1); h <= 3; h++ {
		if got, ok := c.Get(h); !ok || !bytes.Equal(got, bytes.Repeat([]byte{byte(h)}, 100)) {
			t.Errorf("block %d lost by the sweep", h)
		}
	}
}

// TestBlockCacheTwoProcesses: two caches on one folder (two app instances, or the app
// and `ember serve`) keep the folder under the cap together, agree on its size, and
// neither wipes out the other's recent blocks.
func TestBlockCacheTwoProcesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const capBytes = 2000
	a, err := OpenBlockCache(ctx, dir, "m/cpu", capBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenBlockCache(ctx, dir, "m/cpu/q8_0", capBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for h := uint64(1); h <= 60; h++ {
		c := a
		if h%2 == 0 {
			c = b
		}
		if err := c.Put(h, bytes.Repeat([]byte{byte(h)}, 100)); err != nil {
			t.Fatal(err)
		}
		if n, files := kvBytes(t, dir); n > capBytes {
			t.Fatalf("after %d puts: %d bytes in %d files, cap %d", h, n, files, capBytes)
		}
	}
	n, _ := kvBytes(t, dir)
	if a.Size() != n || b.Size() != n {
		t.Errorf("sizes %d and %d, %d bytes on disk", a.Size(), b.Size(), n)
	}
	for h := uint64(57); h <= 60; h++ {
		c := a
		if h%2 == 0 {
			c = b
		}
		if _, ok := c.Get(h); !ok {
			t.Errorf("recent block %d was trimmed", h)
		}
	}
	if n < capBytes/2 {
		t.Errorf("only %d bytes kept of a %d cap: one cache evicted the other's blocks wholesale", n, capBytes)
	}
}
