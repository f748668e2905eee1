package backendtest

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
	"ember/inference/sample"
)

// RunArgMax checks a backend's ArgMax (backend.ArgMaxer) against sample.Greedy, which
// defines it: random rows of odd and vocabulary sizes, ties (within a thread's stride
// and across threads, warps and blocks), -Inf, +Inf, NaN and signed zeros, rows of a
// view, more rows than a grid dimension holds, and a source still being computed when
// ArgMax is called. It skips a backend without ArgMax.
func RunArgMax(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	be := newBackend(t)
	defer be.Close()
	am, ok := be.(backend.ArgMaxer)
	if !ok {
		t.Skipf("%s has no ArgMax", be.Name())
	}
	rng := rand.New(rand.NewPCG(7, 11))
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	randn := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	// few draws from a handful of values: ties everywhere.
	few := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.IntN(5))
		}
		return v
	}
	fill := func(n int, x float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = x
		}
		return v
	}
	// set returns v with v[i] = x for each (i, x) pair.
	set := func(v []float32, kv ...any) []float32 {
		for i := 0; i < len(kv); i += 2 {
			v[kv[i].(int)] = kv[i+1].(float32)
		}
		return v
	}
	type tcase struct {
		name string
		rows [][]float32
	}
	var cases []tcase
	add := func(name string, rows ...[]float32) { cases = append(cases, tcase{name, rows}) }

	add("1x1", []float32{3})
	add("1x1 NaN", []float32{nan})
	add("7x7", randn(7), randn(7), randn(7), randn(7), randn(7), randn(7), randn(7))
	add("3x152064", randn(152064), randn(152064), randn(152064))
	add("2x152067 few values", few(152067), few(152067))
	add("5x4097 few values", few(4097), few(4097), few(4097), few(4097), few(4097))
	big := func() []float32 { return randn(128256) }
	add("ties across strides",
		set(big(), 1023, float32(9), 1024, float32(9)),
		set(big(), 1024, float32(9), 1023, float32(9), 128255, float32(9)),
		set(big(), 128255, float32(9), 0, float32(9)),
		set(big(), 31, float32(9), 32, float32(9), 64, float32(9)),
		set(big(), 70000, float32(9), 5, float32(9), 100000, float32(9)),
		// One thread's elements (a stride of 1024 apart), within a group of loads, across
		// groups, and in the tail past the last full group.
		set(big(), 2053, float32(9), 1029, float32(9)),
		set(big(), 8197, float32(9), 4101, float32(9)),
		set(big(), 128024, float32(9), 127000, float32(9)),
		set(big(), 128024, float32(9), 127000, float32(9), 4120, float32(9)),
		fill(128256, 2), fill(1000, -1))
	// argmax_f32's rows at a 16-byte boundary (cuda, session 41): thread t's 16-byte
	// chunks t, t + 1024, ... four a round; ties within a chunk, across a round's chunks,
	// across rounds, in the chunks past the last whole round, and (rows of 4k + 2
	// floats: every other row at a boundary) in the floats past the last chunk.
	add("16-byte chunks",
		set(big(), 6, float32(9), 5, float32(9)),
		set(big(), 4101, float32(9), 5, float32(9)),
		set(big(), 16389, float32(9), 4101, float32(9)),
		set(big(), 128253, float32(9), 124000, float32(9)),
		set(big(), 128255, float32(9), 128252, float32(9)))
	b2 := func() []float32 { return randn(128258) }
	add("floats past the chunks",
		set(b2(), 128257, float32(9), 128256, float32(9)),
		set(b2(), 128257, float32(9)),
		set(b2(), 128256, float32(9), 3, float32(9)),
		set(b2(), 128257, inf, 2, inf))
	add("infinities",
		fill(300, float32(math.Inf(-1))),
		set(fill(300, float32(math.Inf(-1))), 299, float32(-1e38)),
		set(randn(5000), 4000, inf, 17, inf),
		set(randn(5000), 4999, inf),
		[]float32{float32(math.Inf(-1)), float32(math.Inf(-1)), -3})
	add("NaN",
		fill(2000, nan),
		set(fill(2000, nan), 1999, float32(math.Inf(-1))),
		set(fill(2000, nan), 1500, float32(-5), 700, float32(-5)),
		set(randn(3000), 0, nan, 1, nan, 2, inf, 2999, nan),
		set(randn(3000), 10, nan, 11, float32(100), 12, nan),
		[]float32{nan, 1, 2}, []float32{-1, nan, -0.5}, []float32{nan, float32(math.Inf(-1))})
	add("signed zeros",
		[]float32{negZero, 0}, []float32{0, negZero}, []float32{-1, negZero, 0}, []float32{-2, 0, negZero},
		set(fill(4096, -1), 3000, negZero, 2000, float32(0)))
	many := make([][]float32, 70000)
	for i := range many {
		many[i] = randn(3)
		if i%7 == 0 {
			many[i] = few(3)
		}
	}
	add("70000x3", many...)
	rows64 := make([][]float32, 64)
	for i := range rows64 {
		rows64[i] = randn(32000)
	}
	add("64x32000", rows64...)

	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Rows of one length make one tensor, in a view between two other rows.
			var lens []int
			byLen := map[int][][]float32{}
			for _, r := range c.rows {
				if byLen[len(r)] == nil {
					lens = append(lens, len(r))
				}
				byLen[len(r)] = append(byLen[len(r)], r)
			}
			for _, cols := range lens {
				checkArgMax(t, be, am, byLen[cols], randn(cols), set(randn(cols), 0, float32(1e30)))
			}
		})
	}

	t.Run("after queued ops", func(t *testing.T) {
		// The source is computed by ops just enqueued: ArgMax must wait for them.
		const rows, cols = 9, 50001
		a, b := randn(rows*cols), randn(rows*cols)
		xa, _ := be.New(quant.F32, rows, cols)
		xb, _ := be.New(quant.F32, rows, cols)
		out, err := be.New(quant.F32, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { be.Free(xa); be.Free(xb); be.Free(out) }()
		be.WriteF32(xa, a)
		be.WriteF32(xb, b)
		be.Add(out, xa, xb)
		be.Mul(out, out, xb)
		got := make([]int32, rows)
		if err := am.ArgMax(ctx, out, got); err != nil {
			t.Fatal(err)
		}
		vals := make([]float32, rows*cols)
		if err := be.ReadF32(ctx, out, vals); err != nil {
			t.Fatal(err)
		}
		for r := range got {
			row := vals[r*cols : (r+1)*cols]
			if want := sample.Greedy(row); got[r] != want {
				t.Fatalf("row %d: ArgMax %d (%g), Greedy %d (%g)", r, got[r], at(row, got[r]), want, row[want])
			}
		}
	})

	t.Run("wrong length", func(t *testing.T) {
		x, err := be.New(quant.F32, 3, 10)
		if err != nil {
			t.Fatal(err)
		}
		defer be.Free(x)
		if err := am.ArgMax(ctx, x, make([]int32, 2)); err == nil {
			t.Fatal("ArgMax of 3 rows into 2 ids did not fail")
		}
	})
}

// at is row[i], or NaN when i is out of range (a wrong answer, reported as such).
func at(row []float32, i int32) float32 {
	if i < 0 || int(i) >= len(row) {
		return float32(math.NaN())
	}
	return row[i]
}

// checkArgMax runs ArgMax on rows (of equal length) as a view of a tensor with the row
// above before them and below after them, and compares it with sample.Greedy.
func checkArgMax(t *testing.T, be backend.Backend, am backend.ArgMaxer, rows [][]float32, above, below []float32) {
	t.Helper()
	cols, n := len(rows[0]), len(rows)
	flat := make([]float32, 0, (n+2)*cols)
	flat = append(flat, above...)
	for _, r := range rows {
		flat = append(flat, r...)
	}
	flat = append(flat, below...)
	x, err := be.New(quant.F32, n+2, cols)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Free(x)
	be.WriteF32(x, flat)
	got := make([]int32, n)
	if err := am.ArgMax(context.Background(), be.View(x, 1, n), got); err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if want := sample.Greedy(r); got[i] != want {
			t.Fatalf("row %d of %d (%d columns): ArgMax %d (%g), Greedy %d (%g)",
				i, n, cols, got[i], at(r, got[i]), want, r[want])
		}
	}
}
