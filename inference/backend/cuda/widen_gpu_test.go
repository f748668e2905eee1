package cuda_test

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestWidenQ5Products: by default a Q5_0 weight is stored as Q8_0 (its Type says so),
// with $EMBER_CUDA_WIDEN=0 as Q5_0, and the batch-1 products of backendtest.RunMatVec,
// Q5_0's among them, match the Go reference on widened weights. (TestMain sets the
// variable to 0 for the rest of the package, so that its Q5_0 tests keep the Q5_0
// kernels under test.)
func TestWidenQ5Products(t *testing.T) {
	for _, c := range []struct {
		env  string
		want quant.Type
	}{{"", quant.Q8_0}, {"1", quant.Q8_0}, {"0", quant.Q5_0}} {
		t.Setenv(cuda.WidenEnv, c.env)
		b := newOrSkip(t)
		w, err := b.Weight(quant.Q5_0, 3, 64, make([]byte, 3*44))
		if err != nil {
			t.Fatal(err)
		}
		if w.Type() != c.want {
			t.Fatalf("a Q5_0 weight with $%s=%q is stored as %v, want %v", cuda.WidenEnv, c.env, w.Type(), c.want)
		}
		b.Free(w)
		b.Close()
	}
	t.Setenv(cuda.WidenEnv, "")
	backendtest.RunMatVec(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
}
