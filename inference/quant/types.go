// Package quant holds the ggml tensor block formats: their sizes, and plain scalar Go
// code to dequantize, quantize and take dot products. It is the numeric oracle every fast
// kernel is tested against, and it follows llama.cpp's reference (ggml-quants.c) semantics.
package quant

import (
	"fmt"
	"math/bits"
)

// Type is a ggml tensor type id, exactly as stored in GGUF tensor infos.
type Type uint32

// The ggml type ids. Gaps are ids that ggml removed; they stay unknown.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// QK_K is the super-block size of the K-quants.
const QK_K = 256

type traits struct {
	name      string
	blockSize int // elements per block
	typeSize  int // bytes per block
}

var typeTraits = map[Type]traits{
	F32:     {"F32", 1, 4},
	F16:     {"F16", 1, 2},
	BF16:    {"BF16", 1, 2},
	F64:     {"F64", 1, 8},
	I8:      {"I8", 1, 1},
	I16:     {"I16", 1, 2},
	I32:     {"I32", 1, 4},
	I64:     {"I64", 1, 8},
	Q4_0:    {"Q4_0", 32, 18},
	Q4_1:    {"Q4_1", 32, 20},
	Q5_0:    {"Q5_0", 32, 22},
	Q5_1:    {"Q5_1", 32, 24},
	Q8_0:    {"Q8_0", 32, 34},
	Q8_1:    {"Q8_1", 32, 36},
	Q2_K:    {"Q2_K", QK_K, 84},
	Q3_K:    {"Q3_K", QK_K, 110},
	Q4_K:    {"Q4_K", QK_K, 144},
	Q5_K:    {"Q5_K", QK_K, 176},
	Q6_K:    {"Q6_K", QK_K, 210},
	Q8_K:    {"Q8_K", QK_K, 292},
	IQ2_XXS: {"IQ2_XXS", QK_K, 66},
	IQ2_XS:  {"IQ2_XS", QK_K, 74},
	IQ3_XXS: {"IQ3_XXS", QK_K, 98},
	IQ1_S:   {"IQ1_S", QK_K, 50},
	IQ4_NL:  {"IQ4_NL", 32, 18},
	IQ3_S:   {"IQ3_S", QK_K, 110},
	IQ2_S:   {"IQ2_S", QK_K, 82},
	IQ4_XS:  {"IQ4_XS", QK_K, 136},
	IQ1_M:   {"IQ1_M", QK_K, 56},
	TQ1_0:   {"TQ1_0", QK_K, 54},
	TQ2_0:   {"TQ2_0", QK_K, 66},
	MXFP4:   {"MXFP4", 32, 17},
}

// Known reports whether t is a ggml type id whose block layout we know (a file may hold
// it), whether or not we can compute with it.
func (t Type) Known() bool { _, ok := typeTraits[t]; return ok }

// String is the ggml name of the type ("Q4_K"), or "type(N)" for an unknown id.
func (t Type) String() string {
	if tr, ok := typeTraits[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements in one block (1 for plain types); 0 if unknown.
func (t Type) BlockSize() int { return typeTraits[t].blockSize }

// TypeSize is the number of bytes in one block; 0 if unknown.
func (t Type) TypeSize() int { return typeTraits[t].typeSize }

// ParseType maps a ggml type name ("q4_k", "Q8_0", "f16") to its Type.
func ParseType(name string) (Type, error) {
	for t, tr := range typeTraits {
		if equalFold(tr.name, name) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("quant: unknown type name %q", name)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// RowBytes is the byte size of n elements of type t, with checked arithmetic. n must be a
// multiple of the block size.
func RowBytes(t Type, n uint64) (uint64, error) {
	tr, ok := typeTraits[t]
	if !ok {
		return 0, fmt.Errorf("quant: unknown type %v", t)
	}
	if n%uint64(tr.blockSize) != 0 {
		return 0, fmt.Errorf("quant: %d elements is not a multiple of %v's block size %d", n, t, tr.blockSize)
	}
	hi, lo := bits.Mul64(n/uint64(tr.blockSize), uint64(tr.typeSize))
	if hi != 0 {
		return 0, fmt.Errorf("quant: %d elements of %v overflow a byte count", n, t)
	}
	return lo, nil
}

// VecDotType is the format an activation row is rounded to before a dot product with a
// row of weights of type t, as in llama.cpp: Q8_0 for Q4_0/Q5_0/Q8_0, Q8_1 for Q4_1/Q5_1,
// Q8_K for the K-quants, F16 for F16, BF16 for BF16 and F32 for F32. ok is false for
// types we cannot multiply.
func (t Type) VecDotType() (Type, bool) {
	switch t {
	case F32:
		return F32, true
	case F16:
		return F16, true
	case BF16:
		return BF16, true
	case Q4_0, Q5_0, Q8_0:
		return Q8_0, true
	case Q4_1, Q5_1:
		return Q8_1, true
	case Q2_K, Q3_K, Q4_K, Q5_K, Q6_K:
		return Q8_K, true
	}
	return 0, false
}
