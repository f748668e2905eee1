// Package cuda holds Ember's CUDA kernels: the .cu sources and the PTX that nvcc made of
// them on a GPU machine (build/gen-ptx.sh), embedded here so that the CUDA backend can
// load them through the driver at run time with no CUDA toolkit on the user's machine.
//
// Every .ptx file starts with a line "// ember-sources-sha256: HEX", the SourceHash of
// the .cu file and the headers (*.cuh) it was generated from; a test fails when they
// drift apart.
package cuda

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
)

//go:embed *.ptx
var ptx embed.FS

// Modules are the kernel modules, one .cu (and .ptx) file each.
var Modules = []string{"ops", "moe", "matmul", "ffn", "mmq", "attention", "attention_split", "attention_tc", "attention_dec", "attention_long", "attention_short", "sample", "sample_row", "dequant", "mvs", "quant", "mmf", "mmg"}

// HashPrefix starts the first line of every generated .ptx file.
const HashPrefix = "// ember-sources-sha256: "

// PTX returns the PTX text of module name, NUL-terminated as cuModuleLoadData wants it.
// $EMBER_CUDA_PTX_DIR (DirEnv) overrides the embedded copies.
func PTX(name string) ([]byte, error) {
	if b, ok, err := fromDir(name); ok {
		return b, err
	}
	b, err := ptx.ReadFile(name + ".ptx")
	if err != nil {
		return nil, fmt.Errorf("kernels/cuda: module %q: %w", name, err)
	}
	return append(b[:len(b):len(b)], 0), nil
}

// SourceHash is the hex sha256 of a module's .cu source followed by every header of the
// directory in name order (common.cuh, mmq.cuh, mv1.cuh, ...), as build/gen-ptx.sh
// computes it with `cat X.cu *.cuh | sha256sum`.
func SourceHash(cu []byte, headers ...[]byte) string {
	h := sha256.New()
	h.Write(cu)
	for _, x := range headers {
		h.Write(x)
	}
	return hex.EncodeToString(h.Sum(nil))
}
