package cuda_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
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

// TestPrefillProducts times the prefill products of Llama-3.1-8B shapes (Q4_K and Q6_K;
// 512 and 2,048 activation rows) on our tensor-core kernel (mmq), on mmf (below 256
// rows, mmf.go) and on cuBLASLt (the f16 GEMM over the weight's f16 copy, f16copy.go),
// each call including the
// activation's rounding, to choose the row count from which products go to cuBLASLt
// (EMBER_CUDA_CUBLAS_MIN_ROWS, Options.CublasMinRows). It runs only with
// EMBER_CUDA_BENCH set: go test -run PrefillProducts -v with a GPU. EMBER_CUDA_BENCH_ROWS
// (comma-separated) replaces the row counts, e.g. 64 for a batched decode step, and
// EMBER_CUDA_BENCH_SHAPES the weight shapes (e.g. 14336x4096).
func TestPrefillProducts(t *testing.T) {
	if os.Getenv("EMBER_CUDA_BENCH") == "" {
		t.Skip("set EMBER_CUDA_BENCH=1 to measure")
	}
	be := newWith(t, cuda.Options{})
	defer be.Close()
	lt, why := cuda.CublasAvailable(be)
	if !lt {
		t.Logf("no cuBLASLt (%s): timing mmq only", why)
	}
	rows := []int{512, 2048}
	if v := os.Getenv("EMBER_CUDA_BENCH_ROWS"); v != "" {
		rows = rows[:0]
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("EMBER_CUDA_BENCH_ROWS: %q is not a row count", f)
			}
			rows = append(rows, n)
		}
	}
	shapes := [][2]int{{1024, 4096}, {4096, 4096}, {14336, 4096}, {4096, 14336}}
	if v := os.Getenv("EMBER_CUDA_BENCH_SHAPES"); v != "" {
		shapes = shapes[:0]
		for _, f := range strings.Split(v, ",") {
			var m, k int
			if _, err := fmt.Sscanf(strings.TrimSpace(f), "%dx%d", &m, &k); err != nil || m < 1 || k < 256 || k%256 != 0 {
				t.Fatalf("EMBER_CUDA_BENCH_SHAPES: %q is not ROWSxCOLS (COLS a multiple of 256)", f)
			}
			shapes = append(shapes, [2]int{m, k})
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K} {
		for _, s := range shapes {
			m, k := s[0], s[1]
			rb, _ := quant.RowBytes(typ, uint64(k))
			data := make([]byte, m*int(rb))
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
			w, err := be.Weight(typ, m, k, data)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range rows {
				x, _ := be.New(quant.F32, n, k)
				d, _ := be.New(quant.F32, n, m)
				xv := make([]float32, n*k)
				for i := range xv {
					xv[i] = float32(rng.NormFloat64())
				}
				be.WriteF32(x, xv)
				ops := 2 * float64(m) * float64(k) * float64(n)
				line := fmt.Sprintf("%v %dx%d, %d rows:", typ, m, k, n)
				for _, name := range []string{"mmq", "mmf", "cuBLASLt"} {
					useLt, useMF := name == "cuBLASLt", name == "mmf"
					if useLt && !lt || useMF && n >= 256 {
						continue
					}
					minRows := 1 << 30
					if useLt {
						minRows = 1
					}
					cuda.SetCublas(be, minRows, 0)
					cuda.SetF16Copies(be, useLt, 0) // mmq, mmf: no product on a copy either
					cuda.SetMMF(be, useMF, 1)
					before, beforeMF := cuda.CublasProducts(be), cuda.MMFProducts(be)
					us := timeProduct(t, be, d, w, x)
					if ran := cuda.CublasProducts(be) > before; ran != useLt {
						t.Fatalf("%s %s: cuBLASLt ran: %v", line, name, ran)
					}
					if ran := cuda.MMFProducts(be) > beforeMF; ran != useMF {
						t.Fatalf("%s %s: mmf ran: %v", line, name, ran)
					}
					line += fmt.Sprintf(" %s %.1f us (%.0f TOP/s)", name, us, ops/us/1e6)
				}
				t.Log(line)
				be.Free(x)
				be.Free(d)
			}
			be.Free(w)
		}
	}
}

// timeProduct is the mean time of one MatMul in microseconds, after two to warm up.
func timeProduct(t *testing.T, be backend.Backend, d, w, x backend.Tensor) float64 {
	return timeQueued(t, be, func() { be.MatMul(d, w, x) })
}

// timeQueued is the mean time of one call of op in microseconds: 20 calls queued, then
// a Sync, as the third such batch. The first batch of 20 is launched kernel by kernel
// (a batch is made a graph when it is seen again: graph.go) and the second records its
// graph, so the third replays it, as a decode step's kernels run (each starting while
// the one before finishes). Timed as the first batch, short kernels read the host's
// launch cost instead: session 9's one-token attention over ~100 positions read 13-17
// us on every kernel.
func timeQueued(t *testing.T, be backend.Backend, op func()) float64 {
	run := func(reps int) time.Duration {
		t0 := time.Now()
		for r := 0; r < reps; r++ {
			op()
		}
		if err := be.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	}
	const reps = 20
	run(reps)
	run(reps)
	return run(reps).Seconds() / reps * 1e6
}
