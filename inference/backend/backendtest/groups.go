package backendtest

import (
	"context"
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/quant"
)

// testMatMulGroups: a grouped MatMul equals one MatMul per group on its rows of the
// input, for groups of one and of several rows, some rows used by no group or by two,
// and mixed dot partners.
func testMatMulGroups(p *pair) {
	k := 512
	type grp struct {
		typ        quant.Type
		m, row0, n int
	}
	for _, gs := range [][]grp{
		{{quant.Q4_K, 24, 0, 1}, {quant.Q4_K, 24, 1, 1}, {quant.Q6_K, 40, 2, 1}},                         // decode: one row per expert
		{{quant.Q4_K, 48, 0, 5}, {quant.Q4_K, 48, 5, 1}, {quant.Q4_K, 48, 8, 9}, {quant.Q4_K, 48, 3, 4}}, // skipped and shared rows
		{{quant.Q5_0, 33, 0, 7}, {quant.Q8_0, 17, 7, 10}},
		{{quant.Q8_0, 20, 0, 3}, {quant.Q4_K, 24, 3, 3}, {quant.F16, 7, 6, 11}}, // mixed dot partners
	} {
		nx := 0
		for _, g := range gs {
			nx = max(nx, g.row0+g.n)
		}
		xr, xb := p.input(p.randn(nx*k, 1), nx, k)
		var groups []backend.Group
		var outs []*out
		for _, g := range gs {
			wr, wb := p.weight(g.typ, g.m, k, p.randn(g.m*k, 0.05))
			o := p.output(g.n, g.m)
			outs = append(outs, o)
			p.ref.MatMul(o.refT, wr, p.ref.View(xr, g.row0, g.n))
			groups = append(groups, backend.Group{Dst: o.beT, W: wb, Row0: g.row0})
		}
		backend.MatMulGroups(p.be, xb, groups)
		for i, o := range outs {
			p.checkScaled(fmt.Sprintf("MatMulGroups %v group %d", gs, i), o, 2e-5, 0.05*math.Sqrt(float64(k)))
		}
	}
}

// testReshape: a reshaped tensor shares its elements in order, as an op's input and its
// output, and writes through a reshape show in the original.
func testReshape(p *pair) {
	rs, ok := p.be.(backend.Reshaper)
	if !ok {
		p.t.Skip("no Reshape")
	}
	rr := p.ref.(backend.Reshaper)
	vals := p.randn(6*48, 1)
	xr, xb := p.input(vals, 6, 48)
	for _, shape := range [][2]int{{12, 24}, {1, 288}, {288, 1}, {36, 8}} {
		wr, wb := p.weight(quant.F32, 5, shape[1], p.randn(5*shape[1], 0.5))
		o := p.output(shape[0], 5)
		p.ref.MatMul(o.refT, wr, rr.Reshape(xr, shape[0], shape[1]))
		p.be.MatMul(o.beT, wb, rs.Reshape(xb, shape[0], shape[1]))
		p.checkScaled(fmt.Sprintf("MatMul of a %dx48 reshaped to %v", 6, shape), o, 2e-5, 1)
	}
	// Write through a reshape: double every value, read the original shape back.
	dbl := make([]float32, len(vals))
	for i, v := range vals {
		dbl[i] = 2 * v
	}
	p.be.WriteF32(rs.Reshape(xb, 3, 96), dbl)
	got := make([]float32, len(vals))
	if err := p.be.ReadF32(context.Background(), xb, got); err != nil {
		p.t.Fatal(err)
	}
	for i := range got {
		if got[i] != dbl[i] {
			p.t.Fatalf("value %d after a write through a reshape: %v, want %v", i, got[i], dbl[i])
		}
	}
}
