package tokenizer

import (
	"strings"
	"sync"
)

// bpeVocab is the byte-level BPE data. Tokens and merges are stored GPT-2-encoded in the
// GGUF; here they are keyed by the raw bytes they stand for, so words need no encoding.
// Only tokens whose text decodes (every code point stands for a byte) can come out of a
// merge; the others are reachable only as special tokens, as in llama.cpp.
type bpeVocab struct {
	pre          *pretokenizer
	ignoreMerges bool

	rawToID map[string]int32  // raw bytes -> token id, for decodable token texts
	byteID  [256]int32        // rawToID of each single byte, noToken if absent
	pairs   map[uint64]merged // (left id, right id) -> merge, when both sides are tokens
	// strPairs holds merges with a side that is not a token, keyed by their
	// GPT-2-encoded "left right" text (rarely used).
	strPairs map[string]int32
}

// merged is one merge rule: its rank (line number in tokenizer.ggml.merges, lower first)
// and the token id of its result (noToken when the result is not a token).
type merged struct {
	rank int32
	out  int32
}

func pairKey(l, r int32) uint64 { return uint64(uint32(l))<<32 | uint64(uint32(r)) }

// newBPEVocab builds the lookup tables from the token texts and merges. Duplicate
// merges keep their first rank (std::map::emplace in llama.cpp).
func newBPEVocab(texts []string, toID map[string]int32, merges []string) *bpeVocab {
	b := &bpeVocab{
		rawToID:  make(map[string]int32, len(texts)),
		pairs:    make(map[uint64]merged, len(merges)),
		strPairs: map[string]int32{},
	}
	for id, s := range texts {
		if raw, ok := gpt2Decode(s); ok {
			if _, dup := b.rawToID[string(raw)]; !dup && toID[s] == int32(id) {
				b.rawToID[string(raw)] = int32(id)
			}
		}
	}
	for i := range b.byteID {
		b.byteID[i] = b.id(string([]byte{byte(i)}))
	}
	for rank, m := range merges {
		// llama.cpp splits at the first space after the first byte; no space gives an
		// empty pair, which never matches.
		sp := strings.IndexByte(m[min(1, len(m)):], ' ')
		if sp < 0 {
			continue
		}
		sp += min(1, len(m))
		first, second := m[:sp], m[sp+1:]
		rawF, okF := gpt2Decode(first)
		rawS, okS := gpt2Decode(second)
		if !okF || !okS {
			continue // a side that no word can spell
		}
		l, r := b.id(string(rawF)), b.id(string(rawS))
		if l == noToken || r == noToken {
			if _, dup := b.strPairs[first+" "+second]; !dup {
				b.strPairs[first+" "+second] = int32(rank)
			}
			continue
		}
		k := pairKey(l, r)
		if _, dup := b.pairs[k]; !dup {
			b.pairs[k] = merged{rank: int32(rank), out: b.id(string(rawF) + string(rawS))}
		}
	}
	return b
}

// id returns the token of raw bytes s, or noToken.
func (b *bpeVocab) id(s string) int32 {
	if id, ok := b.rawToID[s]; ok {
		return id
	}
	return noToken
}

// bpeState is the scratch space of one Encode call.
type bpeState struct {
	t    *Tokenizer
	cps  []rune
	segs []int
	tmp  []int
	syms []symbol
	ids  []int32 // token id of each symbol, noToken when its bytes are not a token
	// mergeShort: rank and result of the pair each symbol starts
	ranks, outs []int32
	q           bigramQueue
}

var bpeStates sync.Pool

func (t *Tokenizer) newBPEState() *bpeState {
	if s, ok := bpeStates.Get().(*bpeState); ok {
		s.t = t
		return s
	}
	return &bpeState{t: t}
}

func (t *Tokenizer) freeBPEState(s *bpeState) {
	if cap(s.cps) > 1<<20 {
		return // do not pin large buffers
	}
	s.t = nil
	bpeStates.Put(s)
}

// encode appends the tokens of one text fragment: decode it to code points (invalid
// UTF-8 becomes U+FFFD), split it into words with the pre-tokenizer, and BPE each word.
func (s *bpeState) encode(out []int32, frag string) []int32 {
	b := s.t.bpe
	var text string
	s.cps, text = toCpts(frag, s.cps)
	if c := len(s.cps)/2 + 16; cap(s.segs) < c {
		s.segs, s.tmp = make([]int, 0, c), make([]int, 0, c)
	}
	s.segs, s.tmp = b.pre.split(s.cps, s.segs, s.tmp)
	pos, ci := 0, 0
	for _, n := range s.segs {
		bl := 0
		for _, r := range s.cps[ci : ci+n] {
			bl += cptLen(r)
		}
		out = s.word(out, text[pos:pos+bl])
		pos += bl
		ci += n
	}
	return out
}

// word appends the tokens of one pre-tokenized word, as llama.cpp's
// llm_tokenizer_bpe_session: start from one symbol per byte; queue each adjacent pair
// that is a merge rule, by rank; repeatedly apply the best (lowest rank, then leftmost),
// skipping pairs whose symbols changed since they were queued, and queue the pairs the
// merged symbol forms with its neighbours. Each final symbol becomes its token; one that
// is not a token falls back to the single-byte tokens of its encoded text.
func (s *bpeState) word(out []int32, w string) []int32 {
	b := s.t.bpe
	if b.ignoreMerges {
		if id, ok := b.rawToID[w]; ok {
			return append(out, id)
		}
	}
	if len(w) == 1 {
		return s.emit(out, w, b.byteID[w[0]])
	}
	s.syms, s.ids = s.syms[:0], s.ids[:0]
	for i := 0; i < len(w); i++ {
		s.syms = append(s.syms, symbol{start: int32(i), n: 1, prev: int32(i) - 1, next: int32(i) + 1})
		s.ids = append(s.ids, b.byteID[w[i]])
	}
	s.syms[len(w)-1].next = -1
	if len(w) <= shortWord {
		s.mergeShort(w)
	} else {
		s.mergeHeap(w)
	}
	for i := int32(0); i != -1; i = s.syms[i].next {
		sym := s.syms[i]
		out = s.emit(out, w[sym.start:sym.start+sym.n], s.ids[i])
	}
	return out
}

// shortWord is the longest word (in bytes) merged by scanning instead of with a heap.
const shortWord = 32

// mergeHeap applies merges with a priority queue of candidate pairs (llama.cpp's way).
func (s *bpeState) mergeHeap(w string) {
	s.q = s.q[:0]
	for i := int32(1); i < int32(len(w)); i++ {
		s.tryAdd(w, i-1, i)
	}
	for len(s.q) > 0 {
		g := s.q.pop()
		l, r := &s.syms[g.left], &s.syms[g.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != g.size {
			continue // stale
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if l.next >= 0 {
			s.syms[l.next].prev = g.left
		}
		s.ids[g.left] = g.out
		s.tryAdd(w, l.prev, g.left)
		s.tryAdd(w, g.left, l.next)
	}
}

// mergeShort applies the same merges in the same order as mergeHeap, for short words:
// each live symbol keeps the rank of the pair it starts, and each step scans for the
// lowest rank, leftmost first.
func (s *bpeState) mergeShort(w string) {
	s.ranks, s.outs = s.ranks[:0], s.outs[:0]
	for i := range s.syms {
		r, o := s.lookup(w, int32(i), s.syms[i].next)
		s.ranks, s.outs = append(s.ranks, r), append(s.outs, o)
	}
	for {
		best, bestRank := int32(-1), int32(noRank)
		for i := int32(0); i != -1; i = s.syms[i].next {
			if s.ranks[i] < bestRank {
				best, bestRank = i, s.ranks[i]
			}
		}
		if best < 0 {
			return
		}
		l := &s.syms[best]
		r := &s.syms[l.next]
		l.n += r.n
		r.n = 0
		l.next = r.next
		if l.next >= 0 {
			s.syms[l.next].prev = best
		}
		s.ids[best] = s.outs[best]
		s.ranks[best], s.outs[best] = s.lookup(w, best, l.next)
		if p := l.prev; p >= 0 {
			s.ranks[p], s.outs[p] = s.lookup(w, p, best)
		}
	}
}

// noRank marks a pair that is no merge rule.
const noRank = 1<<31 - 1

// lookup returns the rank and result token of merging symbols l and r, or noRank.
func (s *bpeState) lookup(w string, l, r int32) (rank, out int32) {
	if l < 0 || r < 0 {
		return noRank, noToken
	}
	b := s.t.bpe
	if il, ir := s.ids[l], s.ids[r]; il != noToken && ir != noToken {
		if m, ok := b.pairs[pairKey(il, ir)]; ok {
			return m.rank, m.out
		}
		return noRank, noToken
	}
	if len(b.strPairs) == 0 {
		return noRank, noToken
	}
	L, R := s.syms[l], s.syms[r]
	key := gpt2Encode([]byte(w[L.start:L.start+L.n])) + " " + gpt2Encode([]byte(w[R.start:R.start+R.n]))
	if k, ok := b.strPairs[key]; ok {
		return k, b.id(w[L.start : R.start+R.n])
	}
	return noRank, noToken
}

// tryAdd queues the pair (l, r) when it is a merge rule.
func (s *bpeState) tryAdd(w string, l, r int32) {
	if l < 0 || r < 0 {
		return
	}
	rank, out := s.lookup(w, l, r)
	if rank == noRank {
		return
	}
	s.q.push(bigram{prio: -float32(rank), left: l, right: r, size: s.syms[l].n + s.syms[r].n, out: out})
}

// emit appends token id for the bytes raw, or when id is noToken, the token of each
// single byte of raw's GPT-2 encoding that is a token (llama.cpp's fallback).
func (s *bpeState) emit(out []int32, raw string, id int32) []int32 {
	if id != noToken {
		return append(out, id)
	}
	enc := gpt2Encode([]byte(raw))
	for i := 0; i < len(enc); i++ {
		if id, ok := s.t.toID[enc[i:i+1]]; ok {
			out = append(out, id)
		}
	}
	return out
}
