package quant

import "math"

// IEEE 754 binary16 ("half", ggml_fp16_t) and bfloat16 (ggml_bf16_t) conversions.
//
// They are bit-exact with ggml's scalar conversions (ggml_compute_fp16_to_fp32,
// ggml_compute_fp32_to_fp16, ggml_compute_fp32_to_bf16) and, except for NaN payloads,
// with the x86 F16C instructions: every finite value and infinity converts identically.
// NaN: FP32ToFP16 returns the canonical quiet NaN 0x7e00 with the input's sign, as
// ggml's scalar path does (F16C would keep the top payload bits).

// FP16ToFP32 widens a half (bits h) to float32. Exact for every half: normals,
// subnormals, zeros and infinities; a NaN stays a NaN with its payload in the top
// mantissa bits and the quiet bit set.
func FP16ToFP32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // infinity or NaN
		bits := sign | 0x7f800000 | man<<13
		if man != 0 {
			bits |= 0x00400000 // quiet, as a float operation on x86 would make it
		}
		return math.Float32frombits(bits)
	case exp == 0: // zero or subnormal: man * 2^-24, exact in float32
		v := float32(man) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(v))
	default: // normal: rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
	}
}

// FP32ToFP16 rounds a float32 to the nearest half, ties to even. Values at or above
// 65520 in magnitude become infinity, values too small for the smallest subnormal
// (2^-24) round to a signed zero or to it, and NaN becomes sign|0x7e00.
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 // unbiased exponent; float32 subnormals have e = -127 and end as zero
	if e > 15 {
		return sign | 0x7c00
	}
	if e >= -14 {
		// Normal half: keep the top 10 mantissa bits, round the 13 dropped ones. A carry
		// out of the mantissa correctly bumps the exponent, up to infinity (0x7c00).
		h := uint32(e+15)<<10 | man>>13
		rest := man & 0x1fff
		if rest > 0x1000 || (rest == 0x1000 && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	if e < -25 {
		return sign // below half the smallest subnormal
	}
	// Subnormal half: the value is m * 2^(e-23) with m the 24-bit significand; in units
	// of 2^-24 that is m >> shift with shift = -(e+1), 14..24. Round to nearest even;
	// rounding up to 0x400 gives the smallest normal, which is the right encoding.
	m := man | 0x800000
	shift := uint(-(e + 1))
	h := m >> shift
	rest := m & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rest > half || (rest == half && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}

// BF16ToFP32 widens a bfloat16 (the top 16 bits of a float32). Exact.
func BF16ToFP32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FP32ToBF16 rounds a float32 to bfloat16 as ggml_compute_fp32_to_bf16 does: round to
// nearest, ties to even (overflowing to infinity); a NaN keeps its top bits and is
// forced quiet (bit 6 of the result).
func FP32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}
