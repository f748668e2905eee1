package cuda_test

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

// mvPair holds the same tensors on the CUDA backend and on ref.
type mvPair struct {
	t       *testing.T
	be, ref backend.Backend
	rng     *rand.Rand
}

func (p *mvPair) randn(n int, s float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(p.rng.NormFloat64() * s)
	}
	return v
}

// weight quantizes rows x cols normal values of scale 0.05 to typ on both backends.
func (p *mvPair) weight(typ quant.Type, rows, cols int) (backend.Tensor, backend.Tensor) {
	rb, err := quant.RowBytes(typ, uint64(cols))
	if err != nil {
		p.t.Fatal(err)
	}
	vals, data := p.randn(rows*cols, 0.05), make([]byte, rows*int(rb))
	for r := 0; r < rows; r++ {
		if err := quant.Quantize(typ, vals[r*cols:(r+1)*cols], data[r*int(rb):(r+1)*int(rb)]); err != nil {
			p.t.Fatal(err)
		}
	}
	wb, err := p.be.Weight(typ, rows, cols, data)
	if err != nil {
		p.t.Fatal(err)
	}
	wr, err := p.ref.Weight(typ, rows, cols, data)
	if err != nil {
		p.t.Fatal(err)
	}
	return wb, wr
}

func (p *mvPair) f32(rows, cols int, vals []float32) (backend.Tensor, backend.Tensor) {
	b, err := p.be.New(quant.F32, rows, cols)
	if err != nil {
		p.t.Fatal(err)
	}
	r, err := p.ref.New(quant.F32, rows, cols)
	if err != nil {
		p.t.Fatal(err)
	}
	if vals != nil {
		p.be.WriteF32(b, vals)
		p.ref.WriteF32(r, vals)
	}
	return b, r
}

// check compares dst on both backends as backendtest's checkScaled does (2e-5 of the
// row's largest magnitude, at least 0.05*sqrt(k)).
func (p *mvPair) check(name string, db, dr backend.Tensor, k int) {
	p.t.Helper()
	n := db.Rows() * db.Cols()
	got, want := make([]float32, n), make([]float32, n)
	if err := p.be.ReadF32(context.Background(), db, got); err != nil {
		p.t.Fatal(err)
	}
	if err := p.ref.ReadF32(context.Background(), dr, want); err != nil {
		p.t.Fatal(err)
	}
	scale := 0.05 * math.Sqrt(float64(k))
	for _, v := range want {
		scale = math.Max(scale, math.Abs(float64(v)))
	}
	for j := range want {
		if d := math.Abs(float64(got[j]) - float64(want[j])); !(d <= 2e-5*scale) {
			p.t.Fatalf("%s: col %d: got %g, ref %g (scale %g)", name, j, got[j], want[j], scale)
		}
	}
}

// TestMatVecBatch1 checks the batch-1 products of Q4_K, Q6_K and Q8_0 (mv1 in
// kernels/cuda/matmul.cu: 16, 8 and 16 rows a block) against ref: row counts below, at
// and past a block's rows, one weight block a row (K 256 or 32), long rows, and rows too
// long for the activation to fit the shared memory (read from global memory); then
// fused projections (mmv_multi) of odd row counts, and per-head groups (mmv_id).
func TestMatVecBatch1(t *testing.T) {
	be := newOrSkip(t)
	defer be.Close()
	p := &mvPair{t: t, be: be, ref: ref.New(), rng: rand.New(rand.NewPCG(9, 10))}
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0} {
		ks := []int{256, 768, 14336, 40960}
		if typ == quant.Q8_0 {
			ks = []int{32, 224, 4128, 46080}
		}
		for _, k := range ks {
			for _, m := range []int{1, 5, 8, 15, 16, 17, 33, 100} {
				wb, wr := p.weight(typ, m, k)
				xb, xr := p.f32(1, k, p.randn(k, 1))
				db, dr := p.f32(1, m, nil)
				be.MatMul(db, wb, xb)
				p.ref.MatMul(dr, wr, xr)
				p.check(fmt.Sprintf("MatMul %v k=%d m=%d", typ, k, m), db, dr, k)
				for _, tt := range []backend.Tensor{wb, xb, db} {
					be.Free(tt)
				}
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
	} {
		for _, k := range []int{256, 1024, 40960} {
			xb, xr := p.f32(1, k, p.randn(k, 1))
			var projs []backend.Proj
			var dbs, drs []backend.Tensor
			for i, typ := range c.types {
				wb, wr := p.weight(typ, c.ms[i], k)
				db, dr := p.f32(1, c.ms[i], nil)
				projs = append(projs, backend.Proj{Dst: db, W: wb})
				dbs, drs = append(dbs, db), append(drs, dr)
				p.ref.MatMul(dr, wr, xr)
			}
			backend.MatMulShared(be, xb, projs)
			for i := range dbs {
				p.check(fmt.Sprintf("MatMulShared %v k=%d proj %d", c.types, k, i), dbs[i], drs[i], k)
			}
		}
	}
	// Per-head products: head h's rows [h*m, (h+1)*m) of w times activation row h.
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0} {
		const heads, m, k = 5, 19, 512
		wb, wr := p.weight(typ, heads*m, k)
		xb, xr := p.f32(heads, k, p.randn(heads*k, 1))
		db, dr := p.f32(heads, m, nil)
		var groups []backend.Group
		for h := 0; h < heads; h++ {
			groups = append(groups, backend.Group{Dst: be.View(db, h, 1), W: be.View(wb, h*m, m), Row0: h})
			p.ref.MatMul(p.ref.View(dr, h, 1), p.ref.View(wr, h*m, m), p.ref.View(xr, h, 1))
		}
		backend.MatMulGroups(be, xb, groups)
		p.check(fmt.Sprintf("per-head MatMulGroups %v", typ), db, dr, k)
	}
}
