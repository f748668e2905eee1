package app

import (
	"context"
	"testing"
)

// TestServeBenchWarmup: the serving bench on the bundled model, with and without its
// warmup round: both measure all the streams decoding at once, and the warmup's prompts
// share no prefix with the timed ones (no prefix-cache hits), so the timed streams
// prefill as many tokens as without it.
func TestServeBenchWarmup(t *testing.T) {
	l, err := OpenModel("", BackendOptions{Name: "cpu", Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, warm := range []bool{false, true} {
		r, err := ServeBench(context.Background(), l, ServeBenchOptions{Streams: []int{8}, Prompt: 100, Gen: 32, Warmup: warm})
		if err != nil {
			t.Fatalf("warmup %v: %v", warm, err)
		}
		if len(r.Streams) != 1 {
			t.Fatalf("warmup %v: %d results", warm, len(r.Streams))
		}
		s := r.Streams[0]
		if s.Streams != 8 || !(s.TokS > 0) || s.PerS != s.TokS/8 {
			t.Errorf("warmup %v: %+v", warm, s)
		}
		if s.PrefixHitTokens != 0 {
			t.Errorf("warmup %v: %d prompt tokens found in the prefix cache, want none", warm, s.PrefixHitTokens)
		}
	}
}
