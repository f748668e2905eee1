package cuda_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/quant"
)

// newOrSkip starts a backend on GPU 0 whose products all run on our kernels, or skips
// the test where there is no driver or GPU (CI has none). The conformance suite holds
// our kernels to the reference's rounding (integer dots of the activations rounded as
// the reference rounds them); the cuBLASLt path of large products and mmf's of batches
// (mmf.go) round weights and activations to f16 instead and have their own tests
// (cublaslt_test.go: newLtOrSkip; mmf_test.go).
func newOrSkip(t *testing.T) *cuda.Backend {
	t.Helper()
	b := newWith(t, cuda.Options{NoCublas: true})
	cuda.SetMMF(b, false, 0)
	return b
}

// skipCompat skips a test of kernels the compatibility PTX leaves out (Hopper's clusters,
// bulk copies, wgmma; kernels/cuda/sm80/hopper-only.txt) when $EMBER_CUDA_COMPAT runs
// the backend on it: there the backend never chooses them.
func skipCompat(t *testing.T) {
	t.Helper()
	if os.Getenv(cuda.CompatEnv) == "1" {
		t.Skipf("$%s=1: these kernels need Hopper", cuda.CompatEnv)
	}
}

// newWith starts a backend on GPU 0 with opt, or skips as newOrSkip does.
func newWith(t *testing.T, opt cuda.Options) *cuda.Backend {
	t.Helper()
	b, err := cuda.New(opt)
	if errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("skipping the CUDA tests: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConformance(t *testing.T) {
	b := newOrSkip(t)
	b.Close()
	t.Logf("device: %+v", b.Device())
	backendtest.Run(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
}

// TestArgMax: the argmax kernels (kernels/cuda/sample.cu: argmax_f32_c for wide rows at
// a 16-byte boundary on Hopper, argmax_f32 for the others) against sample.Greedy.
func TestArgMax(t *testing.T) {
	backendtest.RunArgMax(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
}

// TestArgMaxOneBlock is TestArgMax with every row on argmax_f32 (ArgMaxOneEnv).
func TestArgMaxOneBlock(t *testing.T) {
	t.Setenv(cuda.ArgMaxOneEnv, "1")
	backendtest.RunArgMax(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
}

// TestFeeder: ArgMaxAhead, Fed and the pending reads of decoding ahead of the host
// (feed.go).
func TestFeeder(t *testing.T) {
	backendtest.RunFeeder(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
}

// TestSampleAhead: SampleAhead's draws on the device (topk_f32, sample_top_f32) against
// the host sampler's from the same candidates and uniforms, bit for bit.
func TestSampleAhead(t *testing.T) {
	backendtest.RunSampleAhead(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
}

// TestConformanceLongContextKernels runs the suite with the attention kernels that long
// contexts use (no scores in shared memory).
func TestConformanceLongContextKernels(t *testing.T) {
	newOrSkip(t).Close()
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		b := newOrSkip(t)
		cuda.NoSharedAttention(b)
		return b
	})
}

// TestSplitAttention runs the attention tests (long contexts among them) with the
// split kernels chosen as decode chooses them, then forced on every shape they take (as
// one launch where the grid fits, attention_split1, with its tensor-core form where it
// takes the shapes and without it, and as the two-launch kernels), then off (the long
// contexts on the one-block-per-pair kernels).
func TestSplitAttention(t *testing.T) {
	newOrSkip(t).Close()
	for _, mode := range []string{"auto", "on", "on-simt", "on-two", "off"} {
		t.Run(mode, func(t *testing.T) {
			backendtest.RunAttention(t, func(t *testing.T) backend.Backend {
				b := newOrSkip(t)
				if mode != "auto" {
					cuda.SplitAttention(b, mode != "off")
				}
				switch mode {
				case "on-two":
					cuda.SplitAttentionTwo(b)
				case "on-simt":
					cuda.SplitTC(b, false)
				}
				return b
			})
		})
	}
}

// TestPrefillAttention runs the prefill-shaped attention cases with the tensor-core
// kernel chosen as prefill chooses it, then forced on every shape it takes (the other
// attention tests too: decode rows, long contexts), then off (attention_smem).
func TestPrefillAttention(t *testing.T) {
	newOrSkip(t).Close()
	for _, mode := range []string{"auto", "on", "off"} {
		t.Run(mode, func(t *testing.T) {
			newBackend := func(t *testing.T) backend.Backend {
				b := newOrSkip(t)
				if mode != "auto" {
					cuda.PrefillAttention(b, mode == "on")
				}
				return b
			}
			backendtest.RunPrefillAttention(t, newBackend)
			if mode == "on" {
				backendtest.RunAttention(t, newBackend)
			}
		})
	}
}

// TestLatentAttention runs DeepSeek's latent attention cases (head-major rows of one
// 576-dim KV head) with attention_mla and attention_mla_split chosen as auto chooses
// them, attention_mla forced on (the split off), the split forced on (one span of one
// key tile a token at least; "split3": at most three spans, so spans of several tiles),
// and both off.
func TestLatentAttention(t *testing.T) {
	newOrSkip(t).Close()
	for _, mode := range []string{"auto", "on", "split", "split3", "off"} {
		t.Run(mode, func(t *testing.T) {
			backendtest.RunLatentAttention(t, func(t *testing.T) backend.Backend {
				b := newOrSkip(t)
				switch mode {
				case "on", "off":
					cuda.MLAAttention(b, mode == "on")
					cuda.MLASplit(b, false, 0)
				case "split":
					cuda.MLASplit(b, true, 0)
				case "split3":
					cuda.MLASplit(b, true, 3)
				}
				return b
			})
		})
	}
}

// TestDecodeAttention runs the attention cases (long contexts, prompts, paged) with
// attention_dec64/128 taking every shape it can: the split and prefill kernels off.
func TestDecodeAttention(t *testing.T) {
	newOrSkip(t).Close()
	newBackend := func(t *testing.T) backend.Backend {
		b := newOrSkip(t)
		cuda.DecodeAttention(b, true)
		cuda.SplitAttention(b, false)
		cuda.PrefillAttention(b, false)
		return b
	}
	backendtest.RunAttention(t, newBackend)
	backendtest.RunPrefillAttention(t, newBackend)
	be := newBackend(t).(*cuda.Backend)
	pagedAttention(t, be)
	be.Close()
}

func TestNoDriverIsReported(t *testing.T) {
	_, err := cuda.Devices()
	if err != nil && !errors.Is(err, cuda.ErrNoDriver) {
		t.Fatalf("Devices: %v does not wrap ErrNoDriver", err)
	}
	t.Logf("Devices: err=%v, available=%v", err, cuda.Available())
}

// TestGraphReplay: a repeated batch of launches is replayed as a CUDA graph; each replay
// must see the inputs written before it.
func TestGraphReplay(t *testing.T) {
	be := newOrSkip(t)
	defer be.Close()
	const n = 1000
	mk := func() backend.Tensor {
		x, err := be.New(quant.F32, 1, n)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	a, b, o := mk(), mk(), mk()
	rng := rand.New(rand.NewPCG(1, 2))
	av, bv := make([]float32, n), make([]float32, n)
	for iter := 0; iter < 5; iter++ {
		for i := range av {
			av[i], bv[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		be.WriteF32(a, av)
		be.WriteF32(b, bv)
		be.Add(o, a, b)
		for k := 0; k < 10; k++ {
			be.Mul(o, o, b)
			be.Add(o, o, a)
		}
		got := make([]float32, n)
		if err := be.ReadF32(context.Background(), o, got); err != nil {
			t.Fatal(err)
		}
		for i := range av {
			w := av[i] + bv[i]
			for k := 0; k < 10; k++ {
				w = float32(w * bv[i])
				w = w + av[i]
			}
			if got[i] != w {
				t.Fatalf("iteration %d element %d: got %g, want %g", iter, i, got[i], w)
			}
		}
	}
}

// TestMatMulSharedQ8_0: the fused single-row projections with Q8_0 weights (backendtest
// covers Q4_K/Q6_K) equal the reference MatMul.
func TestMatMulSharedQ8_0(t *testing.T) {
	be := newOrSkip(t)
	defer be.Close()
	r := ref.New()
	rng := rand.New(rand.NewPCG(3, 4))
	const k = 512
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	xb, _ := be.New(quant.F32, 1, k)
	be.WriteF32(xb, x)
	xr, _ := r.New(quant.F32, 1, k)
	r.WriteF32(xr, x)
	var projs []backend.Proj
	var want [][]float32
	for _, m := range []int{40, 24, 8} {
		w := make([]float32, m*k)
		for i := range w {
			w[i] = float32(rng.NormFloat64() * 0.05)
		}
		data := make([]byte, m*k/32*34)
		if err := quant.Quantize(quant.Q8_0, w, data); err != nil {
			t.Fatal(err)
		}
		wb, err := be.Weight(quant.Q8_0, m, k, data)
		if err != nil {
			t.Fatal(err)
		}
		wr, _ := r.Weight(quant.Q8_0, m, k, data)
		db, _ := be.New(quant.F32, 1, m)
		dr, _ := r.New(quant.F32, 1, m)
		r.MatMul(dr, wr, xr)
		v := make([]float32, m)
		if err := r.ReadF32(context.Background(), dr, v); err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
		projs = append(projs, backend.Proj{Dst: db, W: wb})
	}
	be.MatMulShared(xb, projs)
	for j, p := range projs {
		got := make([]float32, p.Dst.Cols())
		if err := be.ReadF32(context.Background(), p.Dst, got); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if d := math.Abs(float64(got[i] - want[j][i])); d > 2e-5*0.05*math.Sqrt(k) {
				t.Fatalf("projection %d row %d: got %g, want %g", j, i, got[i], want[j][i])
			}
		}
	}
}

// TestFusedQuantization: RMSNorm or SwiGLU followed by a K-quant MatMul of its output
// (fused into one kernel) gives the reference's output and product.
func TestFusedQuantization(t *testing.T) {
	be := newOrSkip(t)
	defer be.Close()
	r := ref.New()
	rng := rand.New(rand.NewPCG(8, 9))
	const k, m = 512, 48
	randn := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * s)
		}
		return v
	}
	wdata := make([]byte, m*k/256*144)
	if err := quant.Quantize(quant.Q4_K, randn(m*k, 0.05), wdata); err != nil {
		t.Fatal(err)
	}
	for _, rows := range []int{1, 3} {
		a, b2, nw := randn(rows*k, 2), randn(rows*k, 2), randn(k, 1)
		for _, op := range []string{"rmsnorm", "swiglu"} {
			var outs [2][2][]float32
			for bi, bk := range []backend.Backend{r, be} {
				in := func(v []float32, rr int) backend.Tensor {
					x, _ := bk.New(quant.F32, rr, len(v)/rr)
					bk.WriteF32(x, v)
					return x
				}
				x, y, w := in(a, rows), in(b2, rows), in(nw, 1)
				h, _ := bk.New(quant.F32, rows, k)
				d, _ := bk.New(quant.F32, rows, m)
				wt, err := bk.Weight(quant.Q4_K, m, k, wdata)
				if err != nil {
					t.Fatal(err)
				}
				if op == "rmsnorm" {
					bk.RMSNorm(h, x, w, 1e-5)
				} else {
					bk.SwiGLU(h, x, y)
				}
				bk.MatMul(d, wt, h)
				for j, tt := range []backend.Tensor{h, d} {
					v := make([]float32, tt.Rows()*tt.Cols())
					if err := bk.ReadF32(context.Background(), tt, v); err != nil {
						t.Fatal(err)
					}
					outs[bi][j] = v
				}
			}
			for j, name := range []string{"output", "product"} {
				want, got := outs[0][j], outs[1][j]
				for i := range want {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
						t.Fatalf("%s rows=%d %s[%d]: got %g, want %g", op, rows, name, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestQueuedWrites: host writes are queued on the stream through pinned memory; the
// caller's slice is reused at once, and more bytes than the stage holds are written
// between reads. Two different batches alternate, so each becomes a graph of its own
// (graphs are kept per batch, not only for the batch just before).
func TestQueuedWrites(t *testing.T) {
	be := newOrSkip(t)
	defer be.Close()
	const n = 6 << 20 // 24 MiB a write: the 64 MiB stage fills every third write
	mk := func() backend.Tensor {
		x, err := be.New(quant.F32, 1, n)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	a, o := mk(), mk()
	be.WriteF32(o, make([]float32, n))
	vals, want := make([]float32, n), make([]float32, n)
	for iter := 0; iter < 7; iter++ {
		for i := range vals {
			vals[i] = float32(iter*3 + i%5)
			want[i] += vals[i]
		}
		be.WriteF32(a, vals)
		be.Add(o, o, a)
	}
	got := make([]float32, n)
	if err := be.ReadF32(context.Background(), o, got); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d: got %g, want %g", i, got[i], want[i])
		}
	}

	// Alternating batches of 10 launches, small writes between them.
	x, y := mk(), mk()
	xv, yv := make([]float32, n), make([]float32, n)
	for iter := 0; iter < 6; iter++ {
		for i := 0; i < 64; i++ {
			xv[i], yv[i] = float32(iter+i), float32(2*iter-i)
		}
		be.WriteF32(x, xv)
		be.WriteF32(y, yv)
		for k := 0; k < 10; k++ {
			if iter%2 == 0 {
				be.Add(x, x, y)
			} else {
				be.Mul(y, y, x)
			}
		}
		out, src := x, xv
		if iter%2 == 1 {
			out, src = y, yv
		}
		if err := be.ReadF32(context.Background(), out, got); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 64; i++ {
			w := src[i]
			for k := 0; k < 10; k++ {
				if iter%2 == 0 {
					w += yv[i]
				} else {
					w *= xv[i]
				}
			}
			if got[i] != w {
				t.Fatalf("iteration %d element %d: got %g, want %g", iter, i, got[i], w)
			}
		}
	}
}
