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

// split1Runs reports whether attention_split1 may run on GPU 0 (two of its blocks fit an
// SM's shared memory; not on an RTX card or under a lower $EMBER_CUDA_SMEM_LIMIT).
func split1Runs(t *testing.T) bool {
	t.Helper()
	be := newOrSkip(t)
	defer be.Close()
	return cuda.Split1Fits(be)
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

// TestArgMax: the argmax kernel (kernels/cuda/sample.cu) against sample.Greedy.
func TestArgMax(t *testing.T) {
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

// TestPagedAttention: attention through a block table (blocks shuffled, a shared
// prefix block, two sequences) equals the reference on each sequence's contiguous cache.
func TestPagedAttention(t *testing.T) {
	for _, long := range []bool{false, true} {
		be := newOrSkip(t)
		if long {
			cuda.NoSharedAttention(be)
		}
		pagedAttention(t, be)
		be.Close()
	}
}

func pagedAttention(t *testing.T, be *cuda.Backend) {
	rng := rand.New(rand.NewPCG(7, 7))
	const nh, nkv, hd, bs, nblocks = 8, 2, 64, 16, 12
	width := nkv * hd
	rows := nblocks * bs
	kv := [2][]float32{make([]float32, rows*width), make([]float32, rows*width)}
	for _, c := range kv {
		for i := range c {
			c[i] = float32(rng.NormFloat64())
		}
	}
	// Sequence 0 uses blocks 5, 2, 9; sequence 1 shares block 5 and then 0, 11.
	table := []int32{5, 2, 9, 5, 0, 11}
	seqOf := []int32{0, 0, 1, 1, 1}
	pos := []int32{40, 3, 47, 16, 33}
	q := make([]float32, len(pos)*nh*hd)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	a := backend.Attention{NHead: nh, NKVHead: nkv, HeadDim: hd, VHeadDim: hd, Scale: 0.125}

	up := func(be backend.Backend, typ quant.Type, r, c int, f32 []float32, i32 []int32) backend.Tensor {
		x, err := be.New(typ, r, c)
		if err != nil {
			t.Fatal(err)
		}
		if i32 != nil {
			be.WriteI32(x, i32)
		} else {
			be.WriteF32(x, f32)
		}
		return x
	}
	cache := func(be backend.Backend, vals []float32, n int) backend.Tensor {
		src := up(be, quant.F32, n, width, vals, nil)
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		dst, err := be.New(quant.F16, n, width)
		if err != nil {
			t.Fatal(err)
		}
		be.SetRows(dst, src, up(be, quant.I32, n, 1, nil, all))
		return dst
	}
	p := a
	p.Table, p.Seq, p.BlockSize = up(be, quant.I32, 2, 3, nil, table), up(be, quant.I32, len(pos), 1, nil, seqOf), bs
	out := up(be, quant.F32, len(pos), nh*hd, make([]float32, len(pos)*nh*hd), nil)
	be.Attention(out, up(be, quant.F32, len(pos), nh*hd, q, nil), cache(be, kv[0], rows), cache(be, kv[1], rows),
		up(be, quant.I32, len(pos), 1, nil, pos), p)
	got := make([]float32, len(pos)*nh*hd)
	if err := be.ReadF32(context.Background(), out, got); err != nil {
		t.Fatal(err)
	}
	r := ref.New()
	for i, ps := range pos {
		n := int(ps) + 1
		var seqKV [2][]float32
		for c := range kv {
			for tpos := 0; tpos < n; tpos++ {
				row := backend.Row(table[3*seqOf[i]:3*seqOf[i]+3], bs, tpos)
				seqKV[c] = append(seqKV[c], kv[c][row*width:(row+1)*width]...)
			}
		}
		o := up(r, quant.F32, 1, nh*hd, make([]float32, nh*hd), nil)
		r.Attention(o, up(r, quant.F32, 1, nh*hd, q[i*nh*hd:(i+1)*nh*hd], nil), cache(r, seqKV[0], n),
			cache(r, seqKV[1], n), up(r, quant.I32, 1, 1, nil, []int32{ps}), a)
		want := make([]float32, nh*hd)
		if err := r.ReadF32(context.Background(), o, want); err != nil {
			t.Fatal(err)
		}
		for j, w := range want {
			if g := got[i*nh*hd+j]; math.Abs(float64(g-w)) > 2e-3 {
				t.Fatalf("query %d (sequence %d, position %d) dim %d: got %g, want %g", i, seqOf[i], ps, j, g, w)
			}
		}
	}
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
