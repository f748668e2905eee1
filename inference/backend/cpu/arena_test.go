package cpu

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"ember/inference/quant"
)

// TestArena checks that large weights are copied into the arena, aligned and unchanged,
// that small ones and MapWeights backends keep the caller's bytes, and that Free gives
// the pages back.
func TestArena(t *testing.T) {
	b, err := New(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if runtime.GOOS == "linux" && b.arena.mem == nil {
		t.Fatal("no arena on linux")
	}
	const cols = 4096 // Q8_0: 34 bytes per 32 values
	rb := cols / 32 * 34
	rows := (5<<20)/rb + 3 // odd size over two copy pieces
	data := make([]byte, rows*rb)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	w, err := b.Weight(quant.Q8_0, rows, cols, data)
	if err != nil {
		t.Fatal(err)
	}
	raw := get(w).raw
	if !bytes.Equal(raw, data) {
		t.Fatal("weight copy differs from its source")
	}
	if b.arena.mem != nil {
		if !b.arena.owns(raw) || addr(raw)%64 != 0 || addr(raw) == addr(data) {
			t.Fatalf("large weight not in the arena or misaligned (%#x)", addr(raw))
		}
		b.Free(w)
		mid := raw[len(raw)/2 : len(raw)/2+pageSize]
		if !bytes.Equal(mid, make([]byte, pageSize)) {
			t.Fatal("freed weight's pages still hold data")
		}
	}
	small, err := b.Weight(quant.Q8_0, 1, cols, data[:rb])
	if err != nil {
		t.Fatal(err)
	}
	if b.arena.owns(get(small).raw) {
		t.Fatal("a small weight was copied into the arena")
	}

	m, err := New(Options{Threads: 2, MapWeights: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	w, err = m.Weight(quant.Q8_0, rows, cols, data)
	if err != nil {
		t.Fatal(err)
	}
	if addr(get(w).raw) != addr(data) {
		t.Fatal("MapWeights copied the weight")
	}
}

// TestArenaBudget checks that copies stop at the budget and that freeing makes room.
func TestArenaBudget(t *testing.T) {
	b, err := New(Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.arena.mem == nil {
		t.Skip("no arena here")
	}
	if b.arena.budget <= 0 {
		t.Fatalf("budget %d", b.arena.budget)
	}
	b.arena.budget = 3 << 20
	const cols = 4096
	rb := cols / 32 * 34
	rows := (2<<20)/rb + 1 // just over 2 MiB
	data := make([]byte, rows*rb)
	w1, err := b.Weight(quant.Q8_0, rows, cols, data)
	if err != nil {
		t.Fatal(err)
	}
	if !b.arena.owns(get(w1).raw) {
		t.Fatal("the first weight was not copied")
	}
	w2, err := b.Weight(quant.Q8_0, rows, cols, data)
	if err != nil {
		t.Fatal(err)
	}
	if b.arena.owns(get(w2).raw) {
		t.Fatal("a weight past the budget was copied")
	}
	b.Free(w1)
	w3, err := b.Weight(quant.Q8_0, rows, cols, data)
	if err != nil {
		t.Fatal(err)
	}
	if !b.arena.owns(get(w3).raw) {
		t.Fatal("freeing a weight did not make room in the budget")
	}
}
