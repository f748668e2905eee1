package cuda_test

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestWidenQ5Products: with $EMBER_CUDA_WIDEN=1 a Q5_0 weight is stored as Q8_0 (its
// Type says so), and the batch-1 products of backendtest.RunMatVec, Q5_0's among them,
// match the Go reference on widened weights.
func TestWidenQ5Products(t *testing.T) {
	t.Setenv(cuda.WidenEnv, "1")
	b := newOrSkip(t)
	w, err := b.Weight(quant.Q5_0, 3, 64, make([]byte, 3*44))
	if err != nil {
		t.Fatal(err)
	}
	if w.Type() != quant.Q8_0 {
		t.Fatalf("a Q5_0 weight with $%s=1 is stored as %v, want Q8_0", cuda.WidenEnv, w.Type())
	}
	b.Free(w)
	b.Close()
	backendtest.RunMatVec(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
}
