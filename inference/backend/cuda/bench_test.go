package cuda_test

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestMatVecBandwidth measures the decode matrix-vector products (one activation row) on
// 8B-sized weights, eight matrices in turn so that L2 holds none of them. It runs only
// with EMBER_CUDA_BENCH set: go test -run MatVecBandwidth -v with a GPU.
func TestMatVecBandwidth(t *testing.T) {
	if os.Getenv("EMBER_CUDA_BENCH") == "" {
		t.Skip("set EMBER_CUDA_BENCH=1 to measure")
	}
	be := newOrSkip(t)
	defer be.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		typ  quant.Type
		m, k int
	}{
		{quant.Q4_K, 14336, 4096}, {quant.Q4_K, 4096, 14336}, {quant.Q4_K, 4096, 4096},
		{quant.Q6_K, 4096, 14336}, {quant.Q6_K, 1024, 4096}, {quant.Q8_0, 14336, 4096},
	} {
		rb, _ := quant.RowBytes(c.typ, uint64(c.k))
		const nw = 8
		var ws []backend.Tensor
		data := make([]byte, c.m*int(rb))
		for i := 0; i < nw; i++ {
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			w, err := be.Weight(c.typ, c.m, c.k, data)
			if err != nil {
				t.Fatal(err)
			}
			ws = append(ws, w)
		}
		x, _ := be.New(quant.F32, 1, c.k)
		xv := make([]float32, c.k)
		for i := range xv {
			xv[i] = float32(rng.NormFloat64())
		}
		be.WriteF32(x, xv)
		d, _ := be.New(quant.F32, 1, c.m)
		run := func(reps int) time.Duration {
			t0 := time.Now()
			for r := 0; r < reps; r++ {
				for _, w := range ws {
					be.MatMul(d, w, x)
				}
			}
			if err := be.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			return time.Since(t0)
		}
		run(2)
		const reps = 25
		el := run(reps)
		calls := reps * nw
		bytes := float64(calls) * float64(c.m) * float64(rb)
		t.Logf("%v %dx%d: %.1f us/call, %.2f TB/s", c.typ, c.m, c.k, el.Seconds()/float64(calls)*1e6, bytes/el.Seconds()/1e12)
		for _, w := range ws {
			be.Free(w)
		}
	}
}
