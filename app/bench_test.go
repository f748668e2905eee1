package app

import (
	"context"
	"testing"
)

// TestBenchDepth: `ember bench -d`: the context is processed in batches (700 tokens: one
// whole batch and a part), the prompt and the generated tokens take the positions after
// it, so the cache must hold all of them (a cache sized for the timed tokens alone fails
// the first step past its end), and the result says the depth it ran at.
func TestBenchDepth(t *testing.T) {
	l, err := OpenModel("", BackendOptions{Name: "cpu", Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r, err := Bench(context.Background(), l, BenchOptions{PP: 37, TG: 20, Depth: 700, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Depth != 700 || len(r.PPRuns) != 1 || len(r.TGRuns) != 1 || !(r.PPTokS > 0) || !(r.TGTokS > 0) {
		t.Errorf("%+v", r)
	}
	if _, err := Bench(context.Background(), l, BenchOptions{PP: 8, Depth: -1, Reps: 1}); err == nil {
		t.Error("a negative depth was taken")
	}
}
