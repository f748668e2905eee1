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
	"io/fs"
	"strings"
)

//go:embed *.ptx
var ptx embed.FS

// Modules are the kernel modules in name order, one .cu (and .ptx) file each: every
// embedded PTX file is one, so a new kernel file needs no list of its own
// (TestModulesAreTheSources checks that each has its .cu and each .cu its module).
var Modules = modules()

func modules() []string {
	es, err := fs.ReadDir(ptx, ".")
	if err != nil {
		panic(fmt.Sprintf("kernels/cuda: the embedded PTX: %v", err)) // embedded at build time: cannot happen
	}
	var ms []string
	for _, e := range es {
		if m, ok := strings.CutSuffix(e.Name(), ".ptx"); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

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
