package quant

// Weight quantizers for the K-quants: llama.cpp's quantize_row_q{2..6}_K_ref (what its
// quantizer runs when no importance matrix is given), with the same search helpers
// (make_qx_quants, make_q3_quants, make_qkx2_quants) and the same search parameters.

// pack2Bit writes 256 2-bit values L (0..3) into qs[64] with the Q2_K/Q3_K layout: in
// each 128-element half h, element 128h + 32s + l goes to bits 2s of qs[32h + l].
func pack2Bit(L []int8, qs []byte) {
	for j := 0; j < QK_K; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = uint8(L[j+l]) | uint8(L[j+l+32])<<2 | uint8(L[j+l+64])<<4 | uint8(L[j+l+96])<<6
		}
	}
}

// quantQ2_K is quantize_row_q2_K_ref.
func quantQ2_K(src []float32, dst []byte) {
	var L, laux [QK_K]uint8
	var weights [16]float32
	var scales, mins [QK_K / 16]float32
	const q4scale = 15
	for ib := 0; ib < len(src)/QK_K; ib++ {
		x := src[ib*QK_K : ib*QK_K+QK_K]
		b := dst[ib*84 : ib*84+84]
		sc, qs := b[0:16], b[16:80]
		var maxScale, maxMin float32
		for j := 0; j < QK_K/16; j++ {
			xs := x[16*j : 16*j+16]
			for l := range weights {
				weights[l] = fabsf(xs[l])
			}
			scales[j], mins[j] = makeQKX2Quants(3, xs, weights[:], L[16*j:16*j+16], laux[:16], -0.5, 0.1, 15, true)
			maxScale = max32(maxScale, scales[j])
			maxMin = max32(maxMin, mins[j])
		}
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := range scales {
				sc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putF16(b, 80, maxScale/q4scale)
		} else {
			clear(sc)
			putF16(b, 80, 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := range mins {
				sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putF16(b, 82, maxMin/q4scale)
		} else {
			putF16(b, 82, 0)
		}
		var Li [QK_K]int8
		d, dmin := f16At(b, 80), f16At(b, 82)
		for j := 0; j < QK_K/16; j++ {
			dl := d * float32(sc[j]&0x0f)
			if dl != 0 {
				ml := dmin * float32(sc[j]>>4)
				for ii := 0; ii < 16; ii++ {
					l := nearestInt((x[16*j+ii] + ml) / dl)
					L[16*j+ii] = uint8(clampInt(l, 0, 3))
				}
			}
			for ii := 0; ii < 16; ii++ {
				Li[16*j+ii] = int8(L[16*j+ii])
			}
		}
		pack2Bit(Li[:], qs)
	}
}

// max32 is the `if (v > m) m = v` update of the C loops (a NaN v never wins).
func max32(m, v float32) float32 {
	if v > m {
		return v
	}
	return m
}

// quantQ3_K is quantize_row_q3_K_ref.
func quantQ3_K(src []float32, dst []byte) {
	var L [QK_K]int8
	var scales [QK_K / 16]float32
	for ib := 0; ib < len(src)/QK_K; ib++ {
		x := src[ib*QK_K : ib*QK_K+QK_K]
		b := dst[ib*110 : ib*110+110]
		hmask, qs, sc := b[0:32], b[32:96], b[96:108]
		var maxScale, amax float32
		for j := 0; j < QK_K/16; j++ {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
			if a := fabsf(scales[j]); a > amax {
				amax, maxScale = a, scales[j]
			}
		}
		clear(sc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < QK_K/16; j++ {
				l := int8(nearestInt(iscale * scales[j])) // C: int8_t l = nearest_int(...)
				lv := uint8(clampInt(int32(l), -32, 31) + 32)
				if j < 8 {
					sc[j] = lv & 0x0f
				} else {
					sc[j-8] |= (lv & 0x0f) << 4
				}
				sc[8+j%4] |= (lv >> 4) << uint(2*(j/4))
			}
			putF16(b, 108, 1/iscale)
		} else {
			putF16(b, 108, 0)
		}
		d := f16At(b, 108)
		s := q3Scales(sc)
		for j := 0; j < QK_K/16; j++ {
			dl := d * float32(s[j])
			if dl == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := clampInt(nearestInt(x[16*j+ii]/dl), -4, 3)
				L[16*j+ii] = int8(l + 4)
			}
		}
		// High bit of element j goes to bit j/32 of hmask[j%32].
		clear(hmask)
		for j := 0; j < QK_K; j++ {
			if L[j] > 3 {
				hmask[j%32] |= 1 << uint(j/32)
				L[j] -= 4
			}
		}
		pack2Bit(L[:], qs)
	}
}

// packScalesK4 stores eight 6-bit scales and mins of a Q4_K/Q5_K block into its 12
// scale bytes, the inverse of getScaleMinK4.
func packScalesK4(ls, lm *[8]uint8, s []byte) {
	for j := 0; j < 8; j++ {
		if j < 4 {
			s[j] = ls[j]
			s[j+4] = lm[j]
		} else {
			s[j+4] = ls[j]&0x0f | (lm[j]&0x0f)<<4
			s[j-4] |= (ls[j] >> 4) << 6
			s[j] |= (lm[j] >> 4) << 6
		}
	}
}

// quantK4K5 is the shared body of quantize_row_q4_K_ref (nmax 15, rmin -1, nstep 20) and
// quantize_row_q5_K_ref (nmax 31, rmin -0.5, nstep 15): per 32-element sub-block a
// make_qkx2_quants fit with weights av_x + |x|, scales and mins quantized to 6 bits
// against their maxima, then the quants recomputed from the stored scales. It writes
// d, dmin and the scales into b and returns the quants in L.
func quantK4K5(x []float32, b []byte, L *[QK_K]uint8, nmax int32, rmin float32, nstep int) {
	var laux [32]uint8
	var weights [32]float32
	var scales, mins [8]float32
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrtf(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + fabsf(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:32*j+32], laux[:], rmin, 0.1, nstep, false)
		maxScale = max32(maxScale, scales[j])
		maxMin = max32(maxMin, mins[j])
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	var ls, lm [8]uint8
	for j := 0; j < 8; j++ {
		ls[j] = min(63, uint8(nearestInt(invScale*scales[j])))
		lm[j] = min(63, uint8(nearestInt(invMin*mins[j])))
	}
	packScalesK4(&ls, &lm, b[4:16])
	putF16(b, 0, maxScale/63)
	putF16(b, 2, maxMin/63)
	d, dmin := f16At(b, 0), f16At(b, 2)
	for j := 0; j < 8; j++ {
		sc, m := getScaleMinK4(j, b[4:16])
		dl := d * float32(sc)
		if dl == 0 {
			continue
		}
		dm := dmin * float32(m)
		for ii := 0; ii < 32; ii++ {
			l := nearestInt((x[32*j+ii] + dm) / dl)
			L[32*j+ii] = uint8(clampInt(l, 0, nmax))
		}
	}
}

// quantQ4_K is quantize_row_q4_K_ref. Quants: element 64c + l (l < 32) is the low nibble
// of qs[32c + l], element 64c + 32 + l its high nibble.
func quantQ4_K(src []float32, dst []byte) {
	var L [QK_K]uint8
	for ib := 0; ib < len(src)/QK_K; ib++ {
		x := src[ib*QK_K : ib*QK_K+QK_K]
		b := dst[ib*144 : ib*144+144]
		quantK4K5(x, b, &L, 15, -1, 20)
		qs := b[16:144]
		for c := 0; c < 4; c++ {
			for l := 0; l < 32; l++ {
				qs[32*c+l] = L[64*c+l] | L[64*c+l+32]<<4
			}
		}
	}
}

// quantQ5_K is quantize_row_q5_K_ref: as Q4_K, with the fifth bit of element 32j + l in
// bit j of qh[l].
func quantQ5_K(src []float32, dst []byte) {
	var L [QK_K]uint8
	for ib := 0; ib < len(src)/QK_K; ib++ {
		x := src[ib*QK_K : ib*QK_K+QK_K]
		b := dst[ib*176 : ib*176+176]
		quantK4K5(x, b, &L, 31, -0.5, 15)
		qh, qs := b[16:48], b[48:176]
		clear(qh)
		for c := 0; c < 4; c++ {
			for l := 0; l < 32; l++ {
				l1, l2 := L[64*c+l], L[64*c+l+32]
				if l1 > 15 {
					l1 -= 16
					qh[l] |= 1 << uint(2*c)
				}
				if l2 > 15 {
					l2 -= 16
					qh[l] |= 2 << uint(2*c)
				}
				qs[32*c+l] = l1 | l2<<4
			}
		}
	}
}

// quantQ6_K is quantize_row_q6_K_ref: per 16-element sub-block a make_qx_quants fit with
// nmax 32, the 16 scales quantized to int8 against the one of largest magnitude
// (iscale = -128/max_scale), then the quants recomputed from the stored scales.
func quantQ6_K(src []float32, dst []byte) {
	var L [QK_K]int8
	var scales [QK_K / 16]float32
	for ib := 0; ib < len(src)/QK_K; ib++ {
		x := src[ib*QK_K : ib*QK_K+QK_K]
		b := dst[ib*210 : ib*210+210]
		ql, qh, sc := b[0:128], b[128:192], b[192:208]
		var maxScale, maxAbsScale float32
		for j := 0; j < QK_K/16; j++ {
			scales[j] = makeQXQuants(32, x[16*j:16*j+16], L[16*j:16*j+16])
			if a := fabsf(scales[j]); a > maxAbsScale {
				maxAbsScale, maxScale = a, scales[j]
			}
		}
		if maxAbsScale < groupMaxEps {
			clear(b)
			continue
		}
		iscale := -128 / maxScale
		putF16(b, 208, 1/iscale)
		for j := range scales {
			sc[j] = uint8(int8(min(127, nearestInt(iscale*scales[j]))))
		}
		d := f16At(b, 208)
		for j := 0; j < QK_K/16; j++ {
			dl := d * float32(int8(sc[j]))
			if dl == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := clampInt(nearestInt(x[16*j+ii]/dl), -32, 31)
				L[16*j+ii] = int8(l + 32)
			}
		}
		// Element 128h + 32s + l: low 4 bits in ql[64h + 32(s%2) + l] (nibble s/2), top 2
		// bits at bit 2s of qh[32h + l] (the inverse of q6At).
		for h := 0; h < 2; h++ {
			for l := 0; l < 32; l++ {
				q := func(s int) uint8 { return uint8(L[128*h+32*s+l]) }
				ql[64*h+l] = q(0)&0x0f | (q(2)&0x0f)<<4
				ql[64*h+32+l] = q(1)&0x0f | (q(3)&0x0f)<<4
				qh[32*h+l] = q(0)>>4 | (q(1)>>4)<<2 | (q(2)>>4)<<4 | (q(3)>>4)<<6
			}
		}
	}
}
