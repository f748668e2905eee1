package cuda_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestF32WeightRow (GPU): one activation row's product with an F32 weight on
// mmv_f32_1w (its weights loaded before the kernel's wait) gives mmv_f32_1's bits
// (F32WeightEnv 0), at widths all in the preloaded weights (a mixture of experts'
// router, 2,048), past them (the rest loaded after the wait) and of lanes with no
// element or a partial last round; the product is queued after another op, so the
// preloads overlap a kernel before it.
func TestF32WeightRow(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{64, 2048}, {7, 130}, {5, 4100}, {3, 100}, {9, 448}} {
		var got [2][]uint32
		for run := range 2 {
			t.Setenv(cuda.F32WeightEnv, []string{"1", "0"}[run])
			be := newOrSkip(t)
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(3, uint64(c.cols)))}
			v := make([]float32, c.rows*c.cols)
			for i := range v {
				v[i] = float32(e.rng.NormFloat64() * 0.05)
			}
			w, err := be.Weight(quant.F32, c.rows, c.cols, f32Bytes(v))
			if err != nil {
				t.Fatal(err)
			}
			a, b, x, d := e.randn(1, c.cols, 1), e.randn(1, c.cols, 1), e.zeros(quant.F32, 1, c.cols), e.zeros(quant.F32, 1, c.rows)
			if err := be.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			be.Add(x, a, b)
			be.MatMul(d, w, x)
			want := []string{"mmv_f32_1w", "mmv_f32_1"}[run]
			if q := cuda.Queued(be); len(q) == 0 || q[len(q)-1] != want {
				t.Fatalf("%dx%d (F32W %d): launches %v, want %s last", c.rows, c.cols, 1-run, q, want)
			}
			got[run] = e.bits(d)
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for i := range got[0] {
			if got[0][i] != got[1][i] {
				t.Fatalf("%dx%d: row %d: mmv_f32_1w %#x, mmv_f32_1 %#x", c.rows, c.cols, i, got[0][i], got[1][i])
			}
		}
	}
}
