package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"ember/inference/backend"
	"ember/inference/backend/cpu"
	"ember/inference/backend/cuda"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/model/archs"
)

// Partial offload: when a model's weights and KV cache do not fit in the GPU's memory,
// its last layers (and the output projection) go to the GPU and the first ones stay on
// the CPU, as llama.cpp's -ngl does; BackendOptions.GPULayers overrides the count.

const (
	// offloadKVTokens is the KV cache the automatic split leaves room for on the GPU
	// (the engine's default: a 4,096-position context for two sequences).
	offloadKVTokens = 8192
	// offloadReserve is GPU memory kept for the CUDA context, activations, scratch (with
	// cuBLASLt's f16 weight chunk, up to 256 MiB, and 32 MiB workspace; without room for
	// them prompts run on Ember's own kernels) and recorded graphs, besides a tenth of
	// the device.
	offloadReserve = 1 << 30
)

// gpuLayers is how many of the model's n layers go to a GPU of mem bytes: want when it
// is positive (at most n), else as many as fit.
func gpuLayers(f *gguf.File, n, want int, mem uint64) int {
	if want > 0 {
		return min(want, n)
	}
	p, err := model.ReadParams(f, f.Architecture())
	if err != nil {
		return n // the load reports the error
	}
	budget := int64(mem) - int64(mem/10) - offloadReserve
	layer := make([]int64, n)
	var rest int64 // output norm and projection (the embedding itself stays on the CPU)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if l, ok := layerOf(t.Name); ok && l < n {
			layer[l] += int64(t.Size)
			continue
		}
		if strings.HasPrefix(t.Name, "output") {
			rest += int64(t.Size)
		}
	}
	if _, ok := f.Tensor("output.weight"); !ok { // tied: the last part loads the embedding again
		if t, ok := f.Tensor("token_embd.weight"); ok {
			rest += int64(t.Size)
		}
	}
	kv := int64(offloadKVTokens) * int64(p.NKVHead*(p.HeadDim+p.VHeadDim)) * 2
	used := rest
	k := 0
	for i := n - 1; i >= 0; i-- {
		if used+layer[i]+kv > budget {
			break
		}
		used += layer[i] + kv
		k++
	}
	return k
}

// layerOf parses the block index of a "blk.N." tensor name.
func layerOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, false
	}
	l, err := strconv.Atoi(num)
	return l, err == nil && l >= 0
}

// loadPlaced binds f's model on be, or, when be is a GPU too small for it (or
// BackendOptions.GPULayers says so), its last layers on be and the others on a new CPU
// backend, returned as extra. An architecture that cannot split its layers then runs
// wholly on that CPU backend.
func loadPlaced(f *gguf.File, be backend.Backend, bo BackendOptions) (m model.Model, extra backend.Backend, err error) {
	n, err := archs.Layers(f)
	if err != nil || be.Name() != "cuda" {
		m, err = archs.Load(f, be)
		return m, nil, err
	}
	ngl := gpuLayers(f, n, bo.GPULayers, gpuMemory(be))
	if ngl >= n {
		m, err = archs.Load(f, be)
		return m, nil, err
	}
	return loadOffload(f, be, n, ngl, bo)
}

// loadOffload binds f's model with its last ngl layers on the GPU backend gpu and the
// others on a new CPU backend, which it returns with the model. An architecture that
// cannot split its layers runs wholly on the CPU.
func loadOffload(f *gguf.File, gpu backend.Backend, n, ngl int, bo BackendOptions) (model.Model, backend.Backend, error) {
	c, err := cpu.New(cpu.Options{Threads: bo.Threads})
	if err != nil {
		return nil, nil, err
	}
	m, err := archs.LoadOn(f, model.SplitLast(c, gpu, n, ngl))
	if errors.Is(err, archs.ErrNoSplit) {
		m, err = archs.LoadOn(f, model.Uniform(c, n))
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return m, c, nil
}

// NGL turns the -ngl flag (llama.cpp's: layers on the GPU, negative for as many as fit)
// into bo: 0 layers is the CPU backend.
func (bo *BackendOptions) NGL(n int) {
	switch {
	case n == 0:
		bo.Name = "cpu"
	case n > 0:
		bo.GPULayers = n
	}
}

// NGLUsage documents the -ngl flag.
const NGLUsage = "layers on the GPU, the last ones (llama.cpp's -ngl; the rest run on the CPU): -1 for as many as fit in its memory, 0 for none"

// gpuMemory is the device memory of a CUDA backend, 0 for others.
func gpuMemory(be backend.Backend) uint64 {
	if c, ok := be.(*cuda.Backend); ok {
		return c.Device().Memory
	}
	return 0
}

// describePlacement says where a model's layers are, e.g. "cuda 20/32 layers, cpu 12",
// what a GPU backend's kernels were loaded as and which library it takes large products
// to ("cuda 32/32 layers (sm_90 code) with libcublasLt.so.13"): the first start's time
// and prompt speed depend on them.
func describePlacement(m model.Model) string {
	pl := model.PlacementOf(m)
	var parts []string
	counts := pl.Layers()
	for i, be := range pl.Backends() {
		part := fmt.Sprintf("%s %d/%d layers", be.Name(), counts[i], len(pl))
		if c, ok := be.(interface{ KernelCode() string }); ok && c.KernelCode() != "" {
			part += " (" + c.KernelCode() + ")"
		}
		if c, ok := be.(interface{ CublasLibrary() string }); ok && c.CublasLibrary() != "" {
			part += " with " + filepath.Base(c.CublasLibrary())
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// BackendName names where l's model runs: its backend's name, or for a model split over
// backends the names joined by "+", the output's (the GPU's) first: "cuda+cpu".
func (l *Loaded) BackendName() string {
	bes := model.PlacementOf(l.Model).Backends()
	names := []string{l.Backend.Name()}
	for _, be := range bes {
		if be != l.Backend {
			names = append(names, be.Name())
		}
	}
	return strings.Join(names, "+")
}

// computeKey identifies how l's model computes, for keying saved KV blocks: the
// backend's name, and for a split model also how many layers each backend runs (the
// rounding differs by backend, so blocks of one split are not another's).
func (l *Loaded) computeKey() string {
	pl := model.PlacementOf(l.Model)
	if pl.Uniform() {
		return l.Backend.Name()
	}
	var parts []string
	counts := pl.Layers()
	for i, be := range pl.Backends() {
		parts = append(parts, fmt.Sprintf("%s%d", be.Name(), counts[i]))
	}
	return strings.Join(parts, "+")
}
