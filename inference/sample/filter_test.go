package sample

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// oracleFilter is the plain definition: sort every candidate, cut to top-k (or, without
// top-k, drop the negligible), softmax, cut at top-p, cut at min-p.
func oracleFilter(logits []float32, p Params) []candidate {
	var c []candidate
	for i, v := range logits {
		if v == v && !math.IsInf(float64(v), -1) {
			c = append(c, candidate{int32(i), float64(v)})
		}
	}
	sort.Slice(c, func(i, j int) bool { return before(c[i], c[j]) })
	if p.TopK > 0 && p.TopK < len(logits) {
		c = c[:min(p.TopK, len(c))]
	} else {
		cut := float32(c[0].p) - negligible*p.Temperature
		for i := range c {
			if float32(c[i].p) < cut {
				c = c[:i]
				break
			}
		}
	}
	softmax(c, float64(p.Temperature), c[0].p)
	if tp := float64(p.TopP); tp > 0 && tp < 1 {
		var cum float64
		for i := range c {
			if cum += c[i].p; cum >= tp {
				c = c[:i+1]
				break
			}
		}
	}
	if mp := float64(p.MinP); mp > 0 {
		limit := c[0].p * mp
		for i := range c {
			if c[i].p < limit {
				c = c[:i]
				break
			}
		}
	}
	return c
}

// TestFilterMatchesSort checks the top-k filter against the full sort on random logits
// of odd sizes, with ties, NaNs and -Inf, for combinations of top-k with the other
// filters: the same tokens in the same order, probabilities equal to rounding.
func TestFilterMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 7, 33, 1000, 4097, 151936} {
		logits := make([]float32, n)
		for i := range logits {
			switch r.IntN(50) {
			case 0:
				logits[i] = float32(math.NaN())
			case 1:
				logits[i] = float32(math.Inf(-1))
			case 2, 3:
				logits[i] = 1.5 // ties
			default:
				logits[i] = float32(r.NormFloat64() * 8) // wide enough for negligible ones
			}
		}
		for _, p := range []Params{
			{Temperature: 0.8, TopK: 40},
			{Temperature: 1, TopK: 1},
			{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05},
			{Temperature: 1, TopK: 300, TopP: 0.5, MinP: 0.01},
			{Temperature: 2, TopK: 1000, TopP: 0.8},
		} {
			if p.TopK >= n {
				continue // drawRow's or drawNucleus's draw
			}
			name := fmt.Sprintf("n=%d/%+v", n, p)
			want := oracleFilter(logits, p)
			s := New(p)
			got := s.filter(logits)
			if len(got) != len(want) {
				t.Fatalf("%s: %d candidates, want %d", name, len(got), len(want))
			}
			for i := range want {
				if got[i].id != want[i].id || math.Abs(got[i].p-want[i].p) > 1e-12*max(1, want[i].p) {
					t.Fatalf("%s: candidate %d is %v, want %v", name, i, got[i], want[i])
				}
			}
		}
	}
}

func BenchmarkSample(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, 151936)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 3)
	}
	for _, p := range []Params{
		{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05},
		{Temperature: 0.6, TopP: 0.95},
		{Temperature: 1},
	} {
		b.Run(fmt.Sprintf("%+v", p), func(b *testing.B) {
			s := New(p)
			for b.Loop() {
				s.draw(logits)
			}
		})
	}
}

func BenchmarkOracleFilter(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, 151936)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 3)
	}
	for b.Loop() {
		oracleFilter(logits, Params{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05})
	}
}

// TestDrawRowMatchesFilter: the unfiltered fast path (drawRow) draws what the candidate
// list in vocabulary order (the oracle's, unsorted) gives for the same random numbers
// (rounding may move a draw that lands on a boundary, so a few of the draws may differ).
func TestDrawRowMatchesFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	logits := make([]float32, 32000)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 4)
		if i%97 == 0 {
			logits[i] = float32(math.NaN())
		}
	}
	p := Params{Temperature: 0.9, Seed: 11}
	fast, slow := New(p), New(p)
	same := 0
	const n = 2000
	for i := 0; i < n; i++ {
		a, _ := drawRow(logits, fast.p.Temperature, fast.rng.Float64(), nil)
		c := oracleFilter(logits, p)
		slices.SortFunc(c, func(a, b candidate) int { return cmp.Compare(a.id, b.id) })
		var total float64
		for _, x := range c {
			total += x.p
		}
		u := slow.rng.Float64() * total
		b := c[len(c)-1].id
		for _, x := range c {
			if u -= x.p; u < 0 {
				b = x.id
				break
			}
		}
		if a == b {
			same++
		}
		if math.IsNaN(float64(logits[a])) {
			t.Fatalf("drew NaN token %d", a)
		}
	}
	if same < n-5 {
		t.Fatalf("%d of %d draws agree", same, n)
	}
}
