package engine

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"ember/inference/backend/ref"
	"ember/inference/synth"
)

// fullDisk is a BlockStore on a full disk: every Put fails, nothing is found.
type fullDisk struct{ puts int }

func (*fullDisk) Get(uint64) ([]byte, bool) { return nil, false }
func (d *fullDisk) Put(uint64, []byte) error {
	d.puts++
	return errors.New("write block: " + syscall.ENOSPC.Error())
}

// TestDiskFullCache: when every save to the persistent prefix cache fails (a full
// disk), generation is unchanged, nothing counts as saved, and Close returns.
func TestDiskFullCache(t *testing.T) {
	want := singles(t)
	st := &fullDisk{}
	e := newStoriesOpt(t, Options{ContextSize: 256, PrefillChunk: 512, BlockSize: 4, Blocks: st})
	for i := range 2 {
		sameResult(t, "full disk", generate(t, e, req(prompts[i])), want[i], 1e-5)
	}
	closed := make(chan struct{})
	go func() { e.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close hung on a failing store")
	}
	if s := e.Stats(); s.DiskBlocksSaved != 0 || st.puts == 0 {
		t.Errorf("saved %d blocks with %d failed puts", s.DiskBlocksSaved, st.puts)
	}
}

// TestDiskCacheChainHole: a block missing in the middle of a saved prompt (trimmed, or
// dropped as corrupt) stops the load there: only the blocks before it are used, and
// the result is a cold engine's.
func TestDiskCacheChainHole(t *testing.T) {
	want := singles(t)
	store := &memBlocks{m: map[uint64][]byte{}}
	opt := Options{ContextSize: 256, PrefillChunk: 512, BlockSize: 4, Blocks: store}
	first := newStoriesOpt(t, opt)
	generate(t, first, req(prompts[0]))
	first.Close()
	second := newStoriesOpt(t, opt)
	// Drop every third saved block; which ones is not known here by position, so
	// remove a share of them: any hole must cut the chain, never shift it.
	store.mu.Lock()
	i := 0
	for h := range store.m {
		if i%3 == 1 {
			delete(store.m, h)
		}
		i++
	}
	store.mu.Unlock()
	sameResult(t, "chain with holes", generate(t, second, req(prompts[0])), want[0], 1e-5)
}

// TestDiskCacheOtherKVType: blocks saved by an F16 cache, offered to an engine with a
// Q8_0 cache (a store keyed wrongly), are not loaded: the prompt is recomputed and
// the result is a cold Q8_0 engine's.
func TestDiskCacheOtherKVType(t *testing.T) {
	p := synth.Presets["tiny"]()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if _, err := synth.Write(context.Background(), path, p, synth.Options{FileType: "f32", Seed: "kv"}); err != nil {
		t.Fatal(err)
	}
	r := Request{Prompt: "Once upon a time there was a little girl who liked to play", MaxTokens: 8, IgnoreEOS: true, Logprobs: true}
	cold := generate(t, newEngineOn(t, path, ref.New(), Options{ContextSize: 64, BlockSize: 4, KVType: "q8_0"}), r)
	store := &memBlocks{m: map[uint64][]byte{}}
	f16 := newEngineOn(t, path, ref.New(), Options{ContextSize: 64, BlockSize: 4, Blocks: store})
	generate(t, f16, r)
	f16.Close()
	if len(store.m) == 0 {
		t.Fatal("the F16 engine saved nothing")
	}
	q8 := newEngineOn(t, path, ref.New(), Options{ContextSize: 64, BlockSize: 4, KVType: "q8_0", Blocks: store})
	got := generate(t, q8, r)
	sameResult(t, "q8_0 over f16 blocks", got, cold, 1e-5)
	if s := q8.Stats(); s.DiskBlocksLoaded != 0 || got.last.Usage.CachedTokens != 0 {
		t.Errorf("loaded %d F16 blocks into a Q8_0 cache (%d cached tokens)", s.DiskBlocksLoaded, got.last.Usage.CachedTokens)
	}
}
