package cpu

/*
#cgo CFLAGS: -O3 -std=gnu11
#cgo LDFLAGS: -lm
#include "kernels.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

// Kernels calls the C kernels on one instruction-set path. The zero value is the scalar
// path. It holds no state and is safe for concurrent use.
type Kernels struct {
	isa     ISA
	bf16    bool // BF16 weights' products on AVX512_BF16 (lg_avx512bf16.c)
	vnni256 bool // the quantized types' batch products on AVX-VNNI (kq_avxvnni.c, lg_avxvnni.c)
}

// New returns the kernels for isa; on the AVX-512 paths of a CPU with AVX512_BF16, BF16
// weights' products use it, and on the AVX2 path of a CPU with AVX-VNNI (Intel Alder Lake
// and later, AMD Zen 5) the quantized types' batch products (prompts) use that.
func New(isa ISA) Kernels {
	return Kernels{
		isa:     isa,
		bf16:    (isa == AVX512 || isa == AVX512VNNI) && cpuid.CPU.Supports(cpuid.AVX512BF16),
		vnni256: isa == AVX2 && cpuid.CPU.Supports(cpuid.AVXVNNI),
	}
}

// WithoutBF16 is k with BF16 products on the path's own code, not AVX512_BF16's (for
// tests and comparisons).
func (k Kernels) WithoutBF16() Kernels { k.bf16 = false; return k }

// BF16 reports whether BF16 weights' products use AVX512_BF16.
func (k Kernels) BF16() bool { return k.bf16 }

// WithoutVNNI256 is k with the quantized batch products on the AVX2 path's own code, not
// AVX-VNNI's (for tests and comparisons).
func (k Kernels) WithoutVNNI256() Kernels { k.vnni256 = false; return k }

// VNNI256 reports whether the quantized types' batch products use AVX-VNNI.
func (k Kernels) VNNI256() bool { return k.vnni256 }

// Name is the path's name with the extensions in use: "avx2+avxvnni",
// "avx512vnni+bf16", or ISA().String().
func (k Kernels) Name() string {
	s := k.isa.String()
	if k.vnni256 {
		s += "+avxvnni"
	}
	if k.bf16 {
		s += "+bf16"
	}
	return s
}

// ISA is the path in use.
func (k Kernels) ISA() ISA { return k.isa }

// ggml type ids of the types the kernels know (the numbers of package quant).
const (
	TypeF32  = 0
	TypeF16  = 1
	TypeQ4_0 = 2
	TypeQ4_1 = 3
	TypeQ5_0 = 6
	TypeQ5_1 = 7
	TypeQ8_0 = 8
	TypeQ8_1 = 9
	TypeQ2_K = 10
	TypeQ3_K = 11
	TypeQ4_K = 12
	TypeQ5_K = 13
	TypeQ6_K = 14
	TypeQ8_K = 15
	TypeBF16 = 30
)

// blockSizes gives (elements, bytes) per block.
var blockSizes = map[int][2]int{
	TypeF32: {1, 4}, TypeF16: {1, 2}, TypeBF16: {1, 2},
	TypeQ4_0: {32, 18}, TypeQ4_1: {32, 20}, TypeQ5_0: {32, 22}, TypeQ5_1: {32, 24},
	TypeQ8_0: {32, 34}, TypeQ8_1: {32, 36},
	TypeQ2_K: {256, 84}, TypeQ3_K: {256, 110}, TypeQ4_K: {256, 144}, TypeQ5_K: {256, 176},
	TypeQ6_K: {256, 210}, TypeQ8_K: {256, 292},
}

// RowBytes is the size of a row of n elements of type t, or -1 if t is unknown or n is
// not a multiple of its block size.
func RowBytes(t, n int) int {
	bs, ok := blockSizes[t]
	if !ok || n < 0 || n%bs[0] != 0 {
		return -1
	}
	return n / bs[0] * bs[1]
}

func need(what string, have, want int) {
	if have < want || want < 0 {
		panic(fmt.Sprintf("kernels/cpu: %s: %d bytes or elements, need %d", what, have, want))
	}
}

func f32p(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

func bytep(s []byte) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func u16p(s []uint16) *C.uint16_t {
	if len(s) == 0 {
		return nil
	}
	return (*C.uint16_t)(unsafe.Pointer(&s[0]))
}

// QuantizeRows converts nrows rows of n floats from x into y, rows packed, in the
// activation type vdt (Q8_0, Q8_1, Q8_K, F16, BF16 or F32). It reports false when no
// kernel handles vdt.
func (k Kernels) QuantizeRows(vdt int, x []float32, y []byte, nrows, n int) bool {
	rb := RowBytes(vdt, n)
	need("QuantizeRows x", len(x), nrows*n)
	need("QuantizeRows y", len(y), nrows*rb)
	if nrows == 0 || n == 0 {
		return true
	}
	isa := C.int(k.isa)
	if C.ember_quantize_rows_kq(isa, C.int(vdt), f32p(x), bytep(y), C.int64_t(nrows), C.int64_t(n)) == 0 {
		return true
	}
	return C.ember_quantize_rows_lg(isa, C.int(vdt), f32p(x), bytep(y), C.int64_t(nrows), C.int64_t(n)) == 0
}

// Gemm computes dst[i*ldd + r] = dot(w row r, xq row i) for i < nx and r0 <= r < r1,
// where w holds rows of kdim elements of wtype wrb bytes apart and xq holds nx rows
// quantized to wtype's dot partner, xrb bytes apart. It reports false when no kernel
// handles wtype.
func (k Kernels) Gemm(wtype int, w []byte, wrb int, xq []byte, xrb int, nx, kdim, r0, r1 int, dst []float32, ldd int) bool {
	need("Gemm w row", wrb, RowBytes(wtype, kdim))
	need("Gemm w", len(w), r1*wrb)
	need("Gemm xq", len(xq), nx*xrb)
	need("Gemm dst", len(dst), (nx-1)*ldd+r1)
	if r0 < 0 || r0 > r1 || ldd < r1 {
		panic(fmt.Sprintf("kernels/cpu: Gemm rows [%d,%d) with ldd %d", r0, r1, ldd))
	}
	if nx == 0 || r0 == r1 {
		return true
	}
	if k.bf16 && wtype == TypeBF16 && C.ember_gemm_bf16(bytep(w), C.int64_t(wrb), bytep(xq), C.int64_t(xrb),
		C.int64_t(nx), C.int64_t(kdim), C.int64_t(r0), C.int64_t(r1), f32p(dst), C.int64_t(ldd)) == 0 {
		return true
	}
	isa := C.int(k.isa)
	if k.vnni256 {
		isa = C.EMBER_ISA_AVX2VNNI // the batch products' own path; everything else is AVX2's
	}
	args := func(f func(C.int, C.int, unsafe.Pointer, C.int64_t, unsafe.Pointer, C.int64_t, C.int64_t, C.int64_t, C.int64_t, C.int64_t, *C.float, C.int64_t) C.int) bool {
		return f(isa, C.int(wtype), bytep(w), C.int64_t(wrb), bytep(xq), C.int64_t(xrb), C.int64_t(nx),
			C.int64_t(kdim), C.int64_t(r0), C.int64_t(r1), f32p(dst), C.int64_t(ldd)) == 0
	}
	return args(gemmKQ) || args(gemmLG)
}

func gemmKQ(isa, t C.int, w unsafe.Pointer, wrb C.int64_t, xq unsafe.Pointer, xrb, nx, kd, r0, r1 C.int64_t, dst *C.float, ldd C.int64_t) C.int {
	return C.ember_gemm_kq(isa, t, w, wrb, xq, xrb, nx, kd, r0, r1, dst, ldd)
}

func gemmLG(isa, t C.int, w unsafe.Pointer, wrb C.int64_t, xq unsafe.Pointer, xrb, nx, kd, r0, r1 C.int64_t, dst *C.float, ldd C.int64_t) C.int {
	return C.ember_gemm_lg(isa, t, w, wrb, xq, xrb, nx, kd, r0, r1, dst, ldd)
}

// DequantizeRow decodes one row of len(y) elements of type t from x. It reports false
// when no kernel handles t.
func (k Kernels) DequantizeRow(t int, x []byte, y []float32) bool {
	need("DequantizeRow x", len(x), RowBytes(t, len(y)))
	if len(y) == 0 {
		return true
	}
	isa, n := C.int(k.isa), C.int64_t(len(y))
	if C.ember_dequantize_row_kq(isa, C.int(t), bytep(x), f32p(y), n) == 0 {
		return true
	}
	return C.ember_dequantize_row_lg(isa, C.int(t), bytep(x), f32p(y), n) == 0
}

// RMSNorm: y = x / sqrt(mean(x^2) + eps) * w over one row.
func (k Kernels) RMSNorm(x, w, y []float32, eps float32) {
	n := len(x)
	need("RMSNorm w", len(w), n)
	need("RMSNorm y", len(y), n)
	if n > 0 {
		C.ember_rmsnorm(C.int(k.isa), f32p(x), f32p(w), f32p(y), C.int64_t(n), C.float(eps))
	}
}

// Add: y = a + b.
func (k Kernels) Add(a, b, y []float32) {
	need("Add b", len(b), len(a))
	need("Add y", len(y), len(a))
	if len(a) > 0 {
		C.ember_add(C.int(k.isa), f32p(a), f32p(b), f32p(y), C.int64_t(len(a)))
	}
}

// Mul: y = a * b.
func (k Kernels) Mul(a, b, y []float32) {
	need("Mul b", len(b), len(a))
	need("Mul y", len(y), len(a))
	if len(a) > 0 {
		C.ember_mul(C.int(k.isa), f32p(a), f32p(b), f32p(y), C.int64_t(len(a)))
	}
}

// SwiGLU: y = silu(g) * u.
func (k Kernels) SwiGLU(g, u, y []float32) {
	need("SwiGLU u", len(u), len(g))
	need("SwiGLU y", len(y), len(g))
	if len(g) > 0 {
		C.ember_swiglu(C.int(k.isa), f32p(g), f32p(u), f32p(y), C.int64_t(len(g)))
	}
}

// F32ToF16 converts x to IEEE halves in y.
func (k Kernels) F32ToF16(x []float32, y []uint16) {
	need("F32ToF16 y", len(y), len(x))
	if len(x) > 0 {
		C.ember_f32_to_f16(C.int(k.isa), f32p(x), u16p(y), C.int64_t(len(x)))
	}
}

// F16ToF32 converts IEEE halves x to y.
func (k Kernels) F16ToF32(x []uint16, y []float32) {
	need("F16ToF32 y", len(y), len(x))
	if len(x) > 0 {
		C.ember_f16_to_f32(C.int(k.isa), u16p(x), f32p(y), C.int64_t(len(x)))
	}
}

// RoPE rotates, in place, the first dims dims of each head_dim-wide head of x by the
// angles in cs (cos, sin pairs, dims/2 of them); neox pairs i with i+dims/2.
func (k Kernels) RoPE(x []float32, headDim, dims int, neox bool, cs []float32) {
	if headDim <= 0 || dims > headDim || dims%2 != 0 || len(x)%headDim != 0 {
		panic(fmt.Sprintf("kernels/cpu: RoPE dims %d of heads of %d over %d values", dims, headDim, len(x)))
	}
	need("RoPE cs", len(cs), dims)
	nx := 0
	if neox {
		nx = 1
	}
	if len(x) > 0 && dims > 0 {
		C.ember_rope(C.int(k.isa), f32p(x), C.int64_t(len(x)/headDim), C.int64_t(headDim), C.int64_t(dims), C.int(nx), f32p(cs))
	}
}

// Attention computes one query head over nkv cached positions (see kernels.h): k and v
// hold f16 rows kStride and vStride elements apart; position t is row rows[t], or row t
// when rows is nil (a contiguous cache); scratch holds at least nkv+headDim floats.
func (k Kernels) Attention(q []float32, kc []uint16, kStride int, vc []uint16, vStride int, rows []int32, nkv, headDim, vHeadDim int, scale float32, out, scratch []float32) {
	last, rp := attnCheck("Attention", 1, rows, nkv, kStride, vStride)
	need("Attention q", len(q), headDim)
	need("Attention k", len(kc), last*kStride+headDim)
	need("Attention v", len(vc), last*vStride+vHeadDim)
	need("Attention out", len(out), vHeadDim)
	need("Attention scratch", len(scratch), nkv+headDim)
	C.ember_attention(C.int(k.isa), f32p(q), u16p(kc), C.int64_t(kStride), u16p(vc), C.int64_t(vStride), rp,
		C.int64_t(nkv), C.int64_t(headDim), C.int64_t(vHeadDim), C.float(scale), f32p(out), f32p(scratch))
}
