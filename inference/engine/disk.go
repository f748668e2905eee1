package engine

import (
	"context"
	"sync/atomic"

	"ember/inference/kvcache"
)

// diskTier moves KV blocks between the cache and a BlockStore. Loads run on the
// scheduler goroutine (the prompt needs them now); saves are read from the cache on the
// scheduler goroutine and written by a goroutine of their own, so a slow disk never
// stalls the streams.
type diskTier struct {
	store  BlockStore
	known  map[kvcache.BlockHash]bool // saved or loaded in this process
	saves  chan savedBlock
	done   chan struct{}
	loaded atomic.Int64
	saved  atomic.Int64
}

type savedBlock struct {
	hash kvcache.BlockHash
	data []byte
}

// maxKnown bounds the set of hashes remembered as already on disk.
const maxKnown = 1 << 20

func newDiskTier(st BlockStore) *diskTier {
	d := &diskTier{store: st, known: map[kvcache.BlockHash]bool{}, saves: make(chan savedBlock, 1024), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for b := range d.saves {
			if d.store.Put(uint64(b.hash), b.data) == nil {
				d.saved.Add(1)
			}
		}
	}()
	return d
}

// close waits for the pending saves.
func (d *diskTier) close() {
	if d == nil {
		return
	}
	close(d.saves)
	<-d.done
}

func (d *diskTier) remember(h kvcache.BlockHash) {
	if len(d.known) >= maxKnown {
		clear(d.known)
	}
	d.known[h] = true
}

// extend continues a prefix-cache match (blocks, n positions, with caller references)
// with the blocks of toks found on disk, loading them into newly allocated blocks and
// caching them in the tree. It returns the longer match.
func (s *scheduler) extendFromDisk(toks []int32, blocks []int, n int) ([]int, int) {
	d, bs := s.disk, s.opt.BlockSize
	if d == nil {
		return blocks, n
	}
	hashes := kvcache.ChainHashes(toks, bs)
	var loaded []int
	for i := n / bs; i < len(hashes); i++ {
		data, ok := d.store.Get(uint64(hashes[i]))
		if !ok {
			break
		}
		blk, err := s.pool.Alloc()
		if err != nil {
			break
		}
		if err := s.cache.WriteBlock(blk, data); err != nil {
			_ = s.pool.Free(blk)
			break
		}
		loaded = append(loaded, blk)
		d.remember(hashes[i])
	}
	if len(loaded) == 0 {
		return blocks, n
	}
	all := append(blocks, loaded...)
	cached, _, err := s.pool.Tree().Insert(toks[:len(all)*bs], all)
	if err != nil || cached != len(all) {
		// Should not happen; fall back to what memory held.
		for _, b := range all {
			_ = s.pool.Free(b)
		}
		return s.pool.Tree().Match(toks)
	}
	d.loaded.Add(int64(len(loaded)))
	return all, len(all) * bs
}

// saveToDisk queues the full blocks of q's computed tokens that are not on disk yet.
func (s *scheduler) saveToDisk(q *sequence) {
	d := s.disk
	if d == nil || q.kv == nil {
		return
	}
	bs := s.opt.BlockSize
	full := min(q.computed, q.kv.Len()) / bs
	hashes := kvcache.ChainHashes(q.tokens[:full*bs], bs)
	blocks := q.kv.Blocks()
	for i, h := range hashes {
		if d.known[h] {
			continue
		}
		data, err := s.cache.ReadBlock(context.Background(), blocks[i])
		if err != nil {
			return
		}
		select {
		case d.saves <- savedBlock{h, data}:
			d.remember(h)
		default:
			return // the writer is behind: skip rather than stall the streams
		}
	}
}
