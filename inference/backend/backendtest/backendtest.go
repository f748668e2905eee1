// Package backendtest is the conformance suite every backend runs against the reference
// backend: each op on random inputs, every weight type, odd shapes, prefill and decode
// widths, with guard rows around every output that must stay untouched.
package backendtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/ref"
	"ember/inference/quant"
)

// WeightTypes are the weight types a backend must multiply with.
var WeightTypes = []quant.Type{
	quant.F32, quant.F16, quant.BF16, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
	quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K,
}

// pair runs the same op on the reference and on the backend under test.
type pair struct {
	t    *testing.T
	ref  backend.Backend
	be   backend.Backend
	rng  *rand.Rand
	free []func()
}

const guard = float32(-1234.5)

// out is an F32 output of rows x cols on both backends, with a guard row above and below.
type out struct {
	refT, beT  backend.Tensor // the views ops write into
	refP, beP  backend.Tensor // the full tensors, guards included
	rows, cols int
}

// withPair runs f on a pair of the reference backend and a new backend under test,
// drawing random inputs from src, and frees everything after it.
func withPair(t *testing.T, newBackend func(t *testing.T) backend.Backend, src rand.Source, f func(p *pair)) {
	be := newBackend(t)
	p := &pair{t: t, ref: ref.New(), be: be, rng: rand.New(src)}
	defer func() {
		for _, f := range p.free {
			f()
		}
		be.Close()
	}()
	f(p)
}

func (p *pair) newT(be backend.Backend, typ quant.Type, rows, cols int) backend.Tensor {
	t, err := be.New(typ, rows, cols)
	if err != nil {
		p.t.Fatalf("%s: New(%v, %d, %d): %v", be.Name(), typ, rows, cols, err)
	}
	p.free = append(p.free, func() { be.Free(t) })
	return t
}

func (p *pair) output(rows, cols int) *out {
	o := &out{rows: rows, cols: cols}
	fill := make([]float32, (rows+2)*cols)
	for i := range fill {
		fill[i] = guard
	}
	o.refP, o.beP = p.newT(p.ref, quant.F32, rows+2, cols), p.newT(p.be, quant.F32, rows+2, cols)
	p.ref.WriteF32(o.refP, fill)
	p.be.WriteF32(o.beP, fill)
	o.refT, o.beT = p.ref.View(o.refP, 1, rows), p.be.View(o.beP, 1, rows)
	return o
}

// input uploads the same F32 values to both backends.
func (p *pair) input(vals []float32, rows, cols int) (backend.Tensor, backend.Tensor) {
	r, b := p.newT(p.ref, quant.F32, rows, cols), p.newT(p.be, quant.F32, rows, cols)
	p.ref.WriteF32(r, vals)
	p.be.WriteF32(b, vals)
	return r, b
}

func (p *pair) ints(vals []int32) (backend.Tensor, backend.Tensor) {
	r, b := p.newT(p.ref, quant.I32, len(vals), 1), p.newT(p.be, quant.I32, len(vals), 1)
	p.ref.WriteI32(r, vals)
	p.be.WriteI32(b, vals)
	return r, b
}

func (p *pair) weight(typ quant.Type, rows, cols int, vals []float32) (backend.Tensor, backend.Tensor) {
	rb, err := quant.RowBytes(typ, uint64(cols))
	if err != nil {
		p.t.Fatal(err)
	}
	data := make([]byte, rows*int(rb))
	for r := 0; r < rows; r++ {
		if err := quant.Quantize(typ, vals[r*cols:(r+1)*cols], data[r*int(rb):(r+1)*int(rb)]); err != nil {
			p.t.Fatal(err)
		}
	}
	wr, err := p.ref.Weight(typ, rows, cols, data)
	if err != nil {
		p.t.Fatal(err)
	}
	wb, err := p.be.Weight(typ, rows, cols, data)
	if err != nil {
		p.t.Fatalf("%s: Weight(%v): %v", p.be.Name(), typ, err)
	}
	p.free = append(p.free, func() { p.ref.Free(wr); p.be.Free(wb) })
	return wr, wb
}

func (p *pair) randn(n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(p.rng.NormFloat64() * scale)
	}
	return v
}

// ReadF32 reads tensor x of be back whole (its rows one after another), failing t on an
// error.
func ReadF32(t *testing.T, be backend.Backend, x backend.Tensor) []float32 {
	t.Helper()
	v := make([]float32, x.Rows()*x.Cols())
	if err := be.ReadF32(context.Background(), x, v); err != nil {
		t.Fatalf("%s: ReadF32: %v", be.Name(), err)
	}
	return v
}

// check compares the outputs: each element within tol of the reference, relative to the
// largest magnitude in its row (float sums may be ordered differently), and guards intact.
func (p *pair) check(name string, o *out, tol float64) { p.checkScaled(name, o, tol, 0) }

// checkScaled is check with the error measured against a fixed magnitude (the typical
// size of the terms summed), where a row's own values may cancel to near zero.
func (p *pair) checkScaled(name string, o *out, tol, fixed float64) {
	p.t.Helper()
	want, got := ReadF32(p.t, p.ref, o.refP), ReadF32(p.t, p.be, o.beP)
	for r := 0; r < o.rows+2; r++ {
		w, g := want[r*o.cols:(r+1)*o.cols], got[r*o.cols:(r+1)*o.cols]
		if r == 0 || r == o.rows+1 {
			for j, v := range g {
				if v != guard {
					p.t.Fatalf("%s: guard row %d col %d overwritten with %g", name, r, j, v)
				}
			}
			continue
		}
		scale := fixed
		for _, v := range w {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		for j := range w {
			d := math.Abs(float64(g[j]) - float64(w[j]))
			if !(d <= tol*math.Max(scale, 1e-3)) {
				p.t.Fatalf("%s: row %d col %d: got %g, ref %g (row scale %g, tol %g)", name, r-1, j, g[j], w[j], scale, tol)
			}
		}
	}
}

// Run runs the suite; newBackend makes the backend under test.
func Run(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	run := func(name string, f func(p *pair)) {
		t.Run(name, func(t *testing.T) { withPair(t, newBackend, rand.NewPCG(1, uint64(len(name))), f) })
	}
	for _, typ := range WeightTypes {
		run("MatMul/"+typ.String(), func(p *pair) { testMatMul(p, typ) })
		run("GetRows/"+typ.String(), func(p *pair) { testGetRows(p, typ) })
	}
	run("MatMulTiles", testMatMulTiles)
	run("MatMulShared", testMatMulShared)
	run("MatMulGroups", testMatMulGroups)
	run("Reshape", testReshape)
	run("HeadProducts", testHeadProducts)
	run("ManyRows", testManyRows)
	run("RowOps", testRowOps)
	run("RoPE", testRoPE)
	run("SetRows", testSetRows)
	run("Attention", testAttention)
	run("PagedAttention", testPagedAttention)
	run("Q8Attention", testQ8Attention)
}

func testMatMul(p *pair, typ quant.Type) {
	bs := typ.BlockSize()
	ks := []int{256, 512, 2816}
	if bs == 1 {
		ks = append(ks, 1, 7, 33, 4095)
	} else if bs == 32 {
		ks = append(ks, 32, 224, 4128)
	} else {
		ks = append(ks, 4096)
	}
	for _, k := range ks {
		for _, m := range []int{1, 7, 33, 64} {
			for _, nx := range []int{1, 2, 7, 33} {
				if k*m*nx > 1<<22 {
					continue
				}
				wr, wb := p.weight(typ, m, k, p.randn(m*k, 0.05))
				xr, xb := p.input(p.randn(nx*k, 1), nx, k)
				o := p.output(nx, m)
				p.ref.MatMul(o.refT, wr, xr)
				p.be.MatMul(o.beT, wb, xb)
				// Terms w*x are ~0.05 each; their sum has magnitude ~0.05*sqrt(k).
				p.checkScaled(fmt.Sprintf("MatMul %v k=%d m=%d nx=%d", typ, k, m, nx), o, 2e-5, 0.05*math.Sqrt(float64(k)))
			}
		}
	}
}

// testMatMulShared: fused projections equal one MatMul each, with equal and with mixed
// dot partners.
func testMatMulShared(p *pair) {
	k := 512
	for _, types := range [][]quant.Type{
		{quant.Q4_K, quant.Q6_K, quant.Q4_K},
		{quant.Q8_0, quant.Q4_K},
		{quant.F16},
	} {
		for _, nx := range []int{1, 5} {
			xr, xb := p.input(p.randn(nx*k, 1), nx, k)
			var projB []backend.Proj
			var outs []*out
			for i, typ := range types {
				m := 24 + 8*i
				wr, wb := p.weight(typ, m, k, p.randn(m*k, 0.05))
				o := p.output(nx, m)
				outs = append(outs, o)
				p.ref.MatMul(o.refT, wr, xr)
				projB = append(projB, backend.Proj{Dst: o.beT, W: wb})
			}
			backend.MatMulShared(p.be, xb, projB)
			for i, o := range outs {
				p.checkScaled(fmt.Sprintf("MatMulShared %v nx=%d proj %d", types, nx, i), o, 2e-5, 0.05*math.Sqrt(float64(k)))
			}
		}
	}
}

func testGetRows(p *pair, typ quant.Type) {
	k := 256 * 3
	wr, wb := p.weight(typ, 9, k, p.randn(9*k, 1))
	for _, ids := range [][]int32{{0}, {8, 3, 3, 0, 1, 7, 2}} {
		ir, ib := p.ints(ids)
		o := p.output(len(ids), k)
		p.ref.GetRows(o.refT, wr, ir)
		p.be.GetRows(o.beT, wb, ib)
		p.check(fmt.Sprintf("GetRows %v %v", typ, ids), o, 0)
	}
}

func testRowOps(p *pair) {
	for _, n := range []int{1, 7, 33, 4095} {
		for _, rows := range []int{1, 3, 17} {
			a := p.randn(rows*n, 3)
			ar, ab := p.input(a, rows, n)
			br, bb := p.input(p.randn(rows*n, 3), rows, n)
			wr, wb := p.input(p.randn(n, 1), 1, n)
			for _, op := range []string{"rmsnorm", "add", "add1", "mul", "mul1", "swiglu"} {
				o := p.output(rows, n)
				tol := 1e-6
				switch op {
				case "rmsnorm":
					p.ref.RMSNorm(o.refT, ar, wr, 1e-5)
					p.be.RMSNorm(o.beT, ab, wb, 1e-5)
					tol = 1e-5
				case "add":
					p.ref.Add(o.refT, ar, br)
					p.be.Add(o.beT, ab, bb)
				case "add1":
					p.ref.Add(o.refT, ar, wr)
					p.be.Add(o.beT, ab, wb)
				case "mul":
					p.ref.Mul(o.refT, ar, br)
					p.be.Mul(o.beT, ab, bb)
				case "mul1":
					p.ref.Mul(o.refT, ar, wr)
					p.be.Mul(o.beT, ab, wb)
				case "swiglu":
					p.ref.SwiGLU(o.refT, ar, br)
					p.be.SwiGLU(o.beT, ab, bb)
					tol = 1e-5
				}
				p.check(fmt.Sprintf("%s n=%d rows=%d", op, n, rows), o, tol)
			}
		}
	}
	// In place, as the models use them.
	a := p.randn(5*64, 2)
	ar, ab := p.input(a, 5, 64)
	br, bb := p.input(p.randn(5*64, 2), 5, 64)
	p.ref.Add(ar, ar, br)
	p.be.Add(ab, ab, bb)
	o := p.output(5, 64)
	p.ref.Add(o.refT, ar, br)
	p.be.Add(o.beT, ab, bb)
	p.check("add in place", o, 1e-6)
}

func testRoPE(p *pair) {
	for _, c := range []struct {
		style           backend.RoPEStyle
		heads, hd, dims int
		factors, yarn   bool
	}{
		{backend.RoPENormal, 4, 64, 64, false, false},
		{backend.RoPENeoX, 3, 64, 64, false, false},
		{backend.RoPENormal, 2, 80, 32, true, false},
		{backend.RoPENeoX, 5, 128, 96, true, false},
		{backend.RoPENormal, 2, 48, 16, false, true},
	} {
		rows := 9
		pos := make([]int32, rows)
		for i := range pos {
			pos[i] = int32(p.rng.IntN(5000))
		}
		r := backend.RoPE{Style: c.style, Dims: c.dims, HeadDim: c.hd, Base: 10000}
		rr, rb := r, r
		if c.factors {
			f := make([]float32, c.dims/2)
			for i := range f {
				f[i] = 1 + 7*p.rng.Float32()
			}
			rr.Factors, rb.Factors = p.input(f, 1, len(f))
		}
		if c.yarn {
			for _, x := range []*backend.RoPE{&rr, &rb} {
				x.FreqScale, x.ExtFactor, x.AttnFactor, x.BetaFast, x.BetaSlow, x.OrigCtx = 0.025, 1, 1.2, 32, 1, 4096
			}
		}
		x := p.randn(rows*c.heads*c.hd, 2)
		o := p.output(rows, c.heads*c.hd)
		p.ref.WriteF32(o.refT, x)
		p.be.WriteF32(o.beT, x)
		pr, pb := p.ints(pos)
		p.ref.RoPE(o.refT, pr, rr)
		p.be.RoPE(o.beT, pb, rb)
		p.check(fmt.Sprintf("RoPE %+v", c), o, 1e-5)
	}
}

func testSetRows(p *pair) {
	for _, typ := range []quant.Type{quant.F16, quant.F32} {
		cols, rows := 96, 11
		dr, db := p.newT(p.ref, typ, rows, cols), p.newT(p.be, typ, rows, cols)
		sr, sb := p.input(p.randn(3*cols, 4), 3, cols)
		ir, ib := p.ints([]int32{7, 0, 10})
		p.ref.SetRows(dr, sr, ir)
		p.be.SetRows(db, sb, ib)
		// Read the rows back through GetRows, which dequantizes F16.
		all := make([]int32, rows)
		for i := range all {
			all[i] = int32(i)
		}
		ar, ab := p.ints(all)
		o := p.output(rows, cols)
		p.ref.GetRows(o.refT, dr, ar)
		p.be.GetRows(o.beT, db, ab)
		p.check("SetRows "+typ.String(), o, 0)
	}
}

// attentionCases are the contiguous-cache shapes: GQA, MHA, MQA, K and V head dims that
// differ, and the wide heads of DeepSeek-V2 (MLA's latent row of 64 rope + 512 latent
// dims read as both keys and values, shared; its attn_kv_b layout's 192/128 heads).
var attentionCases = []struct {
	nh, nkv, hd, vhd, ctx, rows, start int
	shared                             bool // v is k (hd == vhd), as an MLA latent cache
}{
	{4, 2, 64, 64, 40, 1, 39, false},   // decode at the end of the cache
	{4, 2, 64, 64, 40, 33, 0, false},   // prefill
	{8, 1, 80, 48, 300, 7, 250, false}, // MQA, odd head dims, late positions
	{3, 3, 128, 128, 17, 17, 0, false},
	{1, 1, 576, 576, 300, 16, 284, true}, // MLA: one query row per head, V is K
	{4, 1, 576, 576, 40, 33, 0, true},    // MLA prefill, grouped
	{2, 1, 576, 512, 90, 9, 81, false},   // wide K != V
	{16, 16, 192, 128, 50, 12, 38, false},
}

func testAttention(p *pair) {
	for _, c := range attentionCases {
		kr, kb := p.newT(p.ref, quant.F16, c.ctx, c.nkv*c.hd), p.newT(p.be, quant.F16, c.ctx, c.nkv*c.hd)
		all := make([]int32, c.ctx)
		for i := range all {
			all[i] = int32(i)
		}
		ir, ib := p.ints(all)
		ksr, ksb := p.input(p.randn(c.ctx*c.nkv*c.hd, 1), c.ctx, c.nkv*c.hd)
		p.ref.SetRows(kr, ksr, ir)
		p.be.SetRows(kb, ksb, ib)
		vr, vb := kr, kb
		if !c.shared {
			vr, vb = p.newT(p.ref, quant.F16, c.ctx, c.nkv*c.vhd), p.newT(p.be, quant.F16, c.ctx, c.nkv*c.vhd)
			vsr, vsb := p.input(p.randn(c.ctx*c.nkv*c.vhd, 1), c.ctx, c.nkv*c.vhd)
			p.ref.SetRows(vr, vsr, ir)
			p.be.SetRows(vb, vsb, ib)
		}
		pos := make([]int32, c.rows)
		for i := range pos {
			pos[i] = int32(c.start + i)
		}
		pr, pb := p.ints(pos)
		qr, qb := p.input(p.randn(c.rows*c.nh*c.hd, 1), c.rows, c.nh*c.hd)
		a := backend.Attention{NHead: c.nh, NKVHead: c.nkv, HeadDim: c.hd, VHeadDim: c.vhd, Scale: 1 / float32(math.Sqrt(float64(c.hd)))}
		o := p.output(c.rows, c.nh*c.vhd)
		p.ref.Attention(o.refT, qr, kr, vr, pr, a)
		p.be.Attention(o.beT, qb, kb, vb, pb, a)
		// 2e-3: probabilities are rounded to f16, a step function, so an exp or a sum that
		// differs in the last float bit (a SIMD polynomial, as llama.cpp's own) can move a
		// probability by an f16 ulp (2^-11 relative) and the output by that times |v|.
		// A wrong head mapping, scale or mask gives errors of order 1.
		p.check(fmt.Sprintf("Attention %+v", c), o, 2e-3)
	}
}
