package backendtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
	"ember/inference/sample"
)

// RunTopK checks a backend's TopK (backend.TopKer) against sample.TopK, which defines
// it: the ids and the values (bit for bit) of every row's k first candidates in order
// and the padding after them. Rows of 1 to 151936 columns, normal values, a handful of
// values (ties at the k-th candidate, among many more equal ones), values a few ulps
// apart (keys equal but for their last bits), ties spread across the row, NaN, ±Inf,
// signed zeros, denormals, rows of only NaN and -Inf or with fewer valid elements than
// k, 64 and 70000 rows at once, k from 1 to backend.MaxTopK; rows of a view, a source
// still being computed when TopK is called, and invalid arguments. It skips a backend
// without TopK.
func RunTopK(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	be := newBackend(t)
	defer be.Close()
	tk, ok := be.(backend.TopKer)
	if !ok {
		t.Skipf("%s has no TopK", be.Name())
	}
	g := topkGen{rng: rand.New(rand.NewPCG(17, 19))}
	ks := []int{1, 2, 40, backend.MaxTopK}
	type tcase struct {
		name string
		ks   []int
		rows [][]float32
	}
	var cases []tcase
	add := func(name string, ks []int, rows ...[]float32) { cases = append(cases, tcase{name, ks, rows}) }

	add("1x1", []int{1, 2, 7}, []float32{3})
	add("1x1 NaN", []int{1, 3}, []float32{g.nan()})
	add("7x7", []int{1, 2, 6, 7, 40}, g.rows(7, 7, g.randn)...)
	for _, n := range []int{1000, 32000, 128256, 151936} {
		add(fmt.Sprintf("3x%d", n), ks, g.rows(3, n, g.randn)...)
		add(fmt.Sprintf("2x%d few values", n), ks, g.rows(2, n, g.few)...)
		add(fmt.Sprintf("2x%d close values", n), ks, g.rows(2, n, g.close)...)
		add(fmt.Sprintf("2x%d specials", n), ks, g.rows(2, n, g.specials)...)
		add(fmt.Sprintf("2x%d spread ties", n), ks, g.rows(2, n, g.spreadTies)...)
	}
	add("fewer valid than k", []int{1, 40, 100, 101, backend.MaxTopK},
		g.sparse(5000, 100), g.sparse(5000, 100), g.sparse(151936, 100), g.sparse(151936, 3))
	add("no valid element", ks,
		g.fill(2000, g.nan()), g.fill(2000, float32(math.Inf(-1))), g.sparse(2000, 0), g.sparse(151936, 0))
	add("signed zeros", []int{1, 2, 3, 40},
		[]float32{g.negZero(), 0}, []float32{0, g.negZero()}, []float32{-1, g.negZero(), 0},
		g.set(g.fill(4096, -1), 3000, g.negZero(), 2000, 0, 100, g.negZero()),
		g.set(g.fill(4096, g.negZero()), 7, 0, 4095, 0))
	add("denormals", []int{1, 2, 40}, g.rows(2, 3000, g.denormals)...)
	add("infinities", []int{1, 2, 40},
		g.set(g.randn(5000), 4000, float32(math.Inf(1)), 17, float32(math.Inf(1))),
		g.set(g.fill(300, float32(math.Inf(-1))), 299, -1e38, 7, 3e38))
	add("64x151936", []int{1, 40, backend.MaxTopK}, g.rows(64, 151936, g.randn)...)
	add("64x32000 mixed", []int{2, 40, backend.MaxTopK}, g.rows(64, 32000, g.mixed)...)
	add("70000x3", []int{1, 2, 5}, g.rows(70000, 3, g.mixed)...)

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var lens []int
			byLen := map[int][][]float32{}
			for _, r := range c.rows {
				if byLen[len(r)] == nil {
					lens = append(lens, len(r))
				}
				byLen[len(r)] = append(byLen[len(r)], r)
			}
			for _, cols := range lens {
				for _, k := range c.ks {
					checkTopK(t, be, tk, byLen[cols], k, g.randn(cols), g.set(g.randn(cols), 0, 1e30))
				}
			}
		})
	}

	ctx := context.Background()
	t.Run("after queued ops", func(t *testing.T) {
		// The source is computed by ops just enqueued: TopK must wait for them.
		const rows, cols, k = 9, 50001, 40
		xa, _ := be.New(quant.F32, rows, cols)
		xb, _ := be.New(quant.F32, rows, cols)
		out, err := be.New(quant.F32, rows, cols)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { be.Free(xa); be.Free(xb); be.Free(out) }()
		be.WriteF32(xa, g.randn(rows*cols))
		be.WriteF32(xb, g.randn(rows*cols))
		be.Add(out, xa, xb)
		be.Mul(out, out, xb)
		ids, vals := make([]int32, rows*k), make([]float32, rows*k)
		if err := tk.TopK(ctx, out, k, ids, vals); err != nil {
			t.Fatal(err)
		}
		all := make([]float32, rows*cols)
		if err := be.ReadF32(ctx, out, all); err != nil {
			t.Fatal(err)
		}
		for r := range rows {
			compareTopK(t, fmt.Sprintf("row %d of %d (%d columns, k %d)", r, rows, cols, k),
				all[r*cols:(r+1)*cols], ids[r*k:(r+1)*k], vals[r*k:(r+1)*k])
		}
	})

	t.Run("invalid arguments", func(t *testing.T) {
		x, err := be.New(quant.F32, 3, 10)
		if err != nil {
			t.Fatal(err)
		}
		defer be.Free(x)
		for _, a := range []struct{ k, n, nv int }{{0, 0, 0}, {backend.MaxTopK + 1, 3 * (backend.MaxTopK + 1), 3 * (backend.MaxTopK + 1)}, {2, 4, 6}, {2, 6, 4}} {
			if err := tk.TopK(ctx, x, a.k, make([]int32, a.n), make([]float32, a.nv)); err == nil {
				t.Errorf("TopK of 3 rows, k %d, into %d ids and %d values did not fail", a.k, a.n, a.nv)
			}
		}
	})
}

// checkTopK runs TopK on rows (of equal length) as a view of a tensor with the row above
// before them and below after them, and compares it with sample.TopK.
func checkTopK(t *testing.T, be backend.Backend, tk backend.TopKer, rows [][]float32, k int, above, below []float32) {
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
	ids, vals := make([]int32, n*k), make([]float32, n*k)
	for i := range ids {
		ids[i], vals[i] = -7, 7 // no stale right answers
	}
	if err := tk.TopK(context.Background(), be.View(x, 1, n), k, ids, vals); err != nil {
		t.Fatalf("%d rows of %d columns, k %d: %v", n, cols, k, err)
	}
	for i, r := range rows {
		compareTopK(t, fmt.Sprintf("row %d of %d (%d columns, k %d)", i, n, cols, k), r, ids[i*k:(i+1)*k], vals[i*k:(i+1)*k])
	}
}

// compareTopK fails t, naming what, unless ids and vals are sample.TopK of row.
func compareTopK(t *testing.T, what string, row []float32, ids []int32, vals []float32) {
	t.Helper()
	k := len(ids)
	wids, wvals := make([]int32, k), make([]float32, k)
	sample.TopK(row, wids, wvals)
	for j := range k {
		if ids[j] != wids[j] || math.Float32bits(vals[j]) != math.Float32bits(wvals[j]) {
			t.Fatalf("%s: candidate %d is (%d, %g) (row[%d] = %g), want (%d, %g); candidates %d.. are %v, want %v",
				what, j, ids[j], vals[j], ids[j], at(row, ids[j]), wids[j], wvals[j],
				max(0, j-2), ids[max(0, j-2):min(k, j+3)], wids[max(0, j-2):min(k, j+3)])
		}
	}
}

// topkGen makes TopK's test rows.
type topkGen struct{ rng *rand.Rand }

func (g topkGen) nan() float32     { return float32(math.NaN()) }
func (g topkGen) negZero() float32 { return float32(math.Copysign(0, -1)) }

func (g topkGen) rows(n, cols int, f func(int) []float32) [][]float32 {
	r := make([][]float32, n)
	for i := range r {
		r[i] = f(cols)
	}
	return r
}

func (g topkGen) fill(n int, x float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = x
	}
	return v
}

// set returns v with v[i] = x for each (i, x) pair.
func (g topkGen) set(v []float32, kv ...float32) []float32 {
	for i := 0; i < len(kv); i += 2 {
		v[int(kv[i])] = kv[i+1]
	}
	return v
}

func (g topkGen) randn(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(g.rng.NormFloat64() * 4)
	}
	return v
}

// few draws from five values: ties everywhere, the k-th among thousands.
func (g topkGen) few(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(g.rng.IntN(5)) - 2
	}
	return v
}

// close holds values a few hundred ulps apart around 1 or -1: their keys differ in the
// last byte or two only, and tie often.
func (g topkGen) close(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(0x3f800000 + uint32(g.rng.IntN(600)))
		if g.rng.IntN(3) == 0 {
			v[i] = -v[i]
		}
	}
	return v
}

// specials sprinkles NaN, +Inf, -Inf and signed zeros among normal values.
func (g topkGen) specials(n int) []float32 {
	v := g.randn(n)
	for range 1 + n/8 {
		i := g.rng.IntN(n)
		switch g.rng.IntN(6) {
		case 0, 1:
			v[i] = g.nan()
		case 2:
			v[i] = float32(math.Inf(-1))
		case 3:
			v[i] = g.negZero()
		case 4:
			v[i] = 0
		default:
			if g.rng.IntN(30) == 0 {
				v[i] = float32(math.Inf(1))
			}
		}
	}
	return v
}

// spreadTies has a few hundred equal largest values at random places over the row (ties
// at the k-th candidate far apart in index) above values below them.
func (g topkGen) spreadTies(n int) []float32 {
	v := g.randn(n)
	for i := range v {
		v[i] = min(v[i], 20)
	}
	for range min(n, 300) {
		v[g.rng.IntN(n)] = 30
	}
	return v
}

// sparse has valid elements (few values: ties) at valid random places, NaN or -Inf
// elsewhere.
func (g topkGen) sparse(n, valid int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = g.nan()
		if g.rng.IntN(2) == 0 {
			v[i] = float32(math.Inf(-1))
		}
	}
	for _, i := range g.rng.Perm(n)[:valid] {
		v[i] = float32(g.rng.IntN(4))
	}
	return v
}

// denormals mixes denormal values of both signs with zeros.
func (g topkGen) denormals(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(uint32(g.rng.IntN(50)) | uint32(g.rng.IntN(2))<<31)
	}
	return v
}

// mixed is a row of one of the kinds above, at random.
func (g topkGen) mixed(n int) []float32 {
	switch g.rng.IntN(5) {
	case 0:
		return g.few(n)
	case 1:
		return g.close(n)
	case 2:
		return g.specials(n)
	case 3:
		return g.sparse(n, g.rng.IntN(min(n, 60)+1))
	}
	return g.randn(n)
}
