// Package convert rewrites a GGUF model with its weights quantized to another type mix,
// choosing each tensor's type with llama.cpp's rules (llama_tensor_get_type in
// src/llama-quant.cpp, without an importance matrix), so that our Q4_K_M of a model is
// the file llama.cpp's llama-quantize would write.
//
// It also holds the pieces the synthetic-model writer shares: the type rules (Plan) and a
// streaming GGUF writer that never holds the tensor data in memory (StreamWriter).
package convert

import (
	"fmt"
	"strings"

	"ember/inference/quant"
)

// FileType is one of llama.cpp's llama_ftype mixes: the value written to
// general.file_type and the default type of the quantizable weights.
type FileType struct {
	Name    string     // as llama-quantize spells it: "Q4_K_M"
	ID      uint32     // llama_ftype (LLAMA_FTYPE_MOSTLY_Q4_K_M = 15)
	Default quant.Type // the type most weights get (llama_ftype_get_default_type)
}

// The llama_ftype values of include/llama.h.
const (
	FtypeAllF32  = 0
	FtypeF16     = 1
	FtypeQ4_0    = 2
	FtypeQ4_1    = 3
	FtypeQ8_0    = 7
	FtypeQ5_0    = 8
	FtypeQ5_1    = 9
	FtypeQ2_K    = 10
	FtypeQ3_K_S  = 11
	FtypeQ3_K_M  = 12
	FtypeQ3_K_L  = 13
	FtypeQ4_K_S  = 14
	FtypeQ4_K_M  = 15
	FtypeQ5_K_S  = 16
	FtypeQ5_K_M  = 17
	FtypeQ6_K    = 18
	FtypeBF16    = 32
	QuantVersion = 2 // GGML_QNT_VERSION, written to general.quantization_version
)

// FileTypes lists the mixes we can write, in llama_ftype order. The IQ mixes and Q2_K_S
// are missing: llama.cpp requires an importance matrix for them, or we have no quantizer.
var FileTypes = []FileType{
	{"F32", FtypeAllF32, quant.F32},
	{"F16", FtypeF16, quant.F16},
	{"Q4_0", FtypeQ4_0, quant.Q4_0},
	{"Q4_1", FtypeQ4_1, quant.Q4_1},
	{"Q8_0", FtypeQ8_0, quant.Q8_0},
	{"Q5_0", FtypeQ5_0, quant.Q5_0},
	{"Q5_1", FtypeQ5_1, quant.Q5_1},
	{"Q2_K", FtypeQ2_K, quant.Q2_K},
	{"Q3_K_S", FtypeQ3_K_S, quant.Q3_K},
	{"Q3_K_M", FtypeQ3_K_M, quant.Q3_K},
	{"Q3_K_L", FtypeQ3_K_L, quant.Q3_K},
	{"Q4_K_S", FtypeQ4_K_S, quant.Q4_K},
	{"Q4_K_M", FtypeQ4_K_M, quant.Q4_K},
	{"Q5_K_S", FtypeQ5_K_S, quant.Q5_K},
	{"Q5_K_M", FtypeQ5_K_M, quant.Q5_K},
	{"Q6_K", FtypeQ6_K, quant.Q6_K},
	{"BF16", FtypeBF16, quant.BF16},
}

// aliases are llama-quantize's short names for the _M mixes.
var aliases = map[string]string{"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}

// ParseFileType finds a mix by name, in any case ("q4_k_m"); Q3_K, Q4_K and Q5_K mean
// the _M mixes, as for llama-quantize.
func ParseFileType(name string) (FileType, error) {
	up := strings.ToUpper(strings.TrimSpace(name))
	if a, ok := aliases[up]; ok {
		up = a
	}
	for _, ft := range FileTypes {
		if ft.Name == up {
			return ft, nil
		}
	}
	names := make([]string, len(FileTypes))
	for i, ft := range FileTypes {
		names[i] = ft.Name
	}
	return FileType{}, fmt.Errorf("convert: unknown type %q, want one of %s", name, strings.Join(names, ", "))
}

// FileTypeByID finds a mix by its llama_ftype value.
func FileTypeByID(id uint32) (FileType, bool) {
	for _, ft := range FileTypes {
		if ft.ID == id {
			return ft, true
		}
	}
	return FileType{}, false
}

// isQuantized is ggml_is_quantized: a block type rather than a plain float or integer.
func isQuantized(t quant.Type) bool { return t.BlockSize() > 1 }
