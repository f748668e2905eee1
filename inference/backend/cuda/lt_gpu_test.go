package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/model/goldentest"
	"ember/inference/quant"
)

// Products on cuBLASLt in pairs (ltpair.go) and tuned (lttune.go), on a GPU.

// TestLtPairs (GPU): MatMulShared with pairs on (ltpair.go) runs two projections of one
// shape over f16 copies as one batched product (gate and up of 64 rows; Q, then K and
// V of another type each in a prompt of 300 rows; the shapes of Llama-3.1-8B's gate
// and up and DeepSeek-V2-Lite's shared experts at 64 and 512 rows), and each output
// matches the products run one by one (NMSE < 1e-9) and, for the small shapes, the
// reference (NMSE < 1e-5). Outputs that lie the other way round from their weights
// (rev) are no pair: they run as two calls. Where the allocator puts the large copies
// decides whether the large shapes pair (pairs -1: either way).
func TestLtPairs(t *testing.T) {
	rb := ref.New()
	for _, c := range []struct {
		n, k  int
		types []quant.Type
		rows  []int
		rev   bool
		pairs int
	}{
		{64, 1024, []quant.Type{quant.Q4_K, quant.Q4_K}, []int{1024, 1024}, false, 2},
		{64, 1024, []quant.Type{quant.Q4_K, quant.Q4_K}, []int{1024, 1024}, true, 0},
		{300, 1024, []quant.Type{quant.Q4_K, quant.Q4_K, quant.Q6_K}, []int{512, 256, 256}, false, 2},
		{300, 1024, []quant.Type{quant.Q4_K, quant.Q8_0}, []int{256, 256}, false, 0}, // other rounding: two calls
		{64, 2048, []quant.Type{quant.Q4_K, quant.Q4_K}, []int{2816, 2816}, false, -1},
		{512, 2048, []quant.Type{quant.Q4_K, quant.Q4_K}, []int{2816, 2816}, false, -1},
		{512, 4096, []quant.Type{quant.Q4_K, quant.Q4_K}, []int{14336, 14336}, false, -1},
		{64, 4096, []quant.Type{quant.Q4_K, quant.Q4_K}, []int{14336, 14336}, false, -1},
	} {
		name := fmt.Sprintf("%d rows, %v %v x %d, reversed %v", c.n, c.types, c.rows, c.k, c.rev)
		small := c.n*c.rows[0]*c.k <= 300*1024*1024
		var outs [2][][]float32
		for i, on := range []bool{false, true} {
			be := newLtOrSkip(t)
			cuda.SetF16Copies(be, true, 0)
			cuda.SetLtPairs(be, on)
			cuda.SetMMG(be, false, 0) // cuBLASLt's pairs, not mmg's (on by default at 48+ rows)
			rng := rand.New(rand.NewPCG(21, 22))
			_, xb, xr := ltInput(t, be, rb, rng, c.n, c.k)
			pb := make([]backend.Proj, len(c.types))
			pr := make([]backend.Proj, len(c.types))
			for j, typ := range c.types {
				data, _ := quantized(t, rng, typ, c.rows[j], c.k)
				wb, err := be.Weight(typ, c.rows[j], c.k, data)
				if err != nil {
					t.Fatal(err)
				}
				pb[j].W = wb
				if small {
					pr[j].W, _ = rb.Weight(typ, c.rows[j], c.k, data)
					pr[j].Dst = newF32(t, rb, c.n, c.rows[j])
				}
			}
			for jj := range pb { // the outputs in the weights' order, or the other way round
				j := jj
				if c.rev {
					j = len(pb) - 1 - jj
				}
				pb[j].Dst = newF32(t, be, c.n, c.rows[j])
			}
			backend.MatMulShared(be, xb, pb) // makes the copies
			p0, b0 := cuda.LtPaired(be), cuda.CublasProducts(be)
			backend.MatMulShared(be, xb, pb)
			if on && small {
				backend.MatMulShared(rb, xr, pr)
			}
			if got := cuda.LtPaired(be) - p0; on && c.pairs >= 0 && got != c.pairs || !on && got != 0 || got%2 != 0 {
				t.Errorf("%s, pairs %v: %d products in pairs", name, on, got)
			}
			if got := cuda.CublasProducts(be) - b0; got != len(c.types) {
				t.Errorf("%s, pairs %v: %d products on cuBLASLt, want %d", name, on, got, len(c.types))
			}
			for j := range pb {
				got := backendtest.ReadF32(t, be, pb[j].Dst)
				outs[i] = append(outs[i], got)
				if !on {
					continue
				}
				if small {
					want := backendtest.ReadF32(t, rb, pr[j].Dst)
					if e := goldentest.NMSE(got, want); !(e < 1e-5) {
						t.Errorf("%s, projection %d: NMSE %.3g against the reference", name, j, e)
					}
				}
				if e := goldentest.NMSE(got, outs[0][j]); !(e < 1e-9) {
					t.Errorf("%s, projection %d: NMSE %.3g against the products one by one", name, j, e)
				}
			}
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestLtTune (GPU): with tuning on (lttune.go), products of 64 rows over f16 copies and
// a prompt's on dequantized chunks match the reference (NMSE < 1e-5), their plans are
// tuned (at their first product), and a repeated product gives the same bits.
func TestLtTune(t *testing.T) {
	be := newLtOrSkip(t)
	defer be.Close()
	cuda.SetLtTune(be, true)
	rb := ref.New()
	rng := rand.New(rand.NewPCG(23, 24))
	for _, c := range []struct {
		n, m, k, chunk int
		copies         bool
	}{{64, 2048, 1024, 0, true}, {300, 512, 1024, 128, false}} {
		cuda.SetCublas(be, 256, c.chunk)
		cuda.SetF16Copies(be, c.copies, 0)
		name := fmt.Sprintf("%d rows, %dx%d", c.n, c.m, c.k)
		wb, wr := weightPair(t, be, rb, rng, quant.Q4_K, c.m, c.k)
		_, xb, xr := ltInput(t, be, rb, rng, c.n, c.k)
		db, dr := newF32(t, be, c.n, c.m), newF32(t, rb, c.n, c.m)
		tuned := cuda.LtTuned(be)
		be.MatMul(db, wb, xb)
		rb.MatMul(dr, wr, xr)
		got, want := backendtest.ReadF32(t, be, db), backendtest.ReadF32(t, rb, dr)
		if e := goldentest.NMSE(got, want); !(e < 1e-5) {
			t.Errorf("%s: NMSE %.3g against the reference", name, e)
		}
		t.Logf("%s: %d plans tuned", name, cuda.LtTuned(be)-tuned)
		be.MatMul(db, wb, xb)
		if i := firstOtherBits(got, backendtest.ReadF32(t, be, db)); i >= 0 {
			t.Errorf("%s: a repeated product differs at %d", name, i)
		}
		be.Free(wb)
		be.Free(xb)
		be.Free(db)
	}
}
