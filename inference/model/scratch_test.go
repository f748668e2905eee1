package model

import (
	"context"
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/ref"
	"ember/inference/quant"
)

// countWrites counts the backend's I32 writes.
type countWrites struct {
	backend.Backend
	n int
}

func (c *countWrites) WriteI32(dst backend.Tensor, src []int32) {
	c.n++
	c.Backend.WriteI32(dst, src)
}

// TestWriteKept: a buffer is written when its values change, when other rows are asked
// for, and after the buffers are made again, and not when the same values come again.
func TestWriteKept(t *testing.T) {
	rb := ref.New()
	be := &countWrites{Backend: rb}
	s := NewScratch(be)
	s.Declare("ids", quant.I32, 2)
	if err := s.Reserve(4); err != nil {
		t.Fatal(err)
	}
	// read looks the ids up in a table whose row i holds i.
	tab := make([]float32, 16)
	for i := range tab {
		tab[i] = float32(i)
	}
	table, err := be.New(quant.F32, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	be.WriteF32(table, tab)
	read := func(x backend.Tensor) []int32 {
		n := x.Rows() * x.Cols()
		ids := backend.Reshaper(rb).Reshape(x, n, 1)
		out, err := be.New(quant.F32, n, 1)
		if err != nil {
			t.Fatal(err)
		}
		be.GetRows(out, table, ids)
		f := make([]float32, n)
		if err := be.ReadF32(context.Background(), out, f); err != nil {
			t.Fatal(err)
		}
		v := make([]int32, n)
		for i := range f {
			v[i] = int32(f[i])
		}
		return v
	}
	steps := []struct {
		n      int
		v      []int32
		writes int
	}{
		{2, []int32{1, 2, 3, 4}, 1},
		{2, []int32{1, 2, 3, 4}, 1},
		{2, []int32{1, 2, 3, 5}, 2},
		{1, []int32{1, 2}, 3},
		{1, []int32{1, 2}, 3},
		{2, []int32{1, 2, 3, 5}, 4},
	}
	for i, st := range steps {
		x := s.WriteKept("ids", st.n, st.v)
		if be.n != st.writes {
			t.Fatalf("step %d: %d writes, want %d", i, be.n, st.writes)
		}
		if got := read(x); !slices.Equal(got, st.v) {
			t.Fatalf("step %d: buffer holds %v, want %v", i, got, st.v)
		}
	}
	if err := s.Reserve(8); err != nil { // made again: the values are gone
		t.Fatal(err)
	}
	s.WriteKept("ids", 2, []int32{1, 2, 3, 5})
	if be.n != 5 {
		t.Fatalf("after the buffers were made again: %d writes, want 5", be.n)
	}
}

// TestInputsTableKept: a paged batch's block tables are written when they change (a
// sequence's new block, another sequence count) and not for a decode step whose tables
// are the last step's; the device tables hold the batch's either way.
func TestInputsTableKept(t *testing.T) {
	rb := ref.New()
	be := &countWrites{Backend: rb}
	p := Params{NVocab: 16, NEmbd: 8, NLayer: 1, NHead: 1, NKVHead: 1, HeadDim: 8, VHeadDim: 8, NFF: 8}
	c, err := NewPagedCache(be, p, 8, 4, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	s := NewScratch(be)
	DeclareScratch(s, p)
	// read looks the tables' entries up in col, whose row k holds k.
	col, err := be.New(quant.F32, 16, 1)
	if err != nil {
		t.Fatal(err)
	}
	iota := make([]float32, 16)
	for k := range iota {
		iota[k] = float32(k)
	}
	be.WriteF32(col, iota)
	steps := []struct {
		pos    []int32
		tables [][]int32
		writes int // the step's I32 writes: tokens, positions, slots and the table when new
	}{
		{[]int32{0}, [][]int32{{3}}, 5}, // tokens, pos, slots, seq, table
		{[]int32{1}, [][]int32{{3}}, 3}, // the table kept (seq kept too)
		{[]int32{2}, [][]int32{{3}}, 3},
		{[]int32{4}, [][]int32{{3, 5}}, 4},         // a new block
		{[]int32{5}, [][]int32{{3, 5}}, 3},         // kept again
		{[]int32{5, 0}, [][]int32{{3, 5}, {1}}, 5}, // two sequences: seq and table new
		{[]int32{6, 1}, [][]int32{{3, 5}, {1}}, 3}, // kept
		{[]int32{6}, [][]int32{{3, 5}}, 5},         // one again: seq and table new
	}
	for i, st := range steps {
		b := Batch{Tokens: make([]int32, len(st.pos)), Pos: st.pos, Tables: st.tables, Seq: make([]int32, len(st.pos))}
		for j := range b.Seq {
			b.Seq[j] = int32(j)
		}
		n0 := be.n
		in, err := Inputs(be, s, p, c, b)
		if err != nil {
			t.Fatal(err)
		}
		if got := be.n - n0; got != st.writes {
			t.Errorf("step %d: %d writes, want %d", i, got, st.writes)
		}
		ids := backend.Reshaper(rb).Reshape(in.Attn.Table, len(st.tables)*c.MaxBlocks, 1)
		out, err := be.New(quant.F32, len(st.tables)*c.MaxBlocks, 1)
		if err != nil {
			t.Fatal(err)
		}
		be.GetRows(out, col, ids)
		f := make([]float32, len(st.tables)*c.MaxBlocks)
		if err := be.ReadF32(context.Background(), out, f); err != nil {
			t.Fatal(err)
		}
		for q, tab := range st.tables {
			for k := 0; k < c.MaxBlocks; k++ {
				want := float32(0)
				if k < len(tab) {
					want = float32(tab[k])
				}
				if got := f[q*c.MaxBlocks+k]; got != want {
					t.Fatalf("step %d: table %d block %d holds %g, want %g", i, q, k, got, want)
				}
			}
		}
		be.Free(out)
	}
}
