package kvcache

import (
	"encoding/binary"
	"strings"
	"testing"
)

// model is the naive specification the randomized test compares the Pool against.
// Blocks are model ids (mb) with no free list, no reference counts and no tree: who
// holds a block, what is free, evictable or a leaf is recomputed by scanning plain
// slices and a map keyed by the token prefix itself (no hashing).
type model struct {
	nblocks, bs int
	seqs        []mseq             // parallel to harness.seqs
	raw         []int              // parallel to harness.raw
	cache       map[string]*mentry // token prefix through the end of the block -> entry
	clock       uint64             // ticks when a cached block loses its last holder
	next        int                // next model block id
	real        map[int]int        // model id -> Pool block id, for live model blocks

	hits, misses, evicted int64
}

type mseq struct {
	mbs []int // model block per table entry
	n   int   // positions
}

type mentry struct {
	mb    int
	stamp uint64  // clock when last left held by the cache alone
	toks  []int32 // the whole prefix, len a multiple of bs
}

func newModel(nblocks, bs int) *model {
	return &model{nblocks: nblocks, bs: bs, cache: map[string]*mentry{}, real: map[int]int{}}
}

func key(toks []int32) string {
	b := make([]byte, 0, 4*len(toks))
	for _, t := range toks {
		b = binary.LittleEndian.AppendUint32(b, uint32(t))
	}
	return string(b)
}

// held reports whether a sequence or a caller reference holds mb.
func (m *model) held(mb int) bool {
	for _, s := range m.seqs {
		for _, x := range s.mbs {
			if x == mb {
				return true
			}
		}
	}
	for _, x := range m.raw {
		if x == mb {
			return true
		}
	}
	return false
}

func (m *model) entryOf(mb int) *mentry {
	for _, e := range m.cache {
		if e.mb == mb {
			return e
		}
	}
	return nil
}

func (m *model) live() map[int]bool {
	live := map[int]bool{}
	for _, s := range m.seqs {
		for _, x := range s.mbs {
			live[x] = true
		}
	}
	for _, x := range m.raw {
		live[x] = true
	}
	for _, e := range m.cache {
		live[e.mb] = true
	}
	return live
}

func (m *model) free() int { return m.nblocks - len(m.live()) }

func (m *model) evictable() int {
	n := 0
	for _, e := range m.cache {
		if !m.held(e.mb) {
			n++
		}
	}
	return n
}

func (m *model) isLeaf(e *mentry) bool {
	k := key(e.toks)
	for _, c := range m.cache {
		if len(c.toks) == len(e.toks)+m.bs && strings.HasPrefix(key(c.toks), k) {
			return false
		}
	}
	return true
}

// evictOne drops the unheld leaf released longest ago.
func (m *model) evictOne() bool {
	var victim *mentry
	for _, e := range m.cache {
		if !m.held(e.mb) && m.isLeaf(e) && (victim == nil || e.stamp < victim.stamp) {
			victim = e
		}
	}
	if victim == nil {
		return false
	}
	delete(m.cache, key(victim.toks))
	m.evicted++
	return true
}

func (m *model) evict(n int) int {
	done := 0
	for done < n && m.evictOne() {
		done++
	}
	return done
}

// reserve: k blocks are available if free plus evictable suffice; then it evicts.
func (m *model) reserve(k int) bool {
	short := k - m.free()
	if short <= 0 {
		return true
	}
	if short > m.evictable() {
		return false
	}
	if m.evict(short) != short {
		panic("model: evictable blocks could not be evicted")
	}
	return true
}

func (m *model) newMB() int { m.next++; return m.next }

// released is called after a holder dropped mb: a cached block left to the cache
// alone is stamped.
func (m *model) released(mb int) {
	if e := m.entryOf(mb); e != nil && !m.held(mb) {
		m.clock++
		e.stamp = m.clock
	}
}

func (m *model) match(prompt []int32) []int {
	var mbs []int
	for i := m.bs; i <= len(prompt); i += m.bs {
		e := m.cache[key(prompt[:i])]
		if e == nil {
			break
		}
		mbs = append(mbs, e.mb)
	}
	n := len(mbs) * m.bs
	m.hits += int64(n)
	m.misses += int64(len(prompt) - n)
	return mbs
}

func (m *model) append(i, k int) bool {
	s := &m.seqs[i]
	need := (s.n+k+m.bs-1)/m.bs - len(s.mbs)
	if !m.reserve(need) {
		return false
	}
	for range need {
		s.mbs = append(s.mbs, m.newMB())
	}
	s.n += k
	return true
}

func (m *model) fork(i int) bool {
	s := m.seqs[i]
	rows := s.n % m.bs
	if rows != 0 && !m.reserve(1) {
		return false
	}
	c := mseq{mbs: append([]int(nil), s.mbs...), n: s.n}
	if rows != 0 {
		c.mbs[len(c.mbs)-1] = m.newMB()
	}
	m.seqs = append(m.seqs, c)
	return true
}

// holders counts all holders of mb, the cache included.
func (m *model) holders(mb int) int {
	n := 0
	for _, s := range m.seqs {
		for _, x := range s.mbs {
			if x == mb {
				n++
			}
		}
	}
	for _, x := range m.raw {
		if x == mb {
			n++
		}
	}
	if m.entryOf(mb) != nil {
		n++
	}
	return n
}

func (m *model) truncate(i, n int) bool {
	s := &m.seqs[i]
	keep, rows := (n+m.bs-1)/m.bs, n%m.bs
	cow := rows != 0 && m.holders(s.mbs[keep-1]) > 1
	if cow {
		freed := 0
		for _, mb := range s.mbs[keep:] {
			if m.holders(mb) == 1 {
				freed++
			}
		}
		if m.free()+freed == 0 && m.evictable() == 0 {
			return false
		}
	}
	tail := append([]int(nil), s.mbs[keep:]...)
	s.mbs, s.n = s.mbs[:keep], n
	for _, mb := range tail {
		m.released(mb)
	}
	if cow {
		if !m.reserve(1) {
			panic("model: truncate precheck passed but no block")
		}
		old := s.mbs[keep-1]
		s.mbs[keep-1] = m.newMB()
		m.released(old)
	}
	return true
}

func (m *model) release(i int) {
	mbs := m.seqs[i].mbs
	m.seqs = append(m.seqs[:i], m.seqs[i+1:]...)
	for _, mb := range mbs {
		m.released(mb)
	}
}

// insert caches the full blocks of sequence i for toks, its first positions.
func (m *model) insert(i int, toks []int32) (cached, added int) {
	s := &m.seqs[i]
	for j := 0; (j+1)*m.bs <= len(toks); j++ {
		p := toks[:(j+1)*m.bs]
		if e := m.cache[key(p)]; e != nil {
			// A duplicate is dropped by every sequence sharing it; it was not cached,
			// so nothing is stamped.
			if old := s.mbs[j]; old != e.mb {
				for k := range m.seqs {
					if j < len(m.seqs[k].mbs) && m.seqs[k].mbs[j] == old {
						m.seqs[k].mbs[j] = e.mb
					}
				}
			}
		} else {
			m.cache[key(p)] = &mentry{mb: s.mbs[j], toks: append([]int32(nil), p...)}
			added++
		}
		cached++
	}
	return cached, added
}

// probe is Match followed by freeing each matched block, first to last.
func (m *model) probe(prompt []int32) int {
	mbs := m.match(prompt)
	for _, mb := range mbs {
		m.released(mb)
	}
	return len(mbs) * m.bs
}

func (m *model) alloc() bool {
	if !m.reserve(1) {
		return false
	}
	m.raw = append(m.raw, m.newMB())
	return true
}

func (m *model) freeRaw(i int) {
	mb := m.raw[i]
	m.raw = append(m.raw[:i], m.raw[i+1:]...)
	m.released(mb)
}

// compare checks the Pool in h against the model: counts, the identity of every block
// (model ids and Pool ids must correspond one to one, across steps), tree contents,
// LRU stamps and statistics.
func (m *model) compare(tb testing.TB, h *harness) {
	tb.Helper()
	p, t := h.p, h.tr
	fail := func(format string, args ...any) { tb.Helper(); tb.Fatalf("model mismatch: "+format, args...) }
	if p.NumFree() != m.free() {
		fail("NumFree %d, model %d", p.NumFree(), m.free())
	}
	if t.Len() != len(m.cache) || p.Stats().Evictable != m.evictable() {
		fail("tree caches %d (%d evictable), model %d (%d)", t.Len(), p.Stats().Evictable, len(m.cache), m.evictable())
	}
	st := p.Stats()
	if st.HitTokens != m.hits || st.MissTokens != m.misses || st.EvictedBlocks != m.evicted || t.clock != m.clock {
		fail("stats %+v clock %d, model hits %d misses %d evicted %d clock %d",
			st, t.clock, m.hits, m.misses, m.evicted, m.clock)
	}
	live := m.live()
	for mb := range m.real {
		if !live[mb] {
			delete(m.real, mb)
		}
	}
	owner := map[int]int{} // Pool block -> model id, this step
	bind := func(mb, b int, what string) {
		if r, ok := m.real[mb]; ok && r != b {
			fail("%s: model block %d was Pool block %d, now %d", what, mb, r, b)
		}
		if o, ok := owner[b]; ok && o != mb {
			fail("%s: Pool block %d is both model blocks %d and %d", what, b, o, mb)
		}
		m.real[mb], owner[b] = b, mb
	}
	if len(h.seqs) != len(m.seqs) || len(h.raw) != len(m.raw) {
		fail("%d sequences, %d raw; model %d, %d", len(h.seqs), len(h.raw), len(m.seqs), len(m.raw))
	}
	for i, hs := range h.seqs {
		ms := m.seqs[i]
		blocks := hs.s.Blocks()
		if hs.s.Len() != ms.n || len(blocks) != len(ms.mbs) {
			fail("sequence %s: %d positions in %v, model %d in %v", hs.name, hs.s.Len(), blocks, ms.n, ms.mbs)
		}
		for j, b := range blocks {
			bind(ms.mbs[j], b, "sequence "+hs.name)
		}
	}
	for i, b := range h.raw {
		bind(m.raw[i], b, "alloc")
	}
	for _, e := range m.cache {
		chain := ChainHashes(e.toks, m.bs)
		c := t.nodes[chain[len(chain)-1]]
		if c == nil {
			fail("prefix of %d tokens cached in the model only", len(e.toks))
		}
		bind(e.mb, c.block, "tree")
		if !m.held(e.mb) && c.stamp != e.stamp {
			fail("block %d: stamp %d, model %d", c.block, c.stamp, e.stamp)
		}
	}
}
