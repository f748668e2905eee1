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
// V of another type each in a prompt of 300 rows), and each output matches the
// reference as the products run one by one do (NMSE < 1e-5) and those within 1e-9.
func TestLtPairs(t *testing.T) {
	rb := ref.New()
	for _, c := range []struct {
		n     int
		types []quant.Type
		rows  []int
		pairs int
	}{
		{64, []quant.Type{quant.Q4_K, quant.Q4_K}, []int{1024, 1024}, 2},
		{300, []quant.Type{quant.Q4_K, quant.Q4_K, quant.Q6_K}, []int{512, 256, 256}, 2},
		{300, []quant.Type{quant.Q4_K, quant.Q8_0}, []int{256, 256}, 0}, // other activation rounding: two calls
	} {
		const k = 1024
		name := fmt.Sprintf("%d rows, %v", c.n, c.types)
		var outs [2][][]float32
		for i, on := range []bool{false, true} {
			be := newLtOrSkip(t)
			cuda.SetF16Copies(be, true, 0)
			cuda.SetLtPairs(be, on)
			rng := rand.New(rand.NewPCG(21, 22))
			_, xb, xr := ltInput(t, be, rb, rng, c.n, k)
			var pb, pr []backend.Proj
			for j, typ := range c.types {
				data, _ := quantized(t, rng, typ, c.rows[j], k)
				wb, err := be.Weight(typ, c.rows[j], k, data)
				if err != nil {
					t.Fatal(err)
				}
				wr, _ := rb.Weight(typ, c.rows[j], k, data)
				pb = append(pb, backend.Proj{Dst: newF32(t, be, c.n, c.rows[j]), W: wb})
				pr = append(pr, backend.Proj{Dst: newF32(t, rb, c.n, c.rows[j]), W: wr})
			}
			backend.MatMulShared(be, xb, pb) // makes the copies
			p0, b0 := cuda.LtPaired(be), cuda.CublasProducts(be)
			backend.MatMulShared(be, xb, pb)
			if on {
				backend.MatMulShared(rb, xr, pr)
			}
			if got := cuda.LtPaired(be) - p0; on && got != c.pairs || !on && got != 0 {
				t.Errorf("%s, pairs %v: %d products in pairs", name, on, got)
			}
			if got := cuda.CublasProducts(be) - b0; got != len(c.types) {
				t.Errorf("%s, pairs %v: %d products on cuBLASLt, want %d", name, on, got, len(c.types))
			}
			for j := range pb {
				got := backendtest.ReadF32(t, be, pb[j].Dst)
				outs[i] = append(outs[i], got)
				if on {
					want := backendtest.ReadF32(t, rb, pr[j].Dst)
					if e := goldentest.NMSE(got, want); !(e < 1e-5) {
						t.Errorf("%s, projection %d: NMSE %.3g against the reference", name, j, e)
					}
					if e := goldentest.NMSE(got, outs[0][j]); !(e < 1e-9) {
						t.Errorf("%s, projection %d: NMSE %.3g against the products one by one", name, j, e)
					}
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
		data, _ := quantized(t, rng, quant.Q4_K, c.m, c.k)
		wb, err := be.Weight(quant.Q4_K, c.m, c.k, data)
		if err != nil {
			t.Fatal(err)
		}
		wr, _ := rb.Weight(quant.Q4_K, c.m, c.k, data)
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
