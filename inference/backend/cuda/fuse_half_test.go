package cuda_test

import (
	"fmt"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// newCublasOrSkip starts a backend whose products of 16+ rows go to cuBLASLt over the
// weights' f16 copies, or skips without a GPU or without cuBLASLt.
func newCublasOrSkip(t *testing.T) *cuda.Backend {
	t.Helper()
	b := newLtOrSkip(t)
	cuda.SetMMF(b, false, 0)
	cuda.SetCublas(b, 16, 0)
	return b
}

// TestFusedQ8KHalf: the f16 activation rows of a product on cuBLASLt (act_f16 of the
// Q8_K rows) are written by the kernel that rounded them, add_rms_norm_q8_k or
// swiglu_q8_k, with the bits of act_f16: Add + RMSNorm before two projections sharing
// the rounding (Q4_K and Q6_K: one Q8_K row, one f16 row), SwiGLU before one; batches
// of 16 and 64 rows, a Q8_K block with ties, an all-zero block. Below 16 rows the
// products stay on our kernels and nothing joins.
func TestFusedQ8KHalf(t *testing.T) {
	const k, m = 1280, 96
	for _, rows := range []int{5, 16, 64} {
		half := 0
		if rows >= 16 {
			half = 1 // act_f16 joins the kernel before it
		}
		checkFusedOn(t, newCublasOrSkip, fmt.Sprintf("add+norm, %d rows", rows), 2+half, func(e *fuseEnv) (func(), []backend.Tensor) {
			av := make([]float32, rows*k)
			for i := range av {
				av[i] = float32(e.rng.NormFloat64())
			}
			for i := 0; i < 256; i++ { // row 0, block 0: equal magnitudes, the first negative
				av[i] = float32(1 - 2*((i+1)%2))
			}
			a, b, w := e.vals(rows, k, av), e.zeros(quant.F32, rows, k), e.randn(1, k, 1)
			s := e.zeros(quant.F32, rows, k)
			d1, d2 := e.zeros(quant.F32, rows, m), e.zeros(quant.F32, rows, 2*m)
			w1, w2 := e.weight(quant.Q4_K, m, k), e.weight(quant.Q6_K, 2*m, k)
			// the weights' f16 copies made first: a copy made inside the ops queues
			// its dequantization between the norm and its rounding, and nothing joins
			backend.MatMulShared(e.be, e.randn(rows, k, 1), []backend.Proj{{Dst: d1, W: w1}, {Dst: d2, W: w2}})
			return func() {
				e.be.Add(s, a, b)
				e.be.RMSNorm(a, s, w, 1e-5)
				backend.MatMulShared(e.be, a, []backend.Proj{{Dst: d1, W: w1}, {Dst: d2, W: w2}})
			}, []backend.Tensor{s, a, d1, d2}
		})
		checkFusedOn(t, newCublasOrSkip, fmt.Sprintf("swiglu, %d rows", rows), 1+half, func(e *fuseEnv) (func(), []backend.Tensor) {
			gv := make([]float32, rows*k)
			for i := range gv {
				if i < 256 || i >= 512 { // row 0, block 1: all zero
					gv[i] = float32(e.rng.NormFloat64())
				}
			}
			g, u, d := e.vals(rows, k, gv), e.randn(rows, k, 1), e.zeros(quant.F32, rows, m)
			w := e.weight(quant.Q4_K, m, k)
			e.be.MatMul(d, w, e.randn(rows, k, 1)) // its f16 copy made first, as above
			return func() {
				e.be.SwiGLU(g, g, u)
				e.be.MatMul(d, w, g)
			}, []backend.Tensor{g, d}
		})
	}
}

// TestFusedMMGLayout: before mmg's gate and up pair, add_rms_norm_q8_k writes the f16
// activation rows in mmg_xl's layout itself (act_f16 and mmg_xl left out) with the bits
// of the separate launches: two Q4_K weights of 8576 rows (134 tiles: no K split) over
// 256 and 512 columns, batches of 16, 37 and 64 rows (the rows past the batch in the
// layout are not written, and no output depends on them).
func TestFusedMMGLayout(t *testing.T) {
	skipCompat(t)
	const m = 8576
	start := func(t *testing.T) *cuda.Backend {
		b := newLtOrSkip(t)
		if !cuda.SetMMG(b, true, 16) {
			b.Close()
			t.Skip("skipping: mmg's module is not loaded (not a Hopper GPU)")
		}
		return b
	}
	for _, k := range []int{256, 512} {
		for _, rows := range []int{16, 37, 64} {
			checkFusedOn(t, start, fmt.Sprintf("%d columns, %d rows", k, rows), 4, func(e *fuseEnv) (func(), []backend.Tensor) {
				a, b, w := e.randn(rows, k, 1), e.randn(rows, k, 1), e.randn(1, k, 1)
				s := e.zeros(quant.F32, rows, k)
				d1, d2 := e.zeros(quant.F32, rows, m), e.zeros(quant.F32, rows, m)
				w1, w2 := e.weight(quant.Q4_K, m, k), e.weight(quant.Q4_K, m, k)
				pair := []backend.Proj{{Dst: d1, W: w1}, {Dst: d2, W: w2}}
				// the packed copies made first: a copy made inside the ops queues its
				// packing between the norm and the product, and nothing joins
				backend.MatMulShared(e.be, e.randn(rows, k, 1), pair)
				before := cuda.MMGProducts(e.be)
				return func() {
					e.be.Add(s, a, b)
					e.be.RMSNorm(a, s, w, 1e-5)
					backend.MatMulShared(e.be, a, pair)
					if got := cuda.MMGProducts(e.be) - before; got != 2 {
						t.Errorf("%d columns, %d rows: %d products on mmg, want 2", k, rows, got)
					}
				}, []backend.Tensor{s, a, d1, d2}
			})
		}
	}
}

// TestFusedAttentionHalf: decode attention on attention_dec128 before an output
// projection on cuBLASLt (Llama-3.1-8B's 4096x4096, 16 and 64 rows) rounds its output
// to Q8_K and writes the f16 activation rows too (quant_q8_k and act_f16 joined: two
// launches fewer), with the bits of the separate launches in the attention output and
// the product. The rows share one cache here, so at 64 rows the prefill kernel would
// take them (the engine's 64 streams have a block table each): it is turned off.
func TestFusedAttentionHalf(t *testing.T) {
	const nhead, nkv, hd, ctx = 32, 8, 128, 600
	for _, rows := range []int{16, 64} {
		checkFusedOn(t, newCublasOrSkip, fmt.Sprintf("%d rows", rows), 2, func(e *fuseEnv) (func(), []backend.Tensor) {
			cuda.ShortAttention(e.be, false)
			cuda.SplitAttention(e.be, false)
			cuda.PrefillAttention(e.be, false)
			cuda.DecodeAttention(e.be, true)
			att, attend := decodeCase(e, rows, nhead, nkv, hd, ctx, 7)
			w := e.weight(quant.Q4_K, nhead*hd, nhead*hd)
			out := e.zeros(quant.F32, rows, nhead*hd)
			e.be.MatMul(out, w, e.randn(rows, nhead*hd, 1)) // the weight's f16 copy made first
			return func() {
				attend()
				e.be.MatMul(out, w, att)
			}, []backend.Tensor{att, out}
		})
	}
}
