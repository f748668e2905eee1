package quant

// The scale searches of llama.cpp's K-quant reference quantizers (ggml-quants.c),
// operation for operation in float32. Sums of products wrap each product in float32(...)
// so no FMA fusion changes a rounding (see quant.go).

// groupMaxEps is GROUP_MAX_EPS: a group whose largest magnitude is below it is all zero.
const groupMaxEps = 1e-15

// makeQXQuants is make_qx_quants with rmse_type 1 and no importance weights (the only
// form the reference quantizers use): a symmetric scale for n values with quants in
// [-nmax, nmax-1], stored in L with +nmax. It starts from iscale = -nmax/max (max the
// signed value of largest magnitude) and tries 18 nearby iscales -(nmax+0.1*is)/max,
// keeping the one with the best x^2-weighted least-squares fit. Returns the scale.
func makeQXQuants(nmax int32, x []float32, L []int8) float32 {
	amax, maxv := signedAbsMax(x)
	if amax < groupMaxEps {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	// fit returns sum(w*x*l) and sum(w*l*l) for the quants of iscale, w = x*x.
	fit := func(iscale float32, store bool) (sumlx, suml2 float32) {
		for i, xi := range x {
			l := clampInt(nearestInt(iscale*xi), -nmax, nmax-1)
			if store {
				L[i] = int8(l + nmax)
			}
			w := xi * xi
			fl := float32(l)
			sumlx += float32(float32(w*xi) * fl)
			suml2 += float32(float32(w*fl) * fl)
		}
		return sumlx, suml2
	}
	iscale := float32(-nmax) / maxv
	sumlx, suml2 := fit(iscale, true)
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := int32(-9); is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -float32(float32(nmax)+float32(0.1*float32(is))) / maxv
		sumlx, suml2 = fit(iscale, false)
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			fit(iscale, true)
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is make_q3_quants with do_rmse: quants in [-nmax, nmax-1] (stored +nmax in
// L) from iscale = -nmax/max, then up to 5 passes of coordinate descent that move one
// quant at a time when that improves the x^2-weighted fit. Returns the scale.
func makeQ3Quants(nmax int32, x []float32, L []int8) float32 {
	amax, maxv := signedAbsMax(x)
	if amax < groupMaxEps {
		for i := range x {
			L[i] = 0
		}
		return 0
	}
	iscale := float32(-nmax) / maxv
	var sumlx, suml2 float32
	for i, xi := range x {
		l := clampInt(nearestInt(iscale*xi), -nmax, nmax-1)
		L[i] = int8(l)
		w := xi * xi
		fl := float32(l)
		sumlx += float32(float32(w*xi) * fl)
		suml2 += float32(float32(w*fl) * fl)
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, xi := range x {
			w := xi * xi
			li := float32(L[i])
			slx := sumlx - float32(float32(w*xi)*li)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w*li)*li)
				newL := clampInt(nearestInt(float32(xi*sl2)/slx), -nmax, nmax-1)
				if newL != int32(L[i]) {
					fl := float32(newL)
					slx += float32(float32(w*xi) * fl)
					sl2 += float32(float32(w*fl) * fl)
					if sl2 > 0 && float32(float32(slx*slx)*suml2) > float32(float32(sumlx*sumlx)*sl2) {
						L[i] = int8(newL)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range x {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQKX2Quants is make_qkx2_quants: an asymmetric fit x ~ scale*L - theMin with L in
// [0, nmax] and theMin >= 0, weighted by weights. It starts from the range
// [min(0, minx), max] and tries nstep+1 iscales (rmin + rdelta*is + nmax)/(max-min),
// each with a weighted least-squares scale and min, keeping the one with the smallest
// weighted error (absolute if useMad, squared otherwise). laux is scratch of len(x).
func makeQKX2Quants(nmax int32, x, weights []float32, L, laux []uint8,
	rmin, rdelta float32, nstep int, useMad bool) (scale, theMin float32) {
	n := len(x)
	minv, maxv := x[0], x[0]
	sumW := weights[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		if x[i] < minv {
			minv = x[i]
		}
		if x[i] > maxv {
			maxv = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if minv > 0 {
		minv = 0
	}
	if maxv == minv {
		for i := range x {
			L[i] = 0
		}
		return 0, -minv
	}
	errOf := func(diff float32) float32 {
		if useMad {
			return fabsf(diff)
		}
		return diff * diff
	}
	iscale := float32(nmax) / (maxv - minv)
	scale = 1 / iscale
	var bestError float32
	for i := range x {
		l := nearestInt(float32(iscale * (x[i] - minv)))
		L[i] = uint8(clampInt(l, 0, nmax))
		diff := float32(float32(scale*float32(L[i]))+minv) - x[i]
		bestError += float32(weights[i] * errOf(diff))
	}
	if nstep < 1 {
		return scale, -minv
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(float32(rmin+float32(rdelta*float32(is)))+float32(nmax)) / (maxv - minv)
		var sumL, sumL2, sumXL float32
		for i := range x {
			l := clampInt(nearestInt(float32(iscale*(x[i]-minv))), 0, nmax)
			laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(float32(w*fl) * fl)
			sumXL += float32(float32(w*fl) * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := range x {
				diff := float32(float32(thisScale*float32(laux[i]))+thisMin) - x[i]
				curError += float32(weights[i] * errOf(diff))
			}
			if curError < bestError {
				copy(L[:n], laux[:n])
				bestError = curError
				scale = thisScale
				minv = thisMin
			}
		}
	}
	return scale, -minv
}
