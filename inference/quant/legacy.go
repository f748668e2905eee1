package quant

import (
	"encoding/binary"
	"math"
)

// The 32-element block formats. Block layouts (little-endian, no padding):
//
//	Q4_0 18 bytes: d f16 | qs[16]           x[j] = d*(lo(qs[j])-8), x[j+16] = d*(hi(qs[j])-8)
//	Q4_1 20 bytes: d f16 | m f16 | qs[16]   x[j] = d*lo(qs[j]) + m,  x[j+16] = d*hi(qs[j]) + m
//	Q5_0 22 bytes: d f16 | qh u32 | qs[16]  5-bit q = nibble | bit j (or j+16) of qh << 4; x = d*(q-16)
//	Q5_1 24 bytes: d f16 | m f16 | qh u32 | qs[16]   x = d*q + m
//	Q8_0 34 bytes: d f16 | qs int8[32]      x[j] = d*qs[j]
//	Q8_1 36 bytes: d f16 | s f16 | qs int8[32]   s = d*sum(qs), x[j] = d*qs[j]
//
// lo/hi are the low and high nibbles: byte j holds elements j and j+16.

const qk = 32 // elements per legacy block

func dequantQ4_0(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/qk; ib++ {
		b := src[ib*18 : ib*18+18]
		y := dst[ib*qk : ib*qk+qk]
		d := f16At(b, 0)
		qs := b[2:18]
		for j := 0; j < qk/2; j++ {
			x0 := int32(qs[j]&0x0f) - 8
			x1 := int32(qs[j]>>4) - 8
			y[j] = float32(x0) * d
			y[j+qk/2] = float32(x1) * d
		}
	}
}

func dequantQ4_1(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/qk; ib++ {
		b := src[ib*20 : ib*20+20]
		y := dst[ib*qk : ib*qk+qk]
		d, m := f16At(b, 0), f16At(b, 2)
		qs := b[4:20]
		for j := 0; j < qk/2; j++ {
			y[j] = float32(float32(qs[j]&0x0f)*d) + m
			y[j+qk/2] = float32(float32(qs[j]>>4)*d) + m
		}
	}
}

// q5High returns the fifth bits (0 or 0x10) of elements j and j+16 from qh.
func q5High(qh uint32, j int) (h0, h1 uint8) {
	return uint8((qh>>uint(j))<<4) & 0x10, uint8(qh>>uint(j+12)) & 0x10
}

func dequantQ5_0(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/qk; ib++ {
		b := src[ib*22 : ib*22+22]
		y := dst[ib*qk : ib*qk+qk]
		d := f16At(b, 0)
		qh := binary.LittleEndian.Uint32(b[2:])
		qs := b[6:22]
		for j := 0; j < qk/2; j++ {
			h0, h1 := q5High(qh, j)
			x0 := int32(qs[j]&0x0f|h0) - 16
			x1 := int32(qs[j]>>4|h1) - 16
			y[j] = float32(x0) * d
			y[j+qk/2] = float32(x1) * d
		}
	}
}

func dequantQ5_1(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/qk; ib++ {
		b := src[ib*24 : ib*24+24]
		y := dst[ib*qk : ib*qk+qk]
		d, m := f16At(b, 0), f16At(b, 2)
		qh := binary.LittleEndian.Uint32(b[4:])
		qs := b[8:24]
		for j := 0; j < qk/2; j++ {
			h0, h1 := q5High(qh, j)
			y[j] = float32(float32(qs[j]&0x0f|h0)*d) + m
			y[j+qk/2] = float32(float32(qs[j]>>4|h1)*d) + m
		}
	}
}

func dequantQ8_0(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/qk; ib++ {
		b := src[ib*34 : ib*34+34]
		d := f16At(b, 0)
		for j := 0; j < qk; j++ {
			dst[ib*qk+j] = float32(int8(b[2+j])) * d
		}
	}
}

func dequantQ8_1(src []byte, dst []float32) {
	for ib := 0; ib < len(dst)/qk; ib++ {
		b := src[ib*36 : ib*36+36]
		d := f16At(b, 0)
		for j := 0; j < qk; j++ {
			dst[ib*qk+j] = float32(int8(b[4+j])) * d
		}
	}
}

// signedAbsMax returns the largest |x| and the signed value that has it (the first one
// on ties), skipping NaN, as the C loops `if (amax < fabsf(v)) { amax = fabsf(v); max = v; }`.
func signedAbsMax(x []float32) (amax, maxv float32) {
	for _, v := range x {
		if amax < fabsf(v) {
			amax, maxv = fabsf(v), v
		}
	}
	return amax, maxv
}

// minMax returns the smallest and largest values (NaN skipped), starting from
// +-FLT_MAX as quantize_row_q4_1_ref does.
func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// quantQ4_0 is quantize_row_q4_0_ref: d = max/-8 where max is the signed value of
// largest magnitude, q = min(15, (int8)(x/d + 8.5)).
func quantQ4_0(src []float32, dst []byte) {
	for ib := 0; ib < len(src)/qk; ib++ {
		x := src[ib*qk : ib*qk+qk]
		b := dst[ib*18 : ib*18+18]
		_, maxv := signedAbsMax(x)
		d := maxv / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		for j := 0; j < qk/2; j++ {
			x0 := float32(x[j] * id)
			x1 := float32(x[j+qk/2] * id)
			xi0 := min(15, toInt8(x0+8.5))
			xi1 := min(15, toInt8(x1+8.5))
			b[2+j] = uint8(xi0) | uint8(xi1)<<4
		}
	}
}

// quantQ4_1 is quantize_row_q4_1_ref: d = (max-min)/15, m = min, q = min(15, (int8)((x-min)/d + 0.5)).
func quantQ4_1(src []float32, dst []byte) {
	for ib := 0; ib < len(src)/qk; ib++ {
		x := src[ib*qk : ib*qk+qk]
		b := dst[ib*20 : ib*20+20]
		lo, hi := minMax(x)
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		putF16(b, 2, lo)
		for j := 0; j < qk/2; j++ {
			x0 := float32((x[j] - lo) * id)
			x1 := float32((x[j+qk/2] - lo) * id)
			xi0 := min(15, toInt8(x0+0.5))
			xi1 := min(15, toInt8(x1+0.5))
			b[4+j] = uint8(xi0) | uint8(xi1)<<4
		}
	}
}

// quantQ5_0 is quantize_row_q5_0_ref: d = max/-16, q = min(31, (int8)(x/d + 16.5)).
func quantQ5_0(src []float32, dst []byte) {
	for ib := 0; ib < len(src)/qk; ib++ {
		x := src[ib*qk : ib*qk+qk]
		b := dst[ib*22 : ib*22+22]
		_, maxv := signedAbsMax(x)
		d := maxv / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		var qh uint32
		for j := 0; j < qk/2; j++ {
			x0 := float32(x[j] * id)
			x1 := float32(x[j+qk/2] * id)
			xi0 := uint8(min(31, toInt8(x0+16.5)))
			xi1 := uint8(min(31, toInt8(x1+16.5)))
			b[6+j] = xi0&0x0f | (xi1&0x0f)<<4
			qh |= uint32(xi0&0x10) >> 4 << uint(j)
			qh |= uint32(xi1&0x10) >> 4 << uint(j+qk/2)
		}
		binary.LittleEndian.PutUint32(b[2:], qh)
	}
}

// quantQ5_1 is quantize_row_q5_1_ref: d = (max-min)/31, m = min, q = (uint8)((x-min)/d + 0.5).
func quantQ5_1(src []float32, dst []byte) {
	for ib := 0; ib < len(src)/qk; ib++ {
		x := src[ib*qk : ib*qk+qk]
		b := dst[ib*24 : ib*24+24]
		lo, hi := minMax(x)
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		putF16(b, 2, lo)
		var qh uint32
		for j := 0; j < qk/2; j++ {
			x0 := float32((x[j] - lo) * id)
			x1 := float32((x[j+qk/2] - lo) * id)
			// C's (uint8_t) of a float in [0, 31.5]; int32 first so NaN cannot panic.
			xi0 := uint8(int32(x0 + 0.5))
			xi1 := uint8(int32(x1 + 0.5))
			b[8+j] = xi0&0x0f | (xi1&0x0f)<<4
			qh |= uint32(xi0&0x10) >> 4 << uint(j)
			qh |= uint32(xi1&0x10) >> 4 << uint(j+qk/2)
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
	}
}

// absMax8 is the amax loop of the Q8 quantizers, amax = MAX(amax, fabsf(v)) with C's
// MAX(a, b) = a > b ? a : b (so a NaN can replace amax; later values then replace it).
func absMax8(x []float32) float32 {
	var amax float32
	for _, v := range x {
		a := fabsf(v)
		if !(amax > a) {
			amax = a
		}
	}
	return amax
}

// quantQ8_0 is quantize_row_q8_0_ref: d = amax/127 (stored as f16), id = 1/d from the
// float32 d, q = roundf(x*id).
func quantQ8_0(src []float32, dst []byte) {
	for ib := 0; ib < len(src)/qk; ib++ {
		x := src[ib*qk : ib*qk+qk]
		b := dst[ib*34 : ib*34+34]
		d := absMax8(x) / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		for j := 0; j < qk; j++ {
			b[2+j] = uint8(toInt8(roundf(x[j] * id)))
		}
	}
}

// quantQ8_1 is quantize_row_q8_1_ref: as Q8_0, plus s = d*sum(q) stored as f16.
func quantQ8_1(src []float32, dst []byte) {
	for ib := 0; ib < len(src)/qk; ib++ {
		x := src[ib*qk : ib*qk+qk]
		b := dst[ib*36 : ib*36+36]
		d := absMax8(x) / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, 0, d)
		var sum int32
		for j := 0; j < qk; j++ {
			q := toInt8(roundf(x[j] * id))
			b[4+j] = uint8(q)
			sum += int32(q)
		}
		putF16(b, 2, float32(sum)*d)
	}
}
