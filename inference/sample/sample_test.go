package sample

import (
	"math"
	"testing"
)

func TestGreedy(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		in   []float32
		want int32
	}{
		{[]float32{1, 3, 2}, 1},
		{[]float32{5, 5, 1}, 0},
		{[]float32{nan, 1, 2}, 2},
		{[]float32{-1, nan, -0.5}, 2},
	} {
		if got := Greedy(c.in); got != c.want {
			t.Errorf("Greedy(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestSeededAndFiltered(t *testing.T) {
	logits := []float32{2, 1.5, 1, 0.5, 0, -1, -3}
	draw := func(p Params, n int) []int32 {
		s := New(p)
		var out []int32
		for i := 0; i < n; i++ {
			l := append([]float32(nil), logits...)
			out = append(out, s.Sample(l))
		}
		return out
	}
	a, b := draw(Params{Temperature: 1, Seed: 5}, 200), draw(Params{Temperature: 1, Seed: 5}, 200)
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed gave different draws")
		}
	}
	seen := map[int32]bool{}
	for _, id := range a {
		seen[id] = true
	}
	if len(seen) < 4 {
		t.Errorf("temperature 1 drew only %d distinct tokens", len(seen))
	}
	for _, id := range draw(Params{Temperature: 1, TopK: 2, Seed: 1}, 200) {
		if id > 1 {
			t.Fatalf("top-k 2 drew token %d", id)
		}
	}
	for _, id := range draw(Params{Temperature: 1, MinP: 0.5, Seed: 1}, 200) {
		if logits[id] < logits[0]-float32(math.Log(2))-1e-6 {
			t.Fatalf("min-p 0.5 drew token %d", id)
		}
	}
	for _, id := range draw(Params{Temperature: 0.7, TopP: 0.3, Seed: 1}, 100) {
		if id != 0 {
			t.Fatalf("top-p 0.3 drew token %d (the top token alone has p > 0.3)", id)
		}
	}
}

func TestPenalties(t *testing.T) {
	s := New(Params{Penalties: Penalties{Repeat: 2, Presence: 0.5, Frequency: 0.25}})
	s.Accept(0)
	s.Accept(0)
	s.Accept(2)
	l := []float32{4, 3.9, -1}
	got := s.Sample(l)
	// token 0: 4/2 - 0.5 - 0.5 = 1; token 2: -1*2 - 0.5 - 0.25 = -2.75
	if l[0] != 1 || l[1] != 3.9 || l[2] != -2.75 || got != 1 {
		t.Fatalf("penalized logits %v, sampled %d", l, got)
	}
	// Window: with LastN 2, the oldest token leaves the counts.
	s = New(Params{Penalties: Penalties{Presence: 1, LastN: 2}})
	s.Accept(0)
	s.Accept(1)
	s.Accept(2)
	l = []float32{0, 0, 0}
	s.hist.apply(l, s.p.Penalties)
	if l[0] != 0 || l[1] != -1 || l[2] != -1 {
		t.Fatalf("window of 2: %v", l)
	}
}

func TestLogprobs(t *testing.T) {
	logits := []float32{0.5, 3, -2, 3, 1}
	chosen, top := Logprobs(logits, 4, 3)
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v))
	}
	want := float32(1 - math.Log(sum))
	if math.Abs(float64(chosen.Logprob-want)) > 1e-6 || chosen.ID != 4 {
		t.Fatalf("chosen %+v, want logprob %g", chosen, want)
	}
	if len(top) != 3 || top[0].ID != 1 || top[1].ID != 3 || top[2].ID != 4 {
		t.Fatalf("top %+v", top)
	}
	if _, none := Logprobs(logits, 0, 0); none != nil {
		t.Fatal("k=0 returned alternatives")
	}
}
