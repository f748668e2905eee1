package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// candidateRow is a random row of n logits: normal values, or (mode 1) a handful of
// values for ties everywhere, with some NaNs, -Infs, +Infs and signed zeros (mode 2),
// or (mode 3) only NaNs and -Infs.
func candidateRow(r *rand.Rand, n, mode int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch mode {
		case 1:
			v[i] = float32(r.IntN(6)) * 0.5
		case 3:
			v[i] = float32(math.NaN())
			if r.IntN(2) == 0 {
				v[i] = float32(math.Inf(-1))
			}
		default:
			v[i] = float32(r.NormFloat64() * 3)
		}
	}
	if mode == 2 {
		for range 1 + n/10 {
			switch i := r.IntN(n); r.IntN(5) {
			case 0:
				v[i] = float32(math.NaN())
			case 1:
				v[i] = float32(math.Inf(-1))
			case 2:
				v[i] = float32(math.Copysign(0, -1))
			case 3:
				v[i] = 0
			default:
				if r.IntN(20) == 0 {
					v[i] = float32(math.Inf(1))
				}
			}
		}
	}
	return v
}

// TestTopKMatchesFilter: TopK writes the candidates the oracle's full sort gives, in its
// order, padded with -1 and -Inf.
func TestTopKMatchesFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 7, 300, 4097} {
		for mode := range 4 {
			for _, k := range []int{1, 2, 40, 256, n + 3} {
				row := candidateRow(r, n, mode)
				ids, vals := make([]int32, k), make([]float32, k)
				TopK(row, ids, vals)
				var want []candidate
				for i, v := range row {
					if v == v && !math.IsInf(float64(v), -1) {
						want = append(want, candidate{int32(i), float64(v)})
					}
				}
				sortCands(want)
				for i := range k {
					wid, wv := int32(-1), float32(math.Inf(-1))
					if i < len(want) {
						wid, wv = want[i].id, float32(want[i].p)
					}
					if ids[i] != wid || vals[i] != wv {
						t.Fatalf("n %d mode %d k %d: candidate %d is (%d, %g), want (%d, %g)", n, mode, k, i, ids[i], vals[i], wid, wv)
					}
				}
			}
		}
	}
}

// TestTopKOnly: which parameters let SampleTop stand in for Sample.
func TestTopKOnly(t *testing.T) {
	for _, c := range []struct {
		p     Params
		vocab int
		k     int
		ok    bool
	}{
		{Params{Temperature: 0.8, TopK: 40}, 1000, 40, true},
		{Params{Temperature: 0.8, TopK: 40, TopP: 0.9, MinP: 0.05}, 1000, 40, true},
		{Params{Temperature: 0.8, TopK: 40, Penalties: Penalties{Repeat: 1}}, 1000, 40, true}, // 1 is off
		{Params{Temperature: 0, TopK: 40}, 1000, 0, false},                                    // greedy
		{Params{Temperature: 0.8}, 1000, 0, false},                                            // no top-k
		{Params{Temperature: 0.8, TopK: 1000}, 1000, 0, false},                                // the whole row
		{Params{Temperature: 0.8, TopK: 40, Penalties: Penalties{Presence: 0.5}}, 1000, 0, false},
		{Params{Temperature: 0.8, TopK: 40, Penalties: Penalties{Repeat: 1.1}}, 1000, 0, false},
	} {
		k, ok := New(c.p).TopKOnly(c.vocab)
		if k != c.k || ok != c.ok {
			t.Errorf("%+v, vocab %d: TopKOnly %d %v, want %d %v", c.p, c.vocab, k, ok, c.k, c.ok)
		}
	}
}

// TestSampleTopEqualsSample: for random rows and parameters (top-k with top-p, min-p,
// temperatures, ties, NaNs, infinities), a sampler drawing with SampleTop from the
// candidates of a larger k (as the engine reads back the largest TopK of a batch) draws
// the same tokens as one with the same seed drawing with Sample from the whole rows,
// over many draws (so the random sources stay in step); rows without a candidate make
// SampleTop decline, and the caller's Sample on the row keeps them in step.
func TestSampleTopEqualsSample(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	declined := 0
	for trial := range 60 {
		n := []int{2, 7, 50, 1000, 32000}[trial%5]
		p := Params{
			Temperature: []float32{0.3, 0.8, 1, 1.7}[r.IntN(4)],
			TopK:        []int{1, 2, 5, 40, 256}[r.IntN(5)],
			Seed:        r.Uint64(),
		}
		if p.TopK >= n {
			p.TopK = n - 1
		}
		switch r.IntN(4) {
		case 1:
			p.TopP = []float32{0.1, 0.5, 0.9, 0.99}[r.IntN(4)]
		case 2:
			p.MinP = []float32{0.01, 0.1, 0.5, 1.5}[r.IntN(4)]
		case 3:
			p.TopP, p.MinP = 0.8, 0.05
		}
		name := fmt.Sprintf("trial %d n %d %+v", trial, n, p)
		full, top := New(p), New(p)
		k, ok := top.TopKOnly(n)
		if !ok || k != p.TopK {
			t.Fatalf("%s: TopKOnly %d %v", name, k, ok)
		}
		kk := min(256, k+r.IntN(20))
		ids, vals := make([]int32, kk), make([]float32, kk)
		for draw := range 200 {
			mode := 0
			if draw%7 == 0 {
				mode = r.IntN(4)
			}
			row := candidateRow(r, n, mode)
			TopK(row, ids, vals)
			got, ok := top.SampleTop(ids, vals)
			if !ok {
				if ids[0] >= 0 {
					t.Fatalf("%s draw %d: SampleTop declined with candidate %d", name, draw, ids[0])
				}
				declined++
				got = top.Sample(append([]float32(nil), row...))
			}
			if want := full.Sample(row); got != want {
				t.Fatalf("%s draw %d (mode %d): SampleTop drew %d, Sample %d", name, draw, mode, got, want)
			}
		}
	}
	if declined == 0 {
		t.Fatal("no row without candidates was tried")
	}
}
