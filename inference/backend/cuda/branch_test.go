package cuda_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestBranchedGraph: a batch-1 step whose side run (Beside: a mixture of experts' shared
// experts, here three Q4_K products and a SwiGLU) is a branch of its graph gives the
// bits of the same step queued as one chain, in the step's first runs (launched
// directly), its second (the graph built) and later ones (replayed). Both runs round
// their activations to Q8_K: were the side's scratch the main run's, the branches would
// race.
func TestBranchedGraph(t *testing.T) {
	var got [2][][]uint32
	for i := range 2 {
		be := newOrSkip(t)
		if i == 1 {
			cuda.NoBranch(be)
		}
		e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(7, 8))}
		const embd, ffn = 1024, 2816
		x, res, nw := e.randn(1, embd, 1), e.randn(1, embd, 1), e.randn(1, embd, 0.3)
		sum, cur, so, out := e.zeros(quant.F32, 1, embd), e.zeros(quant.F32, 1, embd), e.zeros(quant.F32, 1, embd), e.zeros(quant.F32, 1, embd)
		g, u, m1, m2 := e.zeros(quant.F32, 1, ffn), e.zeros(quant.F32, 1, ffn), e.zeros(quant.F32, 1, ffn), e.zeros(quant.F32, 1, ffn)
		m3 := e.zeros(quant.F32, 1, embd)
		wg, wu, wd := e.q4k(ffn, embd), e.q4k(ffn, embd), e.q4k(embd, ffn)
		wa, wb, wc := e.q4k(ffn, embd), e.q4k(ffn, embd), e.q4k(embd, ffn)
		for range 5 {
			e.be.WriteF32(x, randVals(e.rng, embd))
			be.Add(sum, x, res)
			be.RMSNorm(cur, sum, nw, 1e-5)
			be.Beside(1, func() {
				be.MatMulShared(cur, []backend.Proj{{Dst: g, W: wg}, {Dst: u, W: wu}})
				be.SwiGLU(g, g, u)
				be.MatMul(so, wd, g)
			}, func() {
				be.MatMul(m1, wa, cur)
				be.MatMul(m2, wb, cur)
				be.SwiGLU(m1, m1, m2)
				be.MatMul(m3, wc, m1)
				be.Mul(m3, m3, m3)
				be.Add(m3, m3, cur)
			})
			be.Add(out, m3, so)
			be.Add(res, out, sum)
			got[i] = append(got[i], e.bits(out), e.bits(res))
		}
		if err := be.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := cuda.BranchedGraphs(be); (n > 0) != (i == 0) {
			t.Errorf("run %d (branches off: %v): %d graphs built with branches", i, i == 1, n)
		}
		if err := be.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for j := range got[0] {
		if !slices.Equal(got[0][j], got[1][j]) {
			t.Fatalf("output %d (step %d): branched and chained runs differ", j, j/2)
		}
	}
}

func randVals(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}
