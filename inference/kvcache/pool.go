// Package kvcache decides which KV-cache block holds which token positions. It is pure
// integer bookkeeping: the K and V tensors live in backend memory as a pool of NumBlocks
// blocks of BlockSize token positions each, and this package hands out block ids, counts
// who holds each block, keeps one block table per sequence and caches full blocks in a
// radix prefix tree (SGLang's RadixAttention at block granularity) that is evicted LRU
// when memory runs short.
//
// # Holders and reference counts
//
// Every block is, at any time, exactly one of:
//   - free: on the pool's free list, reference count 0;
//   - active: held by at least one holder other than the tree, and maybe cached too;
//   - evictable: cached in the tree and held by nothing else (reference count 1).
//
// A block's reference count is the number of its holders: one per Seq whose block table
// lists it, one per caller reference (from Pool.Alloc or Tree.Match, dropped with
// Pool.Free or handed to Pool.NewSeq), and one if the tree caches it. A cached block
// holds the K/V of full, immutable positions; only a sequence's partially filled last
// block is ever written, and that block always has reference count 1 (Fork and Truncate
// copy it first when it would be shared, and report the copy for the engine to do).
//
// Holders of cached blocks hold whole paths from the root: a cached block is never held
// without its parent. Sequences keep this by construction (a table starts with the
// matched path, and InsertSeq swaps a duplicate in every fork sharing it); a caller
// holding raw references from Match or Insert frees them together. Under that contract
// every evictable block can be evicted, leaf first, and an operation that fails with
// ErrOutOfBlocks changes nothing at all.
//
// # Use by the engine
//
//	blocks, n := tree.Match(prompt[:len(prompt)-1]) // keep one position to compute
//	seq, _ := pool.NewSeq(blocks)                   // seq.Len() == n
//	err := seq.Append(len(prompt) - n)              // ErrOutOfBlocks: wait or preempt
//	// forward: write K/V of positions n.. at seq.Slot(pos); attention reads seq.Blocks()
//	tree.InsertSeq(prompt, seq)                     // after prefill; again when finished
//	seq.Release()                                   // its cached blocks become evictable
//
// Fork (parallel sampling) and Truncate (rejected speculative tokens, edited turns)
// return the block copies the engine must perform before it writes.
//
// # Concurrency
//
// A Pool, its Tree and its Seqs are not safe for concurrent use: the engine's scheduler
// goroutine owns them. CheckIntegrity verifies every invariant above; tests call it
// after every step.
package kvcache

import (
	"errors"
	"fmt"
)

// ErrOutOfBlocks is returned when an operation needs more blocks than are free plus
// evictable from the prefix tree. The operation then changes nothing.
var ErrOutOfBlocks = errors.New("kvcache: out of blocks")

var errReleased = errors.New("kvcache: sequence already released")

// Pool allocates the blocks of one KV cache and owns its prefix tree. Block ids are
// 0..NumBlocks()-1 and index the backend's K/V block arrays.
type Pool struct {
	blockSize int
	// ref[b] is the number of holders of block b (see the package doc); 0 iff b is free.
	ref []int32
	// loose[b] is the number of caller references to b outside any Seq and the tree:
	// taken by Alloc and Match, dropped by Free and NewSeq.
	loose []int32
	// free holds every block with ref 0 exactly once, used as a stack: the last is
	// taken first.
	free []int
	// seqs are the live (not released) sequences of this pool.
	seqs map[*Seq]struct{}
	tree Tree
}

// NewPool returns a pool of numBlocks free blocks of blockSize token positions each.
func NewPool(numBlocks, blockSize int) (*Pool, error) {
	if numBlocks < 1 || blockSize < 1 {
		return nil, fmt.Errorf("kvcache: pool of %d blocks of %d positions: both must be positive", numBlocks, blockSize)
	}
	p := &Pool{
		blockSize: blockSize,
		ref:       make([]int32, numBlocks),
		loose:     make([]int32, numBlocks),
		free:      make([]int, numBlocks),
		seqs:      make(map[*Seq]struct{}),
	}
	for i := range p.free {
		p.free[i] = numBlocks - 1 - i // block 0 is taken first
	}
	p.tree.init(p)
	return p, nil
}

// BlockSize returns the number of token positions per block.
func (p *Pool) BlockSize() int { return p.blockSize }

// NumBlocks returns the number of blocks in the pool.
func (p *Pool) NumBlocks() int { return len(p.ref) }

// NumFree returns the number of blocks on the free list. Evictable cached blocks are
// not free; see Stats.
func (p *Pool) NumFree() int { return len(p.free) }

// NumUsed returns NumBlocks() - NumFree(): blocks held by sequences, callers or the tree.
func (p *Pool) NumUsed() int { return len(p.ref) - len(p.free) }

// Ref returns the reference count of block b (0 if b is free or out of range).
func (p *Pool) Ref(b int) int {
	if b < 0 || b >= len(p.ref) {
		return 0
	}
	return int(p.ref[b])
}

// Tree returns the pool's prefix tree.
func (p *Pool) Tree() *Tree { return &p.tree }

// Alloc takes one block, evicting the least recently used cached block if none is
// free, and returns it with reference count 1 held by the caller, who must Free it or
// hand it to NewSeq. It returns ErrOutOfBlocks if nothing is free or evictable.
func (p *Pool) Alloc() (int, error) {
	if err := p.reserve(1); err != nil {
		return -1, err
	}
	b := p.take()
	p.loose[b]++
	return b, nil
}

// Free drops one caller reference to block b, taken by Alloc or Match. The block
// returns to the free list when nothing else holds it.
func (p *Pool) Free(b int) error {
	if b < 0 || b >= len(p.ref) {
		return fmt.Errorf("kvcache: free of block %d: out of range [0,%d)", b, len(p.ref))
	}
	if p.loose[b] == 0 {
		return fmt.Errorf("kvcache: free of block %d: no caller reference is held", b)
	}
	p.loose[b]--
	p.release(b)
	return nil
}

// Stats is a snapshot of the pool for metrics. Free+Active+Evictable == Blocks.
type Stats struct {
	Blocks    int // blocks in the pool
	BlockSize int // token positions per block
	Free      int // blocks on the free list
	Active    int // blocks held by a sequence or a caller reference (maybe also cached)
	Cached    int // blocks in the prefix tree, active or not
	Evictable int // cached blocks held by nothing but the tree
	Sequences int // live sequences

	HitTokens     int64 // tokens Match found cached, summed over calls
	MissTokens    int64 // tokens Match was asked for and did not find
	EvictedBlocks int64 // blocks evicted from the tree, by Evict or to make room
}

// Stats returns current counts and the running totals since NewPool.
func (p *Pool) Stats() Stats {
	t := &p.tree
	return Stats{
		Blocks:        len(p.ref),
		BlockSize:     p.blockSize,
		Free:          len(p.free),
		Active:        len(p.ref) - len(p.free) - t.unlocked,
		Cached:        len(t.nodes),
		Evictable:     t.unlocked,
		Sequences:     len(p.seqs),
		HitTokens:     t.hitTokens,
		MissTokens:    t.missTokens,
		EvictedBlocks: t.evicted,
	}
}

// reserve makes at least k blocks free, evicting least recently used cached blocks as
// needed. If free plus evictable blocks are fewer than k it changes nothing and returns
// ErrOutOfBlocks. (Only a caller that broke the whole-path contract can make eviction
// fall short after the check; then some cached blocks are gone but no holder changed.)
func (p *Pool) reserve(k int) error {
	short := k - len(p.free)
	if short <= 0 {
		return nil
	}
	if short > p.tree.unlocked || p.tree.evict(short) < short {
		return fmt.Errorf("%w: need %d, %d free, %d evictable of %d",
			ErrOutOfBlocks, k, len(p.free), p.tree.unlocked, len(p.ref))
	}
	return nil
}

// canTakeOne reports whether reserve(1) would succeed, counting extra blocks that the
// caller is about to free. It is exact whatever the callers did: one block is
// obtainable iff one is free or the eviction heap is not empty.
func (p *Pool) canTakeOne(extra int) bool {
	return len(p.free)+extra > 0 || len(p.tree.lru) > 0
}

// take pops a free block and gives it reference count 1; reserve must have succeeded.
func (p *Pool) take() int {
	n := len(p.free) - 1
	b := p.free[n]
	p.free = p.free[:n]
	if p.ref[b] != 0 {
		panic(fmt.Sprintf("kvcache: free block %d has reference count %d", b, p.ref[b]))
	}
	p.ref[b] = 1
	return b
}

// retain adds a holder to block b, which must not be free. A cached block that gains a
// holder besides the tree is locked: it leaves the eviction candidates.
func (p *Pool) retain(b int) {
	if p.ref[b] <= 0 {
		panic(fmt.Sprintf("kvcache: retain of free block %d", b))
	}
	p.ref[b]++
	if p.ref[b] == 2 {
		if n := p.tree.byBlock[b]; n != nil {
			p.tree.lock(n)
		}
	}
}

// release drops a holder of block b. At 0 the block is free; a cached block left with
// only the tree's reference is unlocked and stamped with the logical clock, which is
// what orders eviction (least recently released first).
func (p *Pool) release(b int) {
	p.ref[b]--
	switch {
	case p.ref[b] == 0:
		p.free = append(p.free, b)
	case p.ref[b] == 1:
		if n := p.tree.byBlock[b]; n != nil {
			p.tree.unlock(n)
		}
	case p.ref[b] < 0:
		panic(fmt.Sprintf("kvcache: release of free block %d", b))
	}
}
