package kvcache

import (
	"container/heap"
	"fmt"
	"slices"
)

// Tree is the radix prefix cache at block granularity: each node is one full block of
// BlockSize token ids, a child of the node for the block before it, and maps that token
// prefix to the cache block that holds its K/V. Nodes are found by their chain hash
// (HashBlock of the parent's hash and the block's tokens); the node keeps its tokens and
// parent so that a hash collision is a miss, never a wrong block. Sequences that diverge
// inside a chain simply become sibling children.
//
// The tree holds one reference to each block it caches. A node whose block has no other
// holder is unlocked; unlocked leaves are the eviction candidates, least recently
// released first by a logical clock. A Tree belongs to its Pool (see Pool.Tree) and is
// used from the same goroutine.
type Tree struct {
	p     *Pool
	root  node                // sentinel for the empty prefix: hash 0, no block, never evicted
	nodes map[BlockHash]*node // every cached node by its chain hash
	// byBlock[b] is the node caching block b, or nil.
	byBlock []*node
	// lru holds exactly the unlocked leaves, ordered by (stamp, block).
	lru lruHeap
	// unlocked counts nodes whose block has reference count 1 (the tree's own).
	unlocked int
	// clock ticks once each time a cached block loses its last holder besides the tree.
	clock uint64
	// hash is HashBlock; tests swap it to force collisions.
	hash func(buf []byte, parent BlockHash, block []int32) (BlockHash, []byte)
	buf  []byte // scratch for hash

	hitTokens, missTokens, evicted int64
}

// node is one cached block.
type node struct {
	hash     BlockHash
	parent   *node   // &Tree.root for the first block of a prefix
	tokens   []int32 // the block's token ids, len BlockSize; owned, immutable
	block    int     // cache block id; -1 for the root
	children int     // number of nodes whose parent is this one
	stamp    uint64  // clock value when the block last became held by the tree alone
	heapIdx  int     // index in Tree.lru, -1 if not there
}

func (t *Tree) init(p *Pool) {
	t.p = p
	t.root = node{block: -1, heapIdx: -1}
	t.nodes = make(map[BlockHash]*node)
	t.byBlock = make([]*node, len(p.ref))
	t.hash = hashBlock
}

// Len returns the number of cached blocks.
func (t *Tree) Len() int { return len(t.nodes) }

// child returns the node for block blk after parent, or nil (a miss, or a collision).
func (t *Tree) child(parent *node, blk []int32) (*node, BlockHash) {
	var h BlockHash
	h, t.buf = t.hash(t.buf, parent.hash, blk)
	c := t.nodes[h]
	if c == nil || c.parent != parent || !slices.Equal(c.tokens, blk) {
		return nil, h
	}
	return c, h
}

// Match finds the longest prefix of tokens cached in whole blocks: n is a multiple of
// BlockSize and blocks[i] holds positions [i*BlockSize, (i+1)*BlockSize). The caller
// gets one reference to each returned block, which locks the path against eviction,
// and must hand them to NewSeq or drop them with Pool.Free. The engine matches at most
// len(prompt)-1 tokens so that at least one position is computed for the logits.
// Hits and misses (n and len(tokens)-n) are added to Stats.
func (t *Tree) Match(tokens []int32) (blocks []int, n int) {
	bs := t.p.blockSize
	blocks = make([]int, 0, len(tokens)/bs)
	cur := &t.root
	for i := 0; i+bs <= len(tokens); i += bs {
		c, _ := t.child(cur, tokens[i:i+bs])
		if c == nil {
			break
		}
		blocks = append(blocks, c.block)
		cur = c
	}
	for _, b := range blocks {
		t.p.retain(b)
		t.p.loose[b]++
	}
	n = len(blocks) * bs
	t.hitTokens += int64(n)
	t.missTokens += int64(len(tokens) - n)
	return blocks, n
}

// Insert caches the full blocks of tokens: blocks[i] holds the K/V of positions
// [i*BlockSize, (i+1)*BlockSize) and the caller holds a reference to each (from Alloc
// or Match; blocks of a Seq go through InsertSeq). A block whose prefix is not cached
// yet is added (the tree takes its own reference); one whose prefix is already cached
// under another block is a duplicate: the caller's reference to it is dropped and
// blocks[i] is replaced, in place, by the cached block, to which the caller now holds a
// reference instead. A trailing partial block is ignored. The caller must keep holding
// whole paths: free the returned blocks all together or hand them to NewSeq.
//
// It returns how many leading blocks of tokens are now cached along this chain
// (len(tokens)/BlockSize unless a 64-bit hash collision stopped the walk) and how many
// of them it added: blocks[cached-added : cached] are new. An error (a block not held
// by the caller, or already cached for other tokens) stops the walk; the blocks before
// it were processed.
func (t *Tree) Insert(tokens []int32, blocks []int) (cached, added int, err error) {
	k := len(tokens) / t.p.blockSize
	if len(blocks) < k {
		return 0, 0, fmt.Errorf("kvcache: insert of %d tokens: %d blocks given, %d needed", len(tokens), len(blocks), k)
	}
	for _, b := range blocks[:k] {
		if b < 0 || b >= len(t.p.ref) || t.p.loose[b] == 0 {
			return 0, 0, fmt.Errorf("kvcache: insert: no caller reference to block %d", b)
		}
	}
	if sorted := slices.Sorted(slices.Values(blocks[:k])); len(slices.Compact(sorted)) != k {
		return 0, 0, fmt.Errorf("kvcache: insert: a block appears twice")
	}
	return t.insert(tokens[:k*t.p.blockSize], blocks[:k], true)
}

// InsertSeq caches the full blocks of s's first len(tokens) positions, whose token ids
// are tokens (len(tokens) <= s.Len()), as Insert does. A duplicate is swapped for the
// cached block, which holds the same K/V, in s's block table and in that of every
// sequence sharing the duplicate (forks of s): so every sequence keeps holding whole
// cached paths from the root, which is what makes eviction accounting exact. Call it
// once the K/V of those positions is written: after prefill, and when s finishes.
func (t *Tree) InsertSeq(tokens []int32, s *Seq) (cached, added int, err error) {
	if s.released || s.p != t.p {
		return 0, 0, fmt.Errorf("kvcache: insert of a sequence released or of another pool")
	}
	if len(tokens) > s.n {
		return 0, 0, fmt.Errorf("kvcache: insert of %d tokens: sequence has %d positions", len(tokens), s.n)
	}
	k := len(tokens) / t.p.blockSize
	return t.insert(tokens[:k*t.p.blockSize], s.blocks[:k], false)
}

// insert walks the chain of tokens (whole blocks only) from the root. blocks[i] is held
// by the caller: as a loose reference if loose, else as a Seq's table entry.
func (t *Tree) insert(tokens []int32, blocks []int, loose bool) (cached, added int, err error) {
	p, bs := t.p, t.p.blockSize
	cur := &t.root
	for i, b := range blocks {
		blk := tokens[i*bs : (i+1)*bs]
		c, h := t.child(cur, blk)
		switch {
		case c == nil && t.nodes[h] != nil:
			return cached, added, nil // hash collision: leave the rest uncached
		case c != nil && c.block == b:
			// already cached: nothing to do
		case t.byBlock[b] != nil:
			return cached, added, fmt.Errorf("kvcache: insert: block %d is already cached for other tokens", b)
		case c == nil:
			c = &node{hash: h, parent: cur, tokens: slices.Clone(blk), block: b, heapIdx: -1}
			t.nodes[h] = c
			cur.children++
			t.update(cur) // a no-op while the caller holds cur's block, as it does
			p.retain(b)   // the tree's reference; the caller's makes it locked
			t.byBlock[b] = c
			added++
		case loose: // duplicate of a cached block: the caller's references switch to it
			p.retain(c.block)
			p.release(b)
			p.loose[c.block]++
			p.loose[b]--
			blocks[i] = c.block
		default: // duplicate: every sequence sharing it (forks) switches, blocks too
			for s := range p.seqs {
				if i < len(s.blocks) && s.blocks[i] == b {
					p.retain(c.block)
					p.release(b)
					s.blocks[i] = c.block
				}
			}
		}
		cached++
		cur = c
	}
	return cached, added, nil
}

// Evict frees up to n cached blocks that nothing but the tree holds, leaves first,
// least recently released first, and returns how many it freed. A parent whose last
// child goes becomes a leaf and a candidate in turn.
func (t *Tree) Evict(n int) int { return t.evict(n) }

func (t *Tree) evict(n int) int {
	done := 0
	for done < n && len(t.lru) > 0 {
		c := t.lru[0]
		t.remove(c)
		done++
	}
	t.evicted += int64(done)
	return done
}

// remove drops unlocked leaf c from the tree and frees its block.
func (t *Tree) remove(c *node) {
	heap.Remove(&t.lru, c.heapIdx)
	t.unlocked--
	delete(t.nodes, c.hash)
	t.byBlock[c.block] = nil
	c.parent.children--
	t.update(c.parent)
	t.p.release(c.block) // reference count 1 -> 0: free
}

// lock is called when cached node c gains a holder besides the tree.
func (t *Tree) lock(c *node) {
	t.unlocked--
	t.update(c)
}

// unlock is called when cached node c is left held by the tree alone.
func (t *Tree) unlock(c *node) {
	t.clock++
	c.stamp = t.clock
	t.unlocked++
	t.update(c)
}

// evictable reports whether c belongs in the LRU heap: an unlocked leaf.
func (t *Tree) evictable(c *node) bool {
	return c != &t.root && c.children == 0 && t.p.ref[c.block] == 1
}

// update puts c in the LRU heap or takes it out, as evictable(c) says.
func (t *Tree) update(c *node) {
	switch in := c.heapIdx >= 0; {
	case t.evictable(c) && !in:
		heap.Push(&t.lru, c)
	case !t.evictable(c) && in:
		heap.Remove(&t.lru, c.heapIdx)
	}
}

// lruHeap is a min-heap of nodes by (stamp, block); each node records its index.
type lruHeap []*node

func (h lruHeap) Len() int { return len(h) }
func (h lruHeap) Less(i, j int) bool {
	if h[i].stamp != h[j].stamp {
		return h[i].stamp < h[j].stamp
	}
	return h[i].block < h[j].block
}
func (h lruHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *lruHeap) Push(x any) {
	c := x.(*node)
	c.heapIdx = len(*h)
	*h = append(*h, c)
}
func (h *lruHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	c.heapIdx = -1
	*h = old[:len(old)-1]
	return c
}
