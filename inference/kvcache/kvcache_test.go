package kvcache

import (
	"errors"
	"slices"
	"testing"
)

func TestNewPoolRejectsBadSizes(t *testing.T) {
	for _, c := range [][2]int{{0, 16}, {16, 0}, {-1, 4}} {
		if _, err := NewPool(c[0], c[1]); err == nil {
			t.Errorf("NewPool(%d, %d) succeeded", c[0], c[1])
		}
	}
}

func TestMatchAfterInsertReturnsSameBlocks(t *testing.T) {
	h := newHarness(t, 16, 4)
	prompt := toks(0, 14)
	if _, err := h.newSeq("a", prompt); err != nil {
		t.Fatal(err)
	}
	a := h.seq("a")
	if cached, added := h.insert(a, len(prompt)); cached != 3 || added != 3 {
		t.Fatalf("insert: cached %d added %d, want 3 3", cached, added)
	}
	blocks, n := h.tr.Match(prompt)
	if n != 12 || !slices.Equal(blocks, a.s.Blocks()[:3]) {
		t.Fatalf("Match = %v, %d; want %v, 12", blocks, n, a.s.Blocks()[:3])
	}
	for _, b := range blocks {
		if h.p.Ref(b) != 3 { // a, the tree, the caller
			t.Errorf("block %d has ref %d, want 3", b, h.p.Ref(b))
		}
		if err := h.p.Free(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.p.Free(blocks[0]); err == nil {
		t.Error("second Free of a matched block succeeded")
	}
	h.check()
	if want := ChainHashes(prompt, 4); len(want) != 3 || h.tr.byBlock[blocks[2]].hash != want[2] {
		t.Errorf("node hash %#x, ChainHashes %v", h.tr.byBlock[blocks[2]].hash, want)
	}
}

// TestEvictionIsLRUOverLeaves: chains A and B share a first block P; C stands alone.
// Blocks are released (stamped) in the order A's tail, C, B's tail; eviction takes
// unlocked leaves least recently released first, and P only once both children are gone.
func TestEvictionIsLRUOverLeaves(t *testing.T) {
	h := newHarness(t, 16, 2)
	P := toks(0, 2)
	A, B, C := cat(P, toks(10, 14)), cat(P, toks(20, 22)), toks(30, 34)
	for _, c := range []struct {
		name string
		p    []int32
	}{{"a", A}, {"b", B}, {"c", C}} {
		if _, err := h.newSeq(c.name, c.p); err != nil {
			t.Fatal(err)
		}
		h.insert(h.seq(c.name), len(c.p))
	}
	block := func(name string, i int) int { return h.seq(name).s.Blocks()[i] }
	pb, a1, a2, b1 := block("a", 0), block("a", 1), block("a", 2), block("b", 1)
	c0, c1 := block("c", 0), block("c", 1)
	if block("b", 0) != pb {
		t.Fatal("b does not share the first block with a")
	}
	h.release(h.seq("a")) // a1, a2 unlocked; P still held by b
	h.release(h.seq("c")) // c0, c1
	h.release(h.seq("b")) // P, b1
	h.check()
	want := []int{a2, a1, c1, c0, b1, pb}
	for i, w := range want {
		if h.tr.byBlock[w] == nil {
			t.Fatalf("block %d not cached before eviction %d", w, i)
		}
		if n := h.tr.Evict(1); n != 1 {
			t.Fatalf("eviction %d evicted %d", i, n)
		}
		if h.tr.byBlock[w] != nil || h.p.Ref(w) != 0 {
			t.Fatalf("eviction %d: block %d still cached; want order %v", i, w, want)
		}
		h.check()
	}
	if h.tr.Evict(1) != 0 || h.p.NumFree() != 16 {
		t.Fatalf("tree not empty after evicting everything")
	}
	if st := h.p.Stats(); st.EvictedBlocks != 6 {
		t.Errorf("EvictedBlocks = %d, want 6", st.EvictedBlocks)
	}
}

// TestLockedPathNeverEvicted fills the pool under a matched path and checks that no
// amount of pressure evicts it while a sequence holds it.
func TestLockedPathNeverEvicted(t *testing.T) {
	h := newHarness(t, 6, 4)
	prompt := toks(0, 12)
	h.newSeq("a", prompt)
	h.insert(h.seq("a"), 12)
	h.release(h.seq("a"))
	if n, err := h.newSeq("b", cat(prompt[:8], toks(100, 102))); n != 8 || err != nil {
		t.Fatalf("b matched %d, %v", n, err)
	}
	locked := slices.Clone(h.seq("b").s.Blocks()[:2])
	// c needs every block it can get: the unlocked third block is evicted, the path isn't.
	_, err := h.newSeq("c", toks(200, 216))
	if !errors.Is(err, ErrOutOfBlocks) {
		t.Fatalf("c: err %v, want ErrOutOfBlocks", err)
	}
	if err := h.append(h.seq("c"), toks(200, 212)); err != nil {
		t.Fatal(err)
	}
	h.check()
	for _, b := range locked {
		if h.tr.byBlock[b] == nil {
			t.Fatalf("locked block %d was evicted", b)
		}
	}
	if h.tr.Evict(100) != 0 {
		t.Fatal("Evict took a locked block")
	}
	h.release(h.seq("b"))
	if h.tr.Evict(100) != 2 {
		t.Fatal("unlocked path not evicted")
	}
	h.check()
}

func TestForkCopyOnWrite(t *testing.T) {
	h := newHarness(t, 8, 4)
	h.newSeq("a", toks(0, 6))
	a := h.seq("a")
	cps, err := h.fork(a, "b")
	if err != nil {
		t.Fatal(err)
	}
	b := h.seq("b")
	ab, bb := a.s.Blocks(), b.s.Blocks()
	if ab[0] != bb[0] || ab[1] == bb[1] || h.p.Ref(ab[0]) != 2 || h.p.Ref(ab[1]) != 1 || h.p.Ref(bb[1]) != 1 {
		t.Fatalf("fork tables %v %v refs %d %d %d", ab, bb, h.p.Ref(ab[0]), h.p.Ref(ab[1]), h.p.Ref(bb[1]))
	}
	if want := (Copy{Src: ab[1], Dst: bb[1], Rows: 2}); len(cps) != 1 || cps[0] != want {
		t.Fatalf("copies %v, want [%v]", cps, want)
	}
	// Diverge: each writes its own rows 2.. of the copied block.
	h.append(a, []int32{100, 101, 102})
	h.append(b, []int32{200})
	h.check()
	if got := h.mem[bb[1]][:3]; !slices.Equal(got, []int32{4, 5, 200}) {
		t.Fatalf("b's block holds %v", got)
	}
	h.release(a)
	h.release(b)
	h.check()
	if h.p.NumFree() != 8 {
		t.Fatalf("NumFree = %d after releasing everything", h.p.NumFree())
	}
}

func TestInsertRawDeduplicates(t *testing.T) {
	h := newHarness(t, 8, 2)
	prompt := toks(0, 4)
	h.newSeq("a", prompt)
	h.insert(h.seq("a"), 4)
	// A caller loads the same prefix into blocks of its own (as from the disk cache).
	var mine []int
	for range 2 {
		b, err := h.p.Alloc()
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, b)
	}
	orig := slices.Clone(mine)
	cached, added, err := h.tr.Insert(prompt, mine)
	if err != nil || cached != 2 || added != 0 {
		t.Fatalf("Insert = %d, %d, %v", cached, added, err)
	}
	if !slices.Equal(mine, h.seq("a").s.Blocks()) {
		t.Fatalf("blocks %v not swapped for the cached %v", mine, h.seq("a").s.Blocks())
	}
	for _, b := range orig {
		if h.p.Ref(b) != 0 {
			t.Errorf("duplicate block %d not freed", b)
		}
	}
	h.raw = mine
	h.check()
	if _, _, err := h.tr.Insert(prompt, []int{orig[0], orig[1]}); err == nil {
		t.Error("Insert of blocks the caller does not hold succeeded")
	}
	if _, _, err := h.tr.Insert(prompt, mine[:1]); err == nil {
		t.Error("Insert with too few blocks succeeded")
	}
	if _, _, err := h.tr.Insert(prompt, []int{mine[0], mine[0]}); err == nil {
		t.Error("Insert of a block twice succeeded")
	}
	h.free(0)
	h.free(0)
	h.check()
}

func TestInsertRejectsInconsistentTokens(t *testing.T) {
	h := newHarness(t, 8, 2)
	h.newSeq("a", toks(0, 4))
	a := h.seq("a")
	h.insert(a, 4)
	// The same blocks claimed for other tokens: the block is cached elsewhere.
	if _, _, err := h.tr.InsertSeq(toks(10, 14), a.s); err == nil {
		t.Fatal("InsertSeq with other tokens for cached blocks succeeded")
	}
	if _, _, err := h.tr.InsertSeq(toks(0, 5), a.s); err == nil {
		t.Fatal("InsertSeq of more tokens than positions succeeded")
	}
	h.check()
}

// TestHashCollisionIsAMiss forces every chain hash to collide: the tree must never
// return a block cached for other tokens, and simply caches less.
func TestHashCollisionIsAMiss(t *testing.T) {
	h := newHarness(t, 8, 2)
	h.tr.hash = func(buf []byte, parent BlockHash, block []int32) (BlockHash, []byte) { return 42, buf }
	h.newSeq("a", toks(0, 4))
	if cached, added := h.insert(h.seq("a"), 4); cached != 1 || added != 1 {
		t.Fatalf("insert under collisions: cached %d added %d, want 1 1", cached, added)
	}
	h.newSeq("b", toks(10, 14))
	if cached, _ := h.insert(h.seq("b"), 4); cached != 0 {
		t.Fatalf("colliding chain cached %d blocks", cached)
	}
	if n := h.probe(toks(10, 14)); n != 0 {
		t.Fatalf("Match of a colliding prefix found %d tokens", n)
	}
	if n := h.probe(toks(0, 4)); n != 2 {
		t.Fatalf("Match of the cached prefix found %d tokens, want 2", n)
	}
	h.check()
}

func TestBlockHashIsStable(t *testing.T) {
	// Golden value, cross-checked with Python: hashlib.sha256(struct.pack("<Q4I", 0, 1, 2,
	// 3, 4)).digest()[:8] read little-endian. The persistent prefix cache is indexed by it.
	if got, want := HashBlock(0, []int32{1, 2, 3, 4}), BlockHash(0x30238dd4b4b13f9c); got != want {
		t.Errorf("HashBlock(0, [1 2 3 4]) = %#x, want %#x", uint64(got), uint64(want))
	}
	tokens := toks(0, 10)
	chain := ChainHashes(tokens, 4)
	if len(chain) != 2 || chain[0] != HashBlock(0, tokens[:4]) || chain[1] != HashBlock(chain[0], tokens[4:8]) {
		t.Errorf("ChainHashes = %v", chain)
	}
	if HashBlock(1, tokens[:4]) == chain[0] || HashBlock(0, []int32{0, 1, 2, 4}) == chain[0] {
		t.Error("hash ignores the parent or a token")
	}
	if ChainHashes(tokens, 0) != nil {
		t.Error("ChainHashes with block size 0 is not nil")
	}
}

func TestSeqMisuse(t *testing.T) {
	h := newHarness(t, 4, 4)
	if _, err := h.p.NewSeq([]int{0}); err == nil {
		t.Error("NewSeq with a block the caller does not hold succeeded")
	}
	if _, err := h.p.NewSeq([]int{9}); err == nil {
		t.Error("NewSeq with an out-of-range block succeeded")
	}
	b, _ := h.p.Alloc()
	if _, err := h.p.NewSeq([]int{b, b}); err == nil {
		t.Error("NewSeq with a block twice succeeded")
	}
	s, err := h.p.NewSeq([]int{b})
	if err != nil || s.Len() != 4 {
		t.Fatalf("NewSeq from an allocated block: %v, len %d", err, s.Len())
	}
	h.seqs = append(h.seqs, &hseq{name: "s", s: s, toks: []int32{-1, -1, -1, -1}})
	h.check()
	if blk, off := s.Slot(4); blk != -1 || off != -1 {
		t.Errorf("Slot past the end = %d, %d", blk, off)
	}
	if err := s.Append(-1); err == nil {
		t.Error("Append(-1) succeeded")
	}
	if _, err := s.Truncate(5); err == nil {
		t.Error("Truncate past the end succeeded")
	}
	h.release(h.seq("s"))
	s.Release() // no-op
	if err := s.Append(1); err == nil {
		t.Error("Append on a released sequence succeeded")
	}
	if _, _, err := s.Fork(); err == nil {
		t.Error("Fork of a released sequence succeeded")
	}
	if _, _, err := h.tr.InsertSeq(nil, s); err == nil {
		t.Error("InsertSeq of a released sequence succeeded")
	}
	if err := h.p.Free(-1); err == nil {
		t.Error("Free(-1) succeeded")
	}
	h.check()
	if h.p.NumFree() != 4 {
		t.Errorf("NumFree = %d", h.p.NumFree())
	}
}

// TestCheckIntegrityCatches corrupts the state in several ways and expects an error.
func TestCheckIntegrityCatches(t *testing.T) {
	corruptions := map[string]func(h *harness){
		"ref count":       func(h *harness) { h.p.ref[h.seq("a").s.blocks[0]]++ },
		"free duplicate":  func(h *harness) { h.p.free = append(h.p.free, h.p.free[0]) },
		"free used block": func(h *harness) { h.p.free[0] = h.seq("a").s.blocks[0] },
		"table length":    func(h *harness) { h.seq("a").s.n += 4 },
		"shared partial":  func(h *harness) { h.p.ref[h.seq("a").s.blocks[2]]++; h.p.loose[h.seq("a").s.blocks[2]]++ },
		"child count":     func(h *harness) { h.tr.root.children++ },
		"node hash":       func(h *harness) { h.tr.byBlock[h.seq("a").s.blocks[0]].tokens[0] = 99 },
		"lru membership":  func(h *harness) { h.tr.lru = h.tr.lru[:0] },
		"unlocked count":  func(h *harness) { h.tr.unlocked++ },
		"lru order": func(h *harness) {
			h.tr.lru.Swap(0, 1)
		},
	}
	for name, corrupt := range corruptions {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, 12, 4)
			h.newSeq("b", toks(100, 112))
			h.insert(h.seq("b"), 12)
			h.release(h.seq("b"))
			h.newSeq("c", toks(200, 208))
			h.insert(h.seq("c"), 8)
			h.release(h.seq("c"))
			h.newSeq("a", toks(0, 10))
			h.insert(h.seq("a"), 10)
			h.check()
			corrupt(h)
			if err := h.p.CheckIntegrity(); err == nil {
				t.Fatal("CheckIntegrity found nothing")
			}
		})
	}
}
