package kvcache

import (
	"fmt"
	"slices"
	"testing"
)

// harness drives a Pool the way the engine does, with a shadow K/V memory in place of
// tensors: mem[block][row] is the token id whose K/V the row holds (-1: garbage). It
// writes each appended token through Slot, performs every reported Copy, poisons blocks
// that become free, and check() verifies after each step that every sequence reads its
// own tokens back through its block table, that every cached block holds its node's
// tokens, and that CheckIntegrity passes.
type harness struct {
	tb   testing.TB
	p    *Pool
	tr   *Tree
	mem  [][]int32
	seqs []*hseq // live sequences, in creation order
	raw  []int   // blocks held by loose caller references (Alloc)
}

// hseq is a live sequence and the token ids of its positions.
type hseq struct {
	name string
	s    *Seq
	toks []int32
}

func newHarness(tb testing.TB, numBlocks, blockSize int) *harness {
	tb.Helper()
	p, err := NewPool(numBlocks, blockSize)
	if err != nil {
		tb.Fatal(err)
	}
	h := &harness{tb: tb, p: p, tr: p.Tree(), mem: make([][]int32, numBlocks)}
	for b := range h.mem {
		h.mem[b] = slices.Repeat([]int32{-1}, blockSize)
	}
	return h
}

func (h *harness) seq(name string) *hseq {
	for _, hs := range h.seqs {
		if hs.name == name {
			return hs
		}
	}
	h.tb.Fatalf("no sequence %q", name)
	return nil
}

// newSeq matches prompt against the tree, starts a sequence on the matched blocks and
// appends the rest. The sequence exists even if the append fails (it then holds the
// matched prefix only, as a request waiting for memory would).
func (h *harness) newSeq(name string, prompt []int32) (matched int, err error) {
	blocks, n := h.tr.Match(prompt)
	h.verifyBlocks(blocks, prompt)
	s, err := h.p.NewSeq(blocks)
	if err != nil {
		h.tb.Fatalf("NewSeq(%v): %v", blocks, err)
	}
	hs := &hseq{name: name, s: s, toks: slices.Clone(prompt[:n])}
	h.seqs = append(h.seqs, hs)
	return n, h.append(hs, prompt[n:])
}

// verifyBlocks checks that blocks hold the K/V of toks, block by block.
func (h *harness) verifyBlocks(blocks []int, toks []int32) {
	bs := h.p.BlockSize()
	for i, b := range blocks {
		if want := toks[i*bs : (i+1)*bs]; !slices.Equal(h.mem[b], want) {
			h.tb.Fatalf("block %d holds %v, want %v", b, h.mem[b], want)
		}
	}
}

func (h *harness) append(hs *hseq, toks []int32) error {
	old := hs.s.Len()
	if err := hs.s.Append(len(toks)); err != nil {
		return err
	}
	for i, tok := range toks {
		b, off := hs.s.Slot(old + i)
		h.mem[b][off] = tok
	}
	hs.toks = append(hs.toks, toks...)
	return nil
}

func (h *harness) copies(cps []Copy) {
	for _, c := range cps {
		copy(h.mem[c.Dst][:c.Rows], h.mem[c.Src][:c.Rows])
	}
}

func (h *harness) fork(hs *hseq, name string) ([]Copy, error) {
	c, cps, err := hs.s.Fork()
	if err != nil {
		return nil, err
	}
	bs := h.p.BlockSize()
	if rows := hs.s.Len() % bs; rows == 0 {
		if len(cps) != 0 {
			h.tb.Fatalf("fork at a block boundary reported copies %v", cps)
		}
	} else {
		last := len(c.Blocks()) - 1
		want := Copy{Src: hs.s.Blocks()[last], Dst: c.Blocks()[last], Rows: rows}
		if len(cps) != 1 || cps[0] != want {
			h.tb.Fatalf("fork copies %v, want [%v]", cps, want)
		}
	}
	h.copies(cps)
	h.seqs = append(h.seqs, &hseq{name: name, s: c, toks: slices.Clone(hs.toks)})
	return cps, nil
}

func (h *harness) truncate(hs *hseq, n int) ([]Copy, error) {
	cps, err := hs.s.Truncate(n)
	if err != nil {
		return nil, err
	}
	for _, c := range cps {
		if last := hs.s.Blocks()[len(hs.s.Blocks())-1]; c.Dst != last || c.Rows != n%h.p.BlockSize() {
			h.tb.Fatalf("truncate to %d copies %v; last block %d", n, c, last)
		}
	}
	h.copies(cps)
	hs.toks = hs.toks[:n]
	return cps, nil
}

func (h *harness) release(hs *hseq) {
	hs.s.Release()
	h.seqs = slices.DeleteFunc(h.seqs, func(x *hseq) bool { return x == hs })
}

func (h *harness) insert(hs *hseq, n int) (cached, added int) {
	cached, added, err := h.tr.InsertSeq(hs.toks[:n], hs.s)
	if err != nil {
		h.tb.Fatalf("InsertSeq(%s, %d): %v", hs.name, n, err)
	}
	return cached, added
}

// probe matches prompt and drops the references at once: a request that is looked up
// and then cancelled.
func (h *harness) probe(prompt []int32) int {
	blocks, n := h.tr.Match(prompt)
	h.verifyBlocks(blocks, prompt)
	for _, b := range blocks {
		if err := h.p.Free(b); err != nil {
			h.tb.Fatal(err)
		}
	}
	return n
}

func (h *harness) alloc() error {
	b, err := h.p.Alloc()
	if err == nil {
		h.raw = append(h.raw, b)
	}
	return err
}

func (h *harness) free(i int) {
	if err := h.p.Free(h.raw[i]); err != nil {
		h.tb.Fatal(err)
	}
	h.raw = slices.Delete(h.raw, i, i+1)
}

// check poisons free blocks, then verifies integrity and the K/V every holder reads.
func (h *harness) check() {
	h.tb.Helper()
	for b := range h.mem {
		if h.p.Ref(b) == 0 {
			for i := range h.mem[b] {
				h.mem[b][i] = -1
			}
		}
	}
	if err := h.p.CheckIntegrity(); err != nil {
		h.tb.Fatal(err)
	}
	for _, hs := range h.seqs {
		if hs.s.Len() != len(hs.toks) {
			h.tb.Fatalf("sequence %s has %d positions, want %d", hs.name, hs.s.Len(), len(hs.toks))
		}
		for pos, tok := range hs.toks {
			b, off := hs.s.Slot(pos)
			if h.mem[b][off] != tok {
				h.tb.Fatalf("sequence %s position %d reads %d from block %d row %d, want %d",
					hs.name, pos, h.mem[b][off], b, off, tok)
			}
		}
	}
	for _, c := range h.tr.nodes {
		if !slices.Equal(h.mem[c.block], c.tokens) {
			h.tb.Fatalf("cached block %d holds %v, want %v", c.block, h.mem[c.block], c.tokens)
		}
	}
	st := h.p.Stats()
	if st.Free+st.Active+st.Evictable != st.Blocks || st.Free != h.p.NumFree() ||
		st.Blocks-st.Free != h.p.NumUsed() || st.Sequences != len(h.seqs) {
		h.tb.Fatalf("inconsistent stats %+v", st)
	}
}

// snapshot captures all state, to show that a failed operation changed nothing.
func (h *harness) snapshot() string {
	p, t := h.p, h.tr
	s := fmt.Sprint(p.ref, p.loose, p.free, t.clock, t.unlocked, len(t.nodes), len(t.lru), p.Stats())
	for _, hs := range h.seqs {
		s += fmt.Sprint(hs.s.Len(), hs.s.Blocks())
	}
	for b, c := range t.byBlock {
		if c != nil {
			s += fmt.Sprint(b, c.stamp, c.children, c.heapIdx)
		}
	}
	return s
}

// toks returns the token ids lo, lo+1, ..., hi-1.
func toks(lo, hi int32) []int32 {
	var out []int32
	for t := lo; t < hi; t++ {
		out = append(out, t)
	}
	return out
}

func cat(parts ...[]int32) []int32 { return slices.Concat(parts...) }
