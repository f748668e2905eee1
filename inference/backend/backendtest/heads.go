package backendtest

import (
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/quant"
)

// testHeadProducts: per-head products as an MLA model issues them. MatMulGroups: views
// of one stacked weight, each on its head's rows of a head-major input into its head's
// rows of one output, 1, 3, 20 and 70 rows per head (a GPU's tensor-core tiles take 64
// rows). MatMulShared: 1, 20 and 70 activation rows through the interleaved per-head views
// of one matrix's two parts (q_nope, q_pe). A backend may run each as one launch; it
// must equal a MatMul per head.
func testHeadProducts(p *pair) {
	const k, H = 256, 6
	tol, fixed := 2e-5, 0.05*math.Sqrt(k)
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q5_0, quant.Q8_0, quant.Q6_K, quant.F32} {
		for _, r := range []int{1, 3, 20, 70} {
			const m = 24
			wr, wb := p.weight(typ, H*m, k, p.randn(H*m*k, 0.05))
			xr, xb := p.input(p.randn(H*r*k, 1), H*r, k)
			o := p.output(H*r, m)
			var groups []backend.Group
			for h := 0; h < H; h++ {
				p.ref.MatMul(p.ref.View(o.refT, h*r, r), p.ref.View(wr, h*m, m), p.ref.View(xr, h*r, r))
				groups = append(groups, backend.Group{Dst: p.be.View(o.beT, h*r, r), W: p.be.View(wb, h*m, m), Row0: h * r})
			}
			backend.MatMulGroups(p.be, xb, groups)
			p.checkScaled(fmt.Sprintf("per-head MatMulGroups %v, %d rows a head", typ, r), o, tol, fixed)
		}
		const a, b = 16, 8
		wr, wb := p.weight(typ, H*(a+b), k, p.randn(H*(a+b)*k, 0.05))
		for _, nx := range []int{1, 20, 70} {
			xr, xb := p.input(p.randn(nx*k, 1), nx, k)
			oa, ob := p.output(H*nx, a), p.output(H*nx, b)
			var projs []backend.Proj
			for h := 0; h < H; h++ {
				p.ref.MatMul(p.ref.View(oa.refT, h*nx, nx), p.ref.View(wr, h*(a+b), a), xr)
				p.ref.MatMul(p.ref.View(ob.refT, h*nx, nx), p.ref.View(wr, h*(a+b)+a, b), xr)
				projs = append(projs, backend.Proj{Dst: p.be.View(oa.beT, h*nx, nx), W: p.be.View(wb, h*(a+b), a)},
					backend.Proj{Dst: p.be.View(ob.beT, h*nx, nx), W: p.be.View(wb, h*(a+b)+a, b)})
			}
			backend.MatMulShared(p.be, xb, projs)
			p.checkScaled(fmt.Sprintf("per-head MatMulShared %v, %d rows, first parts", typ, nx), oa, tol, fixed)
			p.checkScaled(fmt.Sprintf("per-head MatMulShared %v, %d rows, second parts", typ, nx), ob, tol, fixed)
		}
	}
}

// testManyRows: ops over more rows than a GPU grid has blocks along one axis (65535):
// GetRows and SetRows of 70000 rows (an MLA prefill gathers its latent dims as n*NHead*8
// narrow rows), and a MatMul of 70000 activation rows.
func testManyRows(p *pair) {
	const n, cols = 70000, 32
	tr, tb := p.input(p.randn(9*cols, 1), 9, cols)
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(p.rng.IntN(9))
	}
	ir, ib := p.ints(idx)
	o := p.output(n, cols)
	p.ref.GetRows(o.refT, tr, ir)
	p.be.GetRows(o.beT, tb, ib)
	p.check("GetRows of 70000 rows", o, 0)

	all := make([]int32, n)
	for i := range all {
		all[i] = int32(n - 1 - i)
	}
	ar, ab := p.ints(all)
	sr, sb := p.input(p.randn(n*cols, 1), n, cols)
	dr, db := p.newT(p.ref, quant.F16, n, cols), p.newT(p.be, quant.F16, n, cols)
	p.ref.SetRows(dr, sr, ar)
	p.be.SetRows(db, sb, ab)
	o = p.output(n, cols)
	p.ref.GetRows(o.refT, dr, ar)
	p.be.GetRows(o.beT, db, ab)
	p.check("SetRows of 70000 rows", o, 0)

	wr, wb := p.weight(quant.Q8_0, 4, cols, p.randn(4*cols, 0.05))
	o = p.output(n, 4)
	p.ref.MatMul(o.refT, wr, sr)
	p.be.MatMul(o.beT, wb, sb)
	p.checkScaled("MatMul of 70000 rows", o, 2e-5, 0.05*math.Sqrt(cols))
}
