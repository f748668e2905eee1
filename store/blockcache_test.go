package store

import (
	"bytes"
	"context"
	"os"
	"testing"
)

func TestBlockCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := OpenBlockCache(ctx, dir, "model-a/cpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	block := func(b byte) []byte { return bytes.Repeat([]byte{b}, 100) }
	for h := uint64(1); h <= 5; h++ {
		if err := c.Put(h, block(byte(h))); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := c.Get(3); !ok || !bytes.Equal(got, block(3)) {
		t.Fatalf("get 3: %v %v", ok, got)
	}
	if _, ok := c.Get(99); ok {
		t.Fatal("a block never stored was found")
	}
	// Another model's blocks are separate.
	other, err := OpenBlockCache(ctx, dir, "model-b/cpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := other.Get(3); ok {
		t.Fatal("model b sees model a's block")
	}
	other.Close()

	// A corrupted file is detected and dropped; so is a removed one.
	if err := os.WriteFile(c.path(c.model, 2), block(9), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(2); ok {
		t.Fatal("a corrupted block was returned")
	}
	os.Remove(c.path(c.model, 4))
	if _, ok := c.Get(4); ok {
		t.Fatal("a removed block was returned")
	}
	if c.Size() != 300 {
		t.Fatalf("size %d after dropping two of five blocks, want 300", c.Size())
	}

	// Over the cap, the least recently used go first (3 was read last).
	for h := uint64(10); h < 20; h++ {
		if err := c.Put(h, block(byte(h))); err != nil {
			t.Fatal(err)
		}
		if h == 15 {
			c.Get(3)
		}
	}
	if c.Size() > 1000 {
		t.Fatalf("size %d over the cap", c.Size())
	}
	if _, ok := c.Get(1); ok {
		t.Error("the oldest block survived trimming")
	}
	if _, ok := c.Get(3); !ok {
		t.Error("a recently read block was trimmed")
	}
	if _, ok := c.Get(19); !ok {
		t.Error("the newest block was trimmed")
	}
	c.Close()

	// Reopened, the index and the total are intact.
	c, err = OpenBlockCache(ctx, dir, "model-a/cpu", 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, ok := c.Get(19); !ok || !bytes.Equal(got, block(19)) {
		t.Fatal("block 19 lost across a reopen")
	}
	if c.Size() == 0 || c.Size() > 1000 {
		t.Fatalf("size %d after reopening", c.Size())
	}
}
