package ref

import (
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/quant"
)

// RoPE implements backend.Ops.
func (*Backend) RoPE(x, pos backend.Tensor, r backend.RoPE) {
	xt := want(x, quant.F32)
	if r.HeadDim <= 0 || r.Dims <= 0 || r.Dims%2 != 0 || r.Dims > r.HeadDim || xt.cols%r.HeadDim != 0 {
		panic(fmt.Sprintf("ref: RoPE: dims %d, head dim %d, width %d", r.Dims, r.HeadDim, xt.cols))
	}
	var factors []float32
	if r.Factors != nil {
		f := want(r.Factors, quant.F32)
		if len(f.f32) != r.Dims/2 {
			panic(fmt.Sprintf("ref: RoPE: %d frequency factors for %d dims", len(f.f32), r.Dims))
		}
		factors = f.f32
	}
	cs := make([]float32, r.Dims)
	half := r.Dims / 2
	for i, p := range ids(pos, xt.rows, "RoPE") {
		backend.RoPEAngles(cs, p, r, factors)
		row := xt.f32[i*xt.cols : (i+1)*xt.cols]
		for h := 0; h < xt.cols; h += r.HeadDim {
			head := row[h : h+r.HeadDim]
			for k := 0; k < half; k++ {
				a, b := 2*k, 2*k+1 // RoPENormal: adjacent pair
				if r.Style == backend.RoPENeoX {
					a, b = k, k+half
				}
				c, s := cs[2*k], cs[2*k+1]
				x0, x1 := head[a], head[b]
				head[a] = x0*c - x1*s
				head[b] = x0*s + x1*c
			}
		}
	}
}

// Attention implements backend.Ops.
func (*Backend) Attention(dst, q, k, v, pos backend.Tensor, p backend.Attention) {
	d, qt := want(dst, quant.F32), want(q, quant.F32)
	kt, vt := get(k), get(v)
	if (kt.typ != quant.F16 && kt.typ != quant.Q8_0) || vt.typ != kt.typ {
		panic(fmt.Sprintf("ref: Attention over a %v K and %v V cache", kt.typ, vt.typ))
	}
	if p.NKVHead <= 0 || p.NHead%p.NKVHead != 0 || qt.cols != p.NHead*p.HeadDim ||
		kt.cols != p.NKVHead*p.HeadDim || vt.cols != p.NKVHead*p.VHeadDim ||
		d.cols != p.NHead*p.VHeadDim || d.rows != qt.rows || kt.rows != vt.rows {
		panic(fmt.Sprintf("ref: Attention: shapes q %dx%d k %dx%d v %dx%d dst %dx%d for %+v",
			qt.rows, qt.cols, kt.rows, kt.cols, vt.rows, vt.cols, d.rows, d.cols, p))
	}
	group := p.NHead / p.NKVHead
	qh := make([]float32, p.HeadDim)
	kh := make([]float32, p.HeadDim)
	vrow := make([]float32, vt.cols)
	krow := make([]float32, kt.cols)
	out := make([]float32, d.cols) // dst may alias q
	positions := ids(pos, qt.rows, "Attention")
	tables := make([][]int32, qt.rows) // nil: contiguous
	if p.Table != nil {
		tt := want(p.Table, quant.I32)
		var err error
		tables, err = backend.SeqTables(tt.i32, tt.cols, ids(p.Seq, qt.rows, "Attention"), positions, p.BlockSize, kt.rows)
		if err != nil {
			panic("ref: " + err.Error())
		}
	}
	for i, ps := range positions {
		n := int(ps) + 1
		if ps < 0 || (tables[i] == nil && n > kt.rows) {
			panic(fmt.Sprintf("ref: Attention: position %d outside a cache of %d", ps, kt.rows))
		}
		row := func(t int) int { return backend.Row(tables[i], p.BlockSize, t) }
		for h := 0; h < p.NHead; h++ {
			kvh := h / group
			roundQuery(kt.typ, qt.f32[i*qt.cols+h*p.HeadDim:i*qt.cols+(h+1)*p.HeadDim], qh)
			// Scores, then a scaled softmax with the sum in float64.
			scores := make([]float32, n)
			maxS := float32(math.Inf(-1))
			for t := 0; t < n; t++ {
				mustDequant(kt.typ, kt.row(row(t)), krow)
				copy(kh, krow[kvh*p.HeadDim:])
				var s float64
				for j := range qh {
					s += float64(qh[j]) * float64(kh[j])
				}
				scores[t] = float32(s) * p.Scale
				maxS = max(maxS, scores[t])
			}
			var sum float64
			for t := range scores {
				scores[t] = float32(math.Exp(float64(scores[t] - maxS)))
				sum += float64(scores[t])
			}
			inv := float32(1 / sum)
			o := out[h*p.VHeadDim : (h+1)*p.VHeadDim]
			acc := make([]float64, p.VHeadDim)
			for t := 0; t < n; t++ {
				pr := scores[t] * inv
				if vt.typ == quant.F16 { // the F16 product rounds the probabilities too
					pr = quant.FP16ToFP32(quant.FP32ToFP16(pr))
				}
				mustDequant(vt.typ, vt.row(row(t)), vrow)
				for j := range acc {
					acc[j] += float64(pr) * float64(vrow[kvh*p.VHeadDim+j])
				}
			}
			for j := range o {
				o[j] = float32(acc[j])
			}
		}
		copy(d.f32[i*d.cols:(i+1)*d.cols], out)
	}
}

func mustDequant(typ quant.Type, src []byte, dst []float32) {
	if err := quant.Dequantize(typ, src, dst); err != nil {
		panic("ref: " + err.Error())
	}
}

// roundQuery rounds a query head q into qh as the product with a cache of type t rounds
// it: to F16 for an F16 cache, to Q8_0 blocks (llama.cpp's quantize_row_q8_0) for a Q8_0
// one; the dot with the cache's values is then exact up to the summation.
func roundQuery(t quant.Type, q, qh []float32) {
	if t == quant.F16 {
		for j := range qh {
			qh[j] = quant.FP16ToFP32(quant.FP32ToFP16(q[j]))
		}
		return
	}
	buf := make([]byte, len(q)/32*34)
	if err := quant.Quantize(t, q, buf); err != nil {
		panic("ref: Attention: " + err.Error())
	}
	mustDequant(t, buf, qh)
}
