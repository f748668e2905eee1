package engine

import (
	"sync"
	"testing"
)

// memBlocks is a BlockStore in memory, standing in for the disk.
type memBlocks struct {
	mu sync.Mutex
	m  map[uint64][]byte
}

func (b *memBlocks) Get(h uint64) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.m[h]
	return d, ok
}

func (b *memBlocks) Put(h uint64, d []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[h] = append([]byte(nil), d...)
	return nil
}

// TestBlocksSurviveRestart: a second engine (a restart) over the same block store
// loads the prompt's blocks instead of recomputing them, and generates exactly what a
// cold engine does.
func TestBlocksSurviveRestart(t *testing.T) {
	want := singles(t)
	store := &memBlocks{m: map[uint64][]byte{}}
	opt := Options{ContextSize: 256, PrefillChunk: 512, BlockSize: 4, Blocks: store}
	first := newStoriesOpt(t, opt)
	generate(t, first, req(prompts[0]))
	first.Close() // waits for the saves
	if st := first.Stats(); st.DiskBlocksSaved == 0 {
		t.Fatalf("nothing saved: %+v", st)
	}
	second := newStoriesOpt(t, opt)
	got := generate(t, second, req(prompts[1])) // shares its first blocks with prompts[0]
	sameResult(t, "restored", got, want[1], 1e-5)
	if got.last.Usage.CachedTokens < 12 {
		t.Errorf("after a restart %d prompt tokens came from the store, want the shared blocks", got.last.Usage.CachedTokens)
	}
	if st := second.Stats(); st.DiskBlocksLoaded == 0 {
		t.Errorf("no block loaded: %+v", st)
	}
	// A corrupt store entry (wrong size) is not used: the prompt is recomputed.
	store.mu.Lock()
	for h := range store.m {
		store.m[h] = store.m[h][:10]
	}
	store.mu.Unlock()
	third := newStoriesOpt(t, opt)
	sameResult(t, "corrupt store", generate(t, third, req(prompts[0])), want[0], 1e-5)
}
