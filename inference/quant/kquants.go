package quant

import "encoding/binary"

// The K-quants: super-blocks of QK_K = 256 elements. Layouts (little-endian, no padding):
//
//	Q2_K  84 bytes: scales[16] | qs[64] | d f16 | dmin f16
//	      16 sub-blocks of 16; scales[j] = scale (low nibble) | min (high nibble);
//	      x = d*sc*q - dmin*m with q 2 bits.
//	Q3_K 110 bytes: hmask[32] | qs[64] | scales[12] | d f16
//	      16 sub-blocks of 16 with 6-bit signed scales (stored +32, see q3Scales);
//	      q = 2 low bits from qs, minus 4 unless the hmask bit is set; x = d*(sc-32)*q.
//	Q4_K 144 bytes: d f16 | dmin f16 | scales[12] | qs[128]
//	      8 sub-blocks of 32 with 6-bit scales and mins (getScaleMinK4); x = d*sc*q - dmin*m.
//	Q5_K 176 bytes: d f16 | dmin f16 | scales[12] | qh[32] | qs[128]
//	      as Q4_K with a fifth bit per element from qh.
//	Q6_K 210 bytes: ql[128] | qh[64] | scales int8[16] | d f16
//	      16 sub-blocks of 16; q = 4 bits from ql | 2 bits from qh << 4, minus 32; x = d*sc*q.
//	Q8_K 292 bytes: d f32 | qs int8[256] | bsums int16[16]
//	      x = d*q; bsums[j] = sum of qs[16j:16j+16] (used by the dot products for the mins).
//
// The 2-bit fields of Q2_K/Q3_K (and the 6-bit ones of Q6_K) are spread over 128-element
// halves: in half h (elements 128h..128h+127), element 128h + 32s + l (s = 0..3,
// l = 0..31) uses byte 32h + l of qs at bit shift 2s.

// getScaleMinK4 unpacks the 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K
// block from its 12 scale bytes q: sub-blocks 0-3 keep their 6 bits in the low bits of
// q[j] (scale) and q[j+4] (min); sub-blocks 4-7 keep their low 4 bits in the nibbles of
// q[j+4] and their top 2 bits in the top bits of q[j-4] (scale) and q[j] (min).
func getScaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0x0f | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// q3Scales unpacks the sixteen 6-bit scales of a Q3_K block (12 bytes) and returns them
// with the +32 offset removed: the low 4 bits of scale j are the low (j < 8) or high
// (j >= 8) nibble of s[j%8]; its top 2 bits are bits 2*(j/4)..2*(j/4)+1 of s[8 + j%4].
func q3Scales(s []byte) [16]int8 {
	var out [16]int8
	for j := 0; j < 16; j++ {
		var low uint8
		if j < 8 {
			low = s[j] & 0x0f
		} else {
			low = s[j-8] >> 4
		}
		high := (s[8+j%4] >> uint(2*(j/4))) & 3
		out[j] = int8(low|high<<4) - 32
	}
	return out
}

// q2At returns the 2-bit field of element i (0..255) of a Q2_K/Q3_K qs[64].
func q2At(qs []byte, i int) uint8 {
	h, s, l := i/128, (i%128)/32, i%32
	return (qs[32*h+l] >> uint(2*s)) & 3
}

// q3At returns the signed 3-bit quant (-4..3) of element i of a Q3_K block: the 2-bit
// field, minus 4 unless the element's bit in hmask is set (bit i/32 of hmask[i%32]).
func q3At(hmask, qs []byte, i int) int32 {
	q := int32(q2At(qs, i))
	if hmask[i%32]&(1<<uint(i/32)) == 0 {
		q -= 4
	}
	return q
}

// q4KAt returns the 4-bit quant of element i of a Q4_K/Q5_K qs[128]: element 64c + l
// (l < 32) is the low nibble of qs[32c + l], element 64c + 32 + l its high nibble.
func q4KAt(qs []byte, i int) uint8 {
	c, hi, l := i/64, (i/32)%2, i%32
	return (qs[32*c+l] >> uint(4*hi)) & 0x0f
}

// q5KAt returns the 5-bit quant of element i of a Q5_K block: the Q4_K nibble plus 16
// when bit i/32 of qh[i%32] is set.
func q5KAt(qh, qs []byte, i int) uint8 {
	q := q4KAt(qs, i)
	if qh[i%32]&(1<<uint(i/32)) != 0 {
		q += 16
	}
	return q
}

func dequantQ2_K(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/QK_K; ib++ {
		b := src[ib*84 : ib*84+84]
		y := dst[ib*QK_K : ib*QK_K+QK_K]
		scales, qs := b[0:16], b[16:80]
		d, dmin := f16At(b, 80), f16At(b, 82)
		for i := 0; i < QK_K; i++ {
			sc := scales[i/16]
			dl := d * float32(sc&0x0f)
			ml := dmin * float32(sc>>4)
			y[i] = float32(dl*float32(q2At(qs, i))) - ml
		}
	}
}

func dequantQ3_K(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/QK_K; ib++ {
		b := src[ib*110 : ib*110+110]
		y := dst[ib*QK_K : ib*QK_K+QK_K]
		hmask, qs := b[0:32], b[32:96]
		scales := q3Scales(b[96:108])
		d := f16At(b, 108)
		for i := 0; i < QK_K; i++ {
			dl := d * float32(scales[i/16])
			y[i] = dl * float32(q3At(hmask, qs, i))
		}
	}
}

// scalesK4 unpacks all eight scales and mins of a Q4_K/Q5_K block.
func scalesK4(q []byte) (sc, m [8]uint8) {
	for j := range sc {
		sc[j], m[j] = getScaleMinK4(j, q)
	}
	return sc, m
}

func dequantQ4_K(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/QK_K; ib++ {
		b := src[ib*144 : ib*144+144]
		y := dst[ib*QK_K : ib*QK_K+QK_K]
		d, dmin := f16At(b, 0), f16At(b, 2)
		sc, m := scalesK4(b[4:16])
		qs := b[16:144]
		for j := 0; j < 8; j++ {
			d1 := d * float32(sc[j])
			m1 := dmin * float32(m[j])
			for i := 32 * j; i < 32*j+32; i++ {
				y[i] = float32(d1*float32(q4KAt(qs, i))) - m1
			}
		}
	}
}

func dequantQ5_K(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/QK_K; ib++ {
		b := src[ib*176 : ib*176+176]
		y := dst[ib*QK_K : ib*QK_K+QK_K]
		d, dmin := f16At(b, 0), f16At(b, 2)
		sc, m := scalesK4(b[4:16])
		qh, qs := b[16:48], b[48:176]
		for j := 0; j < 8; j++ {
			d1 := d * float32(sc[j])
			m1 := dmin * float32(m[j])
			for i := 32 * j; i < 32*j+32; i++ {
				y[i] = float32(d1*float32(q5KAt(qh, qs, i))) - m1
			}
		}
	}
}

// q6At returns the 6-bit quant (0..63, before the -32 offset) of element i of a Q6_K
// block: in half h = i/128, with s = (i%128)/32 and l = i%32, the low 4 bits are the
// low (s = 0, 1) or high (s = 2, 3) nibble of ql[64h + 32(s%2) + l], and the top 2 bits
// are bits 2s..2s+1 of qh[32h + l].
func q6At(ql, qh []byte, i int) uint8 {
	h, s, l := i/128, (i%128)/32, i%32
	lo := (ql[64*h+32*(s%2)+l] >> uint(4*(s/2))) & 0x0f
	hi := (qh[32*h+l] >> uint(2*s)) & 3
	return lo | hi<<4
}

func dequantQ6_K(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/QK_K; ib++ {
		b := src[ib*210 : ib*210+210]
		y := dst[ib*QK_K : ib*QK_K+QK_K]
		ql, qh, scales := b[0:128], b[128:192], b[192:208]
		d := f16At(b, 208)
		for i := 0; i < QK_K; i++ {
			q := int32(q6At(ql, qh, i)) - 32
			y[i] = d * float32(int8(scales[i/16])) * float32(q)
		}
	}
}

func dequantQ8_K(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/QK_K; ib++ {
		b := src[ib*292 : ib*292+292]
		d := f32At(b, 0)
		for j := 0; j < QK_K; j++ {
			dst[ib*QK_K+j] = d * float32(int8(b[4+j]))
		}
	}
}

// quantQ8_K is quantize_row_q8_K_ref: iscale = -127/max where max is the signed value of
// largest magnitude, q = min(127, nearest_int(iscale*x)), d = 1/iscale stored as f32,
// bsums over groups of 16. An all-zero block is all zero bytes (llama.cpp leaves its
// bsums unwritten there; we write zeros).
func quantQ8_K(src []float32, dst []byte) {
	for ib := 0; ib < len(src)/QK_K; ib++ {
		x := src[ib*QK_K : ib*QK_K+QK_K]
		b := dst[ib*292 : ib*292+292]
		amax, maxv := signedAbsMax(x)
		if amax == 0 {
			clear(b)
			continue
		}
		iscale := -127 / maxv
		for j := 0; j < QK_K; j++ {
			v := nearestInt(iscale * x[j])
			b[4+j] = uint8(int8(min(127, v)))
		}
		for j := 0; j < QK_K/16; j++ {
			var sum int32
			for l := 0; l < 16; l++ {
				sum += int32(int8(b[4+16*j+l]))
			}
			binary.LittleEndian.PutUint16(b[260+2*j:], uint16(int16(sum)))
		}
		putF32(b, 0, 1/iscale)
	}
}
