package cuda

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The compatibility PTX: the modules compiled for compute capability 8.0
// (build/gen-ptx-compat.sh), which the driver compiles for the A100 and the RTX 30 and
// 40 series (8.6, 8.9) as well. Its kernels are the committed PTX's minus those that need
// Hopper (EM_SM90 in common.cuh), without programmatic dependent launch. Stored
// gzip-compressed (~2.7 MB against ~18 MB): only those GPUs read it.
//
//go:embed sm80/*.ptx.gz sm80/hopper-only.txt
var compat embed.FS

// CompatDir is the compatibility PTX's directory, here and under $EMBER_CUDA_PTX_DIR.
const CompatDir = "sm80"

// HopperOnly are the modules without compatibility PTX (sm80/hopper-only.txt): every
// kernel of theirs needs Hopper.
var HopperOnly = hopperOnly()

// CompatModules are the modules of the compatibility PTX in name order: Modules less
// HopperOnly.
var CompatModules = compatModules()

func hopperOnly() []string {
	b, err := compat.ReadFile(CompatDir + "/hopper-only.txt")
	if err != nil {
		panic(fmt.Sprintf("kernels/cuda: %v", err)) // embedded at build time: cannot happen
	}
	var ms []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			ms = append(ms, l)
		}
	}
	return ms
}

func compatModules() []string {
	var ms []string
	for _, m := range Modules {
		if !slices.Contains(HopperOnly, m) {
			ms = append(ms, m)
		}
	}
	return ms
}

// CompatPTX returns the compatibility PTX of module name, NUL-terminated;
// $EMBER_CUDA_PTX_DIR/sm80/name.ptx (uncompressed) overrides it.
func CompatPTX(name string) ([]byte, error) {
	if dir := os.Getenv(DirEnv); dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, CompatDir, name+".ptx"))
		if err != nil {
			return nil, fmt.Errorf("kernels/cuda: compatibility module %q from $%s: %w", name, DirEnv, err)
		}
		return append(b, 0), nil
	}
	b, err := gunzip(compat, CompatDir+"/"+name+".ptx.gz")
	if err != nil {
		return nil, fmt.Errorf("kernels/cuda: compatibility module %q: %w", name, err)
	}
	return append(b, 0), nil
}

// gunzip is the decompressed content of the gzip file path in fsys.
func gunzip(fsys embed.FS, path string) ([]byte, error) {
	z, err := fsys.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}
