package backend

import "math"

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

// RoPEAngles fills cs with (cos, sin) pairs for the Dims/2 frequencies at position p,
// following llama.cpp: theta_i = p * base^(-2i/Dims) (a running float32 product), divided
// by the frequency factor, then YaRN-interpolated, with cos and sin scaled by mscale.
func RoPEAngles(cs []float32, p int32, r RoPE, factors []float32) {
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
