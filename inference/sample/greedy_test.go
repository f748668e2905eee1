package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIsGreedy: a sampler that says it is greedy samples Greedy's token and leaves the
// logits alone; any temperature or penalty makes it not greedy.
func TestIsGreedy(t *testing.T) {
	for _, c := range []struct {
		p    Params
		want bool
	}{
		{Params{}, true},
		{Params{Temperature: -1, Seed: 3}, true},
		{Params{TopK: 5, TopP: 0.5, MinP: 0.1}, true}, // filters do nothing without a temperature
		{Params{Penalties: Penalties{Repeat: 1, LastN: 8}}, true},
		{Params{Temperature: 0.7}, false},
		{Params{Penalties: Penalties{Repeat: 1.1}}, false},
		{Params{Penalties: Penalties{Presence: 0.5}}, false},
		{Params{Penalties: Penalties{Frequency: -0.5}}, false},
	} {
		s := New(c.p)
		if got := s.IsGreedy(); got != c.want {
			t.Errorf("%+v: IsGreedy %v, want %v", c.p, got, c.want)
			continue
		}
		if !c.want {
			continue
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range 50 {
			l := make([]float32, 1+rng.IntN(300))
			for j := range l {
				l[j] = float32(rng.IntN(7)) // ties
				if rng.IntN(20) == 0 {
					l[j] = float32(math.NaN())
				}
			}
			before := slices.Clone(l)
			s.Accept(int32(rng.IntN(len(l)))) // history that penalties would use
			if got, want := s.Sample(l), Greedy(before); got != want {
				t.Fatalf("%+v row %d: Sample %d, Greedy %d", c.p, i, got, want)
			}
			for j := range l {
				if math.Float32bits(l[j]) != math.Float32bits(before[j]) {
					t.Fatalf("%+v: Sample changed logit %d", c.p, j)
				}
			}
		}
	}
}
