package sample

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// rowWeights is drawRow's weight of each token of row at temperature t, computed apart.
func rowWeights(row []float32, t float32) []float64 {
	maxL := float32(math.Inf(-1))
	for _, v := range row {
		if v > maxL {
			maxL = v
		}
	}
	w := make([]float64, len(row))
	for i, v := range row {
		if v == v && v >= maxL-float32(30*t) {
			w[i] = expNeg((float64(v) - float64(maxL)) / float64(t))
		}
	}
	return w
}

// TestDrawRow: the token drawRow draws for u is where u of the row's mass falls, in
// exact arithmetic, to within rounding (1e-12 of the mass): the tree's order of sums
// moves only draws that land on a boundary. Rows of 1 to 151,936 tokens (not multiples
// of a run, a run and one more), with NaNs, -Infs, near-ties and negligible tokens, and
// u at 0 and just under 1; no token without a weight is ever drawn. Rows whose largest
// logit is not finite draw their argmax.
func TestDrawRow(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{1, 2, 31, 32, 33, 63, 64, 65, 1000, 2047, 2049, 32000, 151936} {
		for trial := range 12 {
			row := randomRow(r, n)
			if trial%4 == 1 { // a spread of 80 logits: many tokens negligible
				for i := range row {
					row[i] *= 10
				}
			}
			temp := []float32{1e-3, 0.3, 0.7, 1, 2, 40}[r.IntN(6)]
			w := rowWeights(row, temp)
			exact := make([]*big.Float, n+1) // exact[i]: the mass before token i
			exact[0] = new(big.Float).SetPrec(2000)
			for i, x := range w {
				exact[i+1] = new(big.Float).SetPrec(2000).Add(exact[i], big.NewFloat(x))
			}
			total, _ := exact[n].Float64()
			for _, u := range []float64{0, 1 - 0x1p-53, r.Float64(), r.Float64(), r.Float64()} {
				if total == 0 {
					break
				}
				id, _ := drawRow(row, temp, u, nil)
				if id < 0 || int(id) >= n || w[id] == 0 {
					t.Fatalf("n %d t %g u %v: drew %d, a token without weight", n, temp, u, id)
				}
				at := u * total
				lo, _ := exact[id].Float64()
				hi, _ := exact[id+1].Float64()
				if tol := 1e-12 * total; at < lo-tol || at > hi+tol {
					t.Fatalf("n %d t %g u %v: drew %d, whose mass is [%g, %g) of %g; u falls at %g", n, temp, u, id, lo, hi, total, at)
				}
			}
		}
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, row := range [][]float32{{nan, nan}, {-inf, nan, -inf}, {1, inf, 2, inf}, {nan, -inf, 3}} {
		if id, _ := drawRow(row, 1, 0.999, nil); id != Greedy(row) {
			t.Errorf("drawRow(%v) = %d, want the argmax %d", row, id, Greedy(row))
		}
	}
}

// TestDrawRowFrequencies: over many uniforms, each token of a small row is drawn as
// often as its probability says (a chi-square bound no fair draw fails by chance).
func TestDrawRowFrequencies(t *testing.T) {
	row := []float32{0, 1, 2, 0.5, -1, 3, 2.5, -30, 1.5, 0.25, 2, 1}
	for len(row) < 70 { // three runs, the last partial
		row = append(row, float32(len(row)%7)-3)
	}
	const temp, draws = 1.3, 200000
	w := rowWeights(row, temp)
	var total float64
	for _, x := range w {
		total += x
	}
	r := rand.New(rand.NewPCG(3, 4))
	count := make([]int, len(row))
	for range draws {
		id, _ := drawRow(row, temp, r.Float64(), nil)
		count[id]++
	}
	chi := 0.0
	for i, x := range w {
		want := draws * x / total
		d := float64(count[i]) - want
		chi += d * d / want
	}
	if chi > 140 { // 69 degrees of freedom: p < 1e-7
		t.Fatalf("chi-square %.1f over %d tokens: the draws do not follow the softmax", chi, len(row))
	}
}

// TestAheadRow: a sampler with a temperature alone (top-k 0 or the vocabulary, top-p 0
// or 1, no min-p) goes ahead with Row draws, and a Row draw's PickRow is Sample's token
// on the same row, token after token; with anything else set it does not draw rows (and
// AheadOK says whether it draws at all).
func TestAheadRow(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := range 60 {
		n := []int{5, 300, 4100}[trial%3]
		p := Params{Temperature: []float32{0.2, 0.7, 1, 3}[r.IntN(4)], TopK: []int{0, n, n + 7}[r.IntN(3)],
			TopP: []float32{0, 1}[r.IntN(2)], Seed: uint64(trial)}
		a, b := New(p), New(p)
		for tok := range 15 {
			row := randomRow(r, n)
			d, ok := a.Ahead(n, false)
			if !ok || !d.Row || d.K != 0 {
				t.Fatalf("trial %d (%+v): Ahead %+v, %v; want a Row draw", trial, p, d, ok)
			}
			if _, ok := d.Pick([]int32{0}, []float32{1}); ok {
				t.Fatal("a Row draw picked from candidates")
			}
			got, want := d.PickRow(row, -1), b.Sample(append([]float32(nil), row...))
			if got != want {
				t.Fatalf("trial %d token %d (%+v): PickRow %d, Sample %d", trial, tok, p, got, want)
			}
			a.Accept(got)
		}
	}
	for _, p := range []Params{{}, {Temperature: 1, TopK: 40}, {Temperature: 1, TopP: 0.9}, {Temperature: 1, MinP: 0.1},
		{Temperature: float32(math.Inf(1))}, {Temperature: float32(math.NaN())}} {
		s := New(p)
		if d, ok := s.Ahead(1000, false); ok && d.Row || s.AheadOK(1000, 256, 1024) && !ok {
			t.Errorf("%+v: Ahead %+v, %v; AheadOK %v", p, d, ok, s.AheadOK(1000, 256, 1024))
		}
	}
}

// BenchmarkDrawRow: one draw from a Llama-3 vocabulary's row, every token a candidate
// (best of 300 here: 1.17-1.89 ms on one core, 0.63-1.07 ms on two; noisy machine).
func BenchmarkDrawRow(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	row := make([]float32, 128256)
	for i := range row {
		row[i] = float32(r.NormFloat64() * 3)
	}
	var w []float64
	for b.Loop() {
		_, w = drawRow(row, 1, 0.5, w)
	}
}

// BenchmarkTopP: a draw with top-p alone (no top-k) from a Llama-3 vocabulary's row,
// every token a candidate: the host's filter, softmax and cut.
func BenchmarkTopP(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	row := make([]float32, 128256)
	for i := range row {
		row[i] = float32(r.NormFloat64() * 3)
	}
	s := New(Params{Temperature: 0.7, TopP: 0.9, Seed: 1})
	buf := make([]float32, len(row))
	for b.Loop() {
		copy(buf, row)
		s.Sample(buf)
	}
}
