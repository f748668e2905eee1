package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The block codecs follow llama.cpp's ggml-quants.c (dequantize_row_*, quantize_row_*_ref)
// operation for operation, in float32, so their results are bit-identical to the C code
// compiled without floating-point contraction. Products that are then added are wrapped
// in float32(...): an explicit conversion stops the Go compiler from fusing them into an
// FMA (which it may do on arm64 and other targets), so the oracle gives the same bits on
// every architecture.

// dequantizers maps a type to its block decoder: src holds whole blocks of the type, dst
// the matching number of elements.
var dequantizers = map[Type]func(src []byte, dst []float32){
	F32:  dequantF32,
	F16:  dequantF16,
	BF16: dequantBF16,
	Q4_0: dequantQ4_0,
	Q4_1: dequantQ4_1,
	Q5_0: dequantQ5_0,
	Q5_1: dequantQ5_1,
	Q8_0: dequantQ8_0,
	Q8_1: dequantQ8_1,
	Q2_K: dequantQ2_K,
	Q3_K: dequantQ3_K,
	Q4_K: dequantQ4_K,
	Q5_K: dequantQ5_K,
	Q6_K: dequantQ6_K,
	Q8_K: dequantQ8_K,
}

// quantizers maps a type to its block encoder: src holds whole blocks of elements, dst
// the matching bytes. Every byte of dst is written.
var quantizers = map[Type]func(src []float32, dst []byte){
	F32:  quantF32,
	F16:  quantF16,
	BF16: quantBF16,
	Q4_0: quantQ4_0,
	Q4_1: quantQ4_1,
	Q5_0: quantQ5_0,
	Q5_1: quantQ5_1,
	Q8_0: quantQ8_0,
	Q8_1: quantQ8_1,
	Q2_K: quantQ2_K,
	Q3_K: quantQ3_K,
	Q4_K: quantQ4_K,
	Q5_K: quantQ5_K,
	Q6_K: quantQ6_K,
	Q8_K: quantQ8_K,
}

// checkRow validates that n elements of type t are exactly nbytes bytes.
func checkRow(op string, t Type, n int, nbytes int) error {
	if n < 0 {
		return fmt.Errorf("quant: %s %v: negative element count %d", op, t, n)
	}
	want, err := RowBytes(t, uint64(n))
	if err != nil {
		return fmt.Errorf("quant: %s: %w", op, err)
	}
	if uint64(nbytes) != want {
		return fmt.Errorf("quant: %s %v: %d elements need %d bytes, have %d", op, t, n, want, nbytes)
	}
	return nil
}

// Dequantize decodes len(dst) elements (a multiple of t.BlockSize()) from src, which must
// hold exactly RowBytes(t, len(dst)) bytes, as ggml's dequantize_row_* does. Supported:
// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1 (d*q), Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
// Q8_K. Other types and wrong lengths are errors.
func Dequantize(t Type, src []byte, dst []float32) error {
	f, ok := dequantizers[t]
	if !ok {
		return fmt.Errorf("quant: cannot dequantize %v", t)
	}
	if err := checkRow("dequantize", t, len(dst), len(src)); err != nil {
		return err
	}
	f(src, dst)
	return nil
}

// Quantize encodes src (len a multiple of t.BlockSize()) into dst, which must be exactly
// RowBytes(t, len(src)) bytes, with llama.cpp's reference quantizers (no importance
// matrix). Every byte of dst is written. NaN or infinite inputs do not fail (the result
// is then as meaningless as llama.cpp's). See CanQuantize for the supported types.
func Quantize(t Type, src []float32, dst []byte) error {
	f, ok := quantizers[t]
	if !ok {
		return fmt.Errorf("quant: cannot quantize to %v", t)
	}
	if err := checkRow("quantize", t, len(src), len(dst)); err != nil {
		return err
	}
	f(src, dst)
	return nil
}

// CanQuantize reports whether Quantize supports t: F32, F16, BF16, Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and Q8_K.
func CanQuantize(t Type) bool { _, ok := quantizers[t]; return ok }

// CanDequantize reports whether Dequantize supports t.
func CanDequantize(t Type) bool { _, ok := dequantizers[t]; return ok }

// ---- little helpers on raw bytes (all little-endian, as GGUF and ggml are) ----

func f16At(b []byte, off int) float32 { return FP16ToFP32(binary.LittleEndian.Uint16(b[off:])) }

func putF16(b []byte, off int, f float32) { binary.LittleEndian.PutUint16(b[off:], FP32ToFP16(f)) }

func f32At(b []byte, off int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[off:]))
}

func putF32(b []byte, off int, f float32) {
	binary.LittleEndian.PutUint32(b[off:], math.Float32bits(f))
}

// nearestInt is ggml's nearest_int: round to nearest, ties to even, by adding 1.5*2^23
// and reading the low mantissa bits. Exact for |f| <= 4194303; outside that range (and
// for NaN) it returns the same garbage as the C code, which its callers then clamp.
func nearestInt(f float32) int32 {
	v := float32(f) + 12582912
	i := int32(math.Float32bits(v))
	return (i & 0x007fffff) - 0x00400000
}

// roundf is C's roundf: to nearest, ties away from zero.
func roundf(f float32) float32 { return float32(math.Round(float64(f))) }

// toInt8 converts a float holding an integer value as C's (int8_t) cast does for values
// in range; out-of-range values and NaN give an implementation-defined byte, never a panic.
func toInt8(f float32) int8 { return int8(int32(f)) }

// fabsf is C's fabsf.
func fabsf(f float32) float32 { return math.Float32frombits(math.Float32bits(f) &^ (1 << 31)) }

// sqrtf is C's sqrtf: the float64 square root rounded to float32 is correctly rounded.
func sqrtf(f float32) float32 { return float32(math.Sqrt(float64(f))) }

func clampInt(v, lo, hi int32) int32 { return max(lo, min(hi, v)) }

// ---- plain types ----

func dequantF32(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = f32At(src, 4*i)
	}
}

func dequantF16(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = f16At(src, 2*i)
	}
}

func dequantBF16(src []byte, dst []float32) {
	for i := range dst {
		dst[i] = BF16ToFP32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func quantF32(src []float32, dst []byte) {
	for i, v := range src {
		putF32(dst, 4*i, v)
	}
}

func quantF16(src []float32, dst []byte) {
	for i, v := range src {
		putF16(dst, 2*i, v)
	}
}

func quantBF16(src []float32, dst []byte) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToBF16(v))
	}
}
