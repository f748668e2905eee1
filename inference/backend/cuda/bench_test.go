package cuda_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"ember/inference/backend"
	"ember/inference/quant"
)

// mat is one weight matrix of a mat-vec benchmark case.
type mat struct {
	typ  quant.Type
	m, k int
}

// TestMatVecBandwidth measures the decode matrix-vector products (one activation row) on
// 8B-sized weights, eight copies of each case's matrices in turn so that L2 holds none of
// them: single products (MatMul, mmv_*_1) and Llama-3.1-8B Q4_K_M's fused ones
// (MatMulShared, mmv_multi: Q/K/V, gate/up). Each call includes the activation's
// quantization. It runs only with EMBER_CUDA_BENCH set: go test -run MatVecBandwidth -v
// with a GPU.
func TestMatVecBandwidth(t *testing.T) {
	if os.Getenv("EMBER_CUDA_BENCH") == "" {
		t.Skip("set EMBER_CUDA_BENCH=1 to measure")
	}
	be := newOrSkip(t)
	defer be.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range [][]mat{
		{{quant.Q4_K, 14336, 4096}}, {{quant.Q4_K, 4096, 14336}}, {{quant.Q4_K, 4096, 4096}}, {{quant.Q4_K, 1024, 4096}},
		{{quant.Q6_K, 4096, 14336}}, {{quant.Q6_K, 1024, 4096}}, {{quant.Q6_K, 14336, 4096}},
		{{quant.Q8_0, 14336, 4096}}, {{quant.Q8_0, 4096, 14336}}, {{quant.Q8_0, 4096, 4096}},
		{{quant.Q4_K, 4096, 4096}, {quant.Q4_K, 1024, 4096}, {quant.Q6_K, 1024, 4096}}, // Q/K/V
		{{quant.Q4_K, 14336, 4096}, {quant.Q4_K, 14336, 4096}},                         // gate/up
		{{quant.Q8_0, 4096, 4096}, {quant.Q8_0, 1024, 4096}, {quant.Q8_0, 1024, 4096}},
	} {
		benchMatVec(t, be, rng, c)
	}
}

// benchMatVec times the products of c (one MatMul, or one MatMulShared of all of c).
func benchMatVec(t *testing.T, be backend.Backend, rng *rand.Rand, c []mat) {
	const nw = 8
	k := c[0].k
	var ws [nw][]backend.Tensor
	var outs []backend.Tensor
	var names []string
	total := 0.0
	for _, mt := range c {
		rb, _ := quant.RowBytes(mt.typ, uint64(mt.k))
		data := make([]byte, mt.m*int(rb))
		for i := 0; i < nw; i++ {
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			w, err := be.Weight(mt.typ, mt.m, mt.k, data)
			if err != nil {
				t.Fatal(err)
			}
			ws[i] = append(ws[i], w)
		}
		d, _ := be.New(quant.F32, 1, mt.m)
		outs = append(outs, d)
		names = append(names, fmt.Sprintf("%v %dx%d", mt.typ, mt.m, mt.k))
		total += float64(mt.m) * float64(rb)
	}
	x, _ := be.New(quant.F32, 1, k)
	xv := make([]float32, k)
	for i := range xv {
		xv[i] = float32(rng.NormFloat64())
	}
	be.WriteF32(x, xv)
	run := func(reps int) time.Duration {
		t0 := time.Now()
		for r := 0; r < reps; r++ {
			for _, w := range ws {
				if len(w) == 1 {
					be.MatMul(outs[0], w[0], x)
					continue
				}
				projs := make([]backend.Proj, len(w))
				for j := range w {
					projs[j] = backend.Proj{Dst: outs[j], W: w[j]}
				}
				backend.MatMulShared(be, x, projs)
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
	name := names[0]
	if len(c) > 1 {
		name = "shared " + strings.Join(names, " + ")
	}
	t.Logf("%s: %.1f us/call, %.2f TB/s", name, el.Seconds()/float64(calls)*1e6, total*float64(calls)/el.Seconds()/1e12)
	for _, w := range ws {
		for _, m := range w {
			be.Free(m)
		}
	}
	for _, o := range outs {
		be.Free(o)
	}
	be.Free(x)
}
