package sample

import (
	"math/rand/v2"
	"testing"
)

// TestSampleMasked: greedy draws the most likely allowed token, sampling draws only
// allowed ones (many refused: the masking pass), and with nothing allowed the draw
// still ends.
func TestSampleMasked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	logits := func() []float32 {
		l := make([]float32, 1000)
		for i := range l {
			l[i] = float32(rng.NormFloat64())
		}
		return l
	}
	even := func(id int32) bool { return id%2 == 0 }
	l := logits()
	best := int32(-1)
	for i, v := range l {
		if i%2 == 0 && (best < 0 || v > l[best]) {
			best = int32(i)
		}
	}
	if got := New(Params{}).SampleMasked(append([]float32(nil), l...), even); got != best {
		t.Fatalf("greedy: %d, want %d", got, best)
	}
	s := New(Params{Temperature: 1, Seed: 3})
	rare := func(id int32) bool { return id%97 == 5 }
	for n := 0; n < 200; n++ {
		if id := s.SampleMasked(logits(), rare); !rare(id) {
			t.Fatalf("draw %d: token %d is not allowed", n, id)
		}
		if id := s.SampleMasked(logits(), even); !even(id) {
			t.Fatalf("draw %d: token %d is not allowed", n, id)
		}
	}
	_ = New(Params{Temperature: 1, TopK: 5}).SampleMasked(logits(), func(int32) bool { return false })
}
