package ref

import (
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/quant"
)

// yarnCorrDims is the range of rotary dims YaRN blends over (llama.cpp's
// ggml_rope_yarn_corr_dims): the dims whose wavelength spans beta rotations in the
// original context.
func yarnCorrDims(nDims, origCtx int, base, betaFast, betaSlow float32) (lo, hi float32) {
	corr := func(beta float32) float64 {
		return float64(nDims) * math.Log(float64(origCtx)/(float64(beta)*2*math.Pi)) / (2 * math.Log(float64(base)))
	}
	lo = float32(math.Max(0, math.Floor(corr(betaFast))))
	hi = float32(math.Min(float64(nDims-1), math.Ceil(corr(betaSlow))))
	return lo, hi
}

// ropeAngles fills cs with (cos, sin) pairs for the Dims/2 frequencies at position p,
// following llama.cpp: theta_i = p * base^(-2i/Dims) (a running float32 product), divided
// by the frequency factor, then YaRN-interpolated, with cos and sin scaled by mscale.
func ropeAngles(cs []float32, p int32, r backend.RoPE, factors []float32) {
	freqScale := r.FreqScale
	if freqScale == 0 {
		freqScale = 1
	}
	attnFactor := r.AttnFactor
	if attnFactor == 0 {
		attnFactor = 1
	}
	thetaScale := float32(math.Pow(float64(r.Base), -2/float64(r.Dims)))
	var lo, hi float32
	if r.ExtFactor != 0 {
		lo, hi = yarnCorrDims(r.Dims, r.OrigCtx, r.Base, r.BetaFast, r.BetaSlow)
	}
	theta := float32(p)
	for i := 0; i < r.Dims/2; i++ {
		ff := float32(1)
		if factors != nil {
			ff = factors[i]
		}
		extrap := theta / ff
		interp := freqScale * extrap
		th, mscale := interp, attnFactor
		if r.ExtFactor != 0 {
			y := (float32(i) - lo) / float32(math.Max(0.001, float64(hi-lo)))
			ramp := 1 - float32(math.Min(1, math.Max(0, float64(y))))
			mix := ramp * r.ExtFactor
			th = interp*(1-mix) + extrap*mix
			mscale *= 1 + 0.1*float32(math.Log(float64(1/freqScale)))
		}
		cs[2*i] = float32(math.Cos(float64(th))) * mscale
		cs[2*i+1] = float32(math.Sin(float64(th))) * mscale
		theta *= thetaScale
	}
}

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
		ropeAngles(cs, p, r, factors)
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
	kt, vt := want(k, quant.F16), want(v, quant.F16)
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
	for i, ps := range ids(pos, qt.rows, "Attention") {
		n := int(ps) + 1
		if ps < 0 || n > kt.rows {
			panic(fmt.Sprintf("ref: Attention: position %d outside a cache of %d", ps, kt.rows))
		}
		for h := 0; h < p.NHead; h++ {
			kvh := h / group
			for j := range qh {
				qh[j] = quant.FP16ToFP32(quant.FP32ToFP16(qt.f32[i*qt.cols+h*p.HeadDim+j]))
			}
			// Scores, then a scaled softmax with the sum in float64.
			scores := make([]float32, n)
			maxS := float32(math.Inf(-1))
			for t := 0; t < n; t++ {
				mustDequant(quant.F16, kt.row(t), krow)
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
				pr := quant.FP16ToFP32(quant.FP32ToFP16(scores[t] * inv))
				mustDequant(quant.F16, vt.row(t), vrow)
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
