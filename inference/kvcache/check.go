package kvcache

import (
	"errors"
	"fmt"
)

// CheckIntegrity verifies every invariant of the pool, its sequences and its tree, and
// returns an error listing the first violations found (nil if none):
//   - each block's reference count equals its holders: the sequences listing it, the
//     caller references (Alloc/Match), and 1 if cached; so every block is exactly one of
//     free, active, or evictable;
//   - the free list holds exactly the blocks with count 0, each once;
//   - each sequence's table has ceil(Len/BlockSize) distinct blocks, a partially
//     filled last block has reference count 1, and its cached blocks form a path from
//     the root (block j's node is the child of block j-1's);
//   - each tree node sits under its chain hash, which HashBlock of its parent's hash and
//     its BlockSize tokens reproduces; parents are cached, child counts are right, and
//     byBlock maps each cached block to its node and nothing else;
//   - the LRU heap holds exactly the unlocked leaves, with consistent indices, in heap
//     order; the unlocked count and stamps (<= clock) agree.
//
// It costs O(blocks + positions of live sequences) and is meant for tests.
func (p *Pool) CheckIntegrity() error {
	var errs []error
	bad := func(format string, args ...any) {
		if len(errs) < 10 {
			errs = append(errs, fmt.Errorf("kvcache: integrity: "+format, args...))
		}
	}
	t := &p.tree
	nb, bs := len(p.ref), p.blockSize
	if len(p.loose) != nb || len(t.byBlock) != nb {
		return fmt.Errorf("kvcache: integrity: per-block slices have lengths %d, %d, %d", nb, len(p.loose), len(t.byBlock))
	}

	// Holders from sequences.
	holders := make([]int32, nb)
	seen := make([]*Seq, nb) // last sequence seen holding each block, to find duplicates
	for s := range p.seqs {
		if s.released || s.p != p {
			bad("released or foreign sequence %p is registered", s)
			continue
		}
		if want := (s.n + bs - 1) / bs; len(s.blocks) != want || s.n < 0 {
			bad("sequence %p has %d positions in %d blocks, want %d blocks", s, s.n, len(s.blocks), want)
		}
		for _, b := range s.blocks {
			if b < 0 || b >= nb {
				bad("sequence %p lists block %d out of range", s, b)
				continue
			}
			if seen[b] == s {
				bad("sequence %p lists block %d twice", s, b)
			}
			seen[b] = s
			holders[b]++
		}
		// Cached blocks of a sequence form a path from the root: blocks[j] cached means
		// its node is the child of blocks[j-1]'s node (of the root for j == 0).
		parent := &t.root
		for j, b := range s.blocks {
			c := (*node)(nil)
			if b >= 0 && b < nb {
				c = t.byBlock[b]
			}
			if c != nil && c.parent != parent {
				bad("sequence %p: cached block %d at index %d is not the child of its block %d", s, b, j, j-1)
			}
			parent = c
			if parent == nil {
				parent = &node{} // nothing below an uncached block may be cached
			}
		}
		if s.n%bs != 0 && len(s.blocks) > 0 {
			if last := s.blocks[len(s.blocks)-1]; last >= 0 && last < nb && p.ref[last] != 1 {
				bad("sequence %p: partially filled last block %d has reference count %d, want 1", s, last, p.ref[last])
			}
		}
	}

	// Reference counts against holders.
	for b := range nb {
		want := holders[b] + p.loose[b]
		if t.byBlock[b] != nil {
			want++
		}
		if p.loose[b] < 0 || p.ref[b] != want {
			bad("block %d has reference count %d, want %d (sequences %d, caller %d, cached %v)",
				b, p.ref[b], want, holders[b], p.loose[b], t.byBlock[b] != nil)
		}
	}

	// Free list: exactly the blocks with count 0, once each.
	onFree := make([]bool, nb)
	for _, b := range p.free {
		switch {
		case b < 0 || b >= nb:
			bad("free list holds block %d out of range", b)
		case onFree[b]:
			bad("free list holds block %d twice", b)
		default:
			onFree[b] = true
			if p.ref[b] != 0 {
				bad("free block %d has reference count %d", b, p.ref[b])
			}
		}
	}
	for b := range nb {
		if p.ref[b] == 0 && !onFree[b] {
			bad("block %d has reference count 0 but is not on the free list", b)
		}
	}

	t.checkTree(bad)
	return errors.Join(errs...)
}

// checkTree verifies the tree's links, hashes, block map and LRU heap.
func (t *Tree) checkTree(bad func(string, ...any)) {
	p := t.p
	nb := len(p.ref)
	children := map[*node]int{&t.root: 0}
	unlocked, evictable := 0, 0
	for h, c := range t.nodes {
		if c.hash != h {
			bad("node of block %d is keyed %#x but has hash %#x", c.block, h, c.hash)
		}
		if c.block < 0 || c.block >= nb || t.byBlock[c.block] != c {
			bad("node %#x: block %d does not map back to it", h, c.block)
			continue
		}
		if len(c.tokens) != p.blockSize {
			bad("node of block %d has %d tokens, want %d", c.block, len(c.tokens), p.blockSize)
		}
		if c.parent == nil || (c.parent != &t.root && t.nodes[c.parent.hash] != c.parent) {
			bad("node of block %d has a parent that is not in the tree", c.block)
		} else {
			if got, _ := t.hash(nil, c.parent.hash, c.tokens); got != h {
				bad("node of block %d: hash %#x, recomputed %#x", c.block, h, got)
			}
			children[c.parent]++
		}
		if c.stamp > t.clock {
			bad("node of block %d has stamp %d after the clock %d", c.block, c.stamp, t.clock)
		}
		if p.ref[c.block] == 1 {
			unlocked++
		}
	}
	for b, c := range t.byBlock {
		if c != nil && (c.block != b || t.nodes[c.hash] != c) {
			bad("block %d maps to a node that is not in the tree under it", b)
		}
	}
	if t.root.children != children[&t.root] {
		bad("root counts %d children, has %d", t.root.children, children[&t.root])
	}
	for _, c := range t.nodes {
		if c.children != children[c] {
			bad("node of block %d counts %d children, has %d", c.block, c.children, children[c])
		}
		if t.evictable(c) {
			evictable++
			if c.heapIdx < 0 || c.heapIdx >= len(t.lru) || t.lru[c.heapIdx] != c {
				bad("unlocked leaf of block %d is not in the LRU heap", c.block)
			}
		}
	}
	if unlocked != t.unlocked {
		bad("unlocked count %d, counted %d", t.unlocked, unlocked)
	}
	if evictable != len(t.lru) {
		bad("LRU heap has %d nodes, %d are unlocked leaves", len(t.lru), evictable)
	}
	for i, c := range t.lru {
		if c.heapIdx != i {
			bad("LRU heap slot %d holds a node that records index %d", i, c.heapIdx)
		}
		if t.nodes[c.hash] != c || !t.evictable(c) {
			bad("LRU heap slot %d holds a node that is not an unlocked leaf in the tree", i)
		}
		if i > 0 && t.lru.Less(i, (i-1)/2) {
			bad("LRU heap order broken at slot %d", i)
		}
	}
}
