package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// RunMatVec runs testMatVecRows: the one-row products of the weight types a GPU
// backend has dedicated decode kernels for, at the row counts and row lengths where
// those kernels change how they split the work.
func RunMatVec(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	withPair(t, newBackend, rand.NewPCG(9, 10), testMatVecRows)
}

// testMatVecRows checks one-row products of Q4_K, Q6_K, Q8_0, Q4_0, Q5_0, Q4_1, Q5_1,
// Q5_K, Q2_K, Q3_K, F16 and BF16 (the CUDA backend's mv1 kernels take 16, 8, 12, 16, 16,
// 16, 16, 8, 8, 8, 8 and 8 rows a block): row counts below, at and past a block's rows, one weight block a
// row (K 256 or 32; 8 values, one 16-byte chunk, for F16 and BF16, and rows of 100 that
// are not whole chunks), rows whose blocks start off 16-byte boundaries (Q2_K, Q3_K: 3,
// 9 and 56 blocks), long rows, and rows too long for the activation to fit a GPU's
// shared memory;
// then fused projections (MatMulShared) of odd row counts, and per-head groups
// (MatMulGroups).
func testMatVecRows(p *pair) {
	tol := func(k int) float64 { return 0.05 * math.Sqrt(float64(k)) }
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_1, quant.Q5_1, quant.Q5_K, quant.Q2_K,
		quant.Q3_K, quant.F16, quant.BF16} {
		ks := []int{256, 768, 14336, 40960}
		if typ == quant.Q2_K || typ == quant.Q3_K { // 2304: a step of 8 blocks and one
			ks = []int{256, 768, 2304, 14336, 40960}
		}
		switch typ.BlockSize() {
		case 32: // 1408: DeepSeek-V2-Lite's experts' down rows
			ks = []int{32, 224, 1408, 4128, 46080}
		case 1: // 1000: less than a step of 128 chunks; 1160: a step and a part; 30000: rows past 48 KiB
			ks = []int{8, 100, 1000, 1160, 4096, 30000}
		}
		for _, k := range ks {
			for _, m := range []int{1, 5, 8, 15, 16, 17, 33, 100} {
				wr, wb := p.weight(typ, m, k, p.randn(m*k, 0.05))
				xr, xb := p.input(p.randn(k, 1), 1, k)
				o := p.output(1, m)
				p.ref.MatMul(o.refT, wr, xr)
				p.be.MatMul(o.beT, wb, xb)
				p.checkScaled(fmt.Sprintf("MatMul %v k=%d m=%d", typ, k, m), o, 2e-5, tol(k))
			}
		}
	}
	for _, c := range []struct {
		types []quant.Type
		ms    []int
	}{
		{[]quant.Type{quant.Q4_K, quant.Q6_K, quant.Q4_K}, []int{17, 7, 33}},
		{[]quant.Type{quant.Q6_K, quant.Q4_K}, []int{1, 9}},
		{[]quant.Type{quant.Q8_0, quant.Q8_0, quant.Q8_0}, []int{33, 1, 18}},
		{[]quant.Type{quant.Q5_K, quant.Q5_K, quant.Q6_K}, []int{17, 7, 33}}, // Q5_K_M's Q/K/V
		{[]quant.Type{quant.Q5_K, quant.Q4_K}, []int{9, 16}},                 // no one kernel takes both
		{[]quant.Type{quant.Q3_K, quant.Q3_K, quant.Q5_K}, []int{17, 7, 33}}, // Q3_K_M's Q/K/V
		{[]quant.Type{quant.Q2_K, quant.Q4_K}, []int{9, 16}},
		{[]quant.Type{quant.Q3_K, quant.Q2_K}, []int{33, 17}},
		{[]quant.Type{quant.Q4_0, quant.Q4_0, quant.Q5_0}, []int{17, 7, 33}}, // mmv_multi_q4_0
		{[]quant.Type{quant.Q5_1, quant.Q4_1}, []int{9, 16}},                 // mmv_multi_q4_1
		{[]quant.Type{quant.Q4_0, quant.Q8_0}, []int{9, 16}},                 // no one kernel
	} {
		for _, k := range []int{256, 1024, 40960} {
			xr, xb := p.input(p.randn(k, 1), 1, k)
			var projs []backend.Proj
			var outs []*out
			for i, typ := range c.types {
				wr, wb := p.weight(typ, c.ms[i], k, p.randn(c.ms[i]*k, 0.05))
				o := p.output(1, c.ms[i])
				projs, outs = append(projs, backend.Proj{Dst: o.beT, W: wb}), append(outs, o)
				p.ref.MatMul(o.refT, wr, xr)
			}
			backend.MatMulShared(p.be, xb, projs)
			for i, o := range outs {
				p.checkScaled(fmt.Sprintf("MatMulShared %v k=%d proj %d", c.types, k, i), o, 2e-5, tol(k))
			}
		}
	}
	// Per-head products: head h's rows [h*m, (h+1)*m) of w times activation row h.
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.Q4_0, quant.Q5_0, quant.Q4_1, quant.Q5_1, quant.Q5_K, quant.Q2_K,
		quant.Q3_K, quant.F16, quant.BF16} {
		const heads, m, k = 5, 19, 512
		wr, wb := p.weight(typ, heads*m, k, p.randn(heads*m*k, 0.05))
		xr, xb := p.input(p.randn(heads*k, 1), heads, k)
		o := p.output(heads, m)
		var groups []backend.Group
		for h := 0; h < heads; h++ {
			groups = append(groups, backend.Group{Dst: p.be.View(o.beT, h, 1), W: p.be.View(wb, h*m, m), Row0: h})
			p.ref.MatMul(p.ref.View(o.refT, h, 1), p.ref.View(wr, h*m, m), p.ref.View(xr, h, 1))
		}
		backend.MatMulGroups(p.be, xb, groups)
		p.checkScaled(fmt.Sprintf("per-head MatMulGroups %v", typ), o, 2e-5, tol(k))
	}
}
