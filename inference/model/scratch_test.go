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
