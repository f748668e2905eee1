// Package app is Ember's composition root: it opens model files, picks the backend,
// builds the engine and wires it to the HTTP server and the UI, and shuts them down in
// order.
package app

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"ember/assets"
	"ember/inference/backend"
	"ember/inference/backend/cpu"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/model/archs"
	"ember/inference/tokenizer"
)

// Loaded is an open model file with its weights bound on a backend and its tokenizer.
type Loaded struct {
	Name      string // file name without extension, or the bundled model's name
	Path      string // "" for the bundled model
	File      *gguf.File
	Backend   backend.Backend // the model's output backend (Model.Backend())
	Model     model.Model
	Tokenizer *tokenizer.Tokenizer
	// Placement says where the layers are ("cuda 20/32 layers, cpu 12/32 layers").
	Placement string
	// GPUNote says why "auto" runs the model on the CPU although a GPU is present (the
	// GPU's compute capability, the driver's age, a weight type it lacks); "" otherwise.
	GPUNote string
	extra   backend.Backend // the CPU backend of a partly offloaded model
}

// BackendNames lists the backends NewBackend knows, "auto" first.
func BackendNames() []string { return []string{"auto", "cpu", "cuda", "ref"} }

// BackendOptions choose and configure the compute backend.
type BackendOptions struct {
	Name    string // "auto" (or ""), "cpu", "cuda" or "ref"
	Threads int    // CPU threads; 0 means one per core
	// GPULayers, when positive, is how many of the last layers go to the GPU (the rest
	// run on the CPU); 0 means as many as fit in its memory, all of them when the model
	// fits.
	GPULayers int
	// Stage, when not nil, is told what a load is doing ("starting the GPU", "loading
	// the weights, 40%"), for a window or a terminal to show while it waits, and "" when
	// the load has ended.
	Stage func(stage string)
}

// stage tells bo.Stage what a load is doing.
func (bo BackendOptions) stage(s string) {
	if bo.Stage != nil {
		bo.Stage(s)
	}
}

// weightStages has bo.Stage told, while f's weights load, the share of f's tensor bytes
// handed to the backend so far, in whole percent; the returned func stops it.
func weightStages(f *gguf.File, bo BackendOptions) (stop func()) {
	if bo.Stage == nil {
		return func() {}
	}
	total := f.TensorBytes()
	var done, shown atomic.Uint64
	shown.Store(math.MaxUint64)
	f.OnTensorData(func(t *gguf.TensorInfo) {
		n := done.Add(t.Size)
		pct := uint64(100)
		if total > 0 && n < total {
			pct = n * 100 / total
		}
		if old := shown.Swap(pct); old != pct {
			bo.stage(fmt.Sprintf("loading the weights, %d%%", pct))
		}
	})
	return func() { f.OnTensorData(nil) }
}

// NewBackend makes the chosen backend; "auto" picks the fastest one present: CUDA when
// the driver loads and sees a GPU, else the CPU.
func NewBackend(opt BackendOptions) (backend.Backend, error) {
	b, _, err := newBackend(opt, gpuBackend(opt))
	return b, err
}

// gpuBackend is newBackend's GPU constructor for bo: it starts the CUDA backend when a
// driver sees a GPU (telling bo.Stage so); ok is false when none is present (err then
// says nothing worth telling).
func gpuBackend(bo BackendOptions) func() (backend.Backend, bool, error) {
	return func() (backend.Backend, bool, error) {
		if !cuda.Available() {
			return nil, false, nil
		}
		c, err := startCUDA(bo, true)
		return c, true, err
	}
}

// startCUDA makes the CUDA backend; present says a driver sees a GPU (bo.Stage is told).
func startCUDA(bo BackendOptions, present bool) (backend.Backend, error) {
	if present {
		bo.stage("starting the GPU")
	}
	c, err := cuda.New(cuda.Options{})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// gpuNote is Loaded.GPUNote for the GPU's refusal err.
func gpuNote(err error) string {
	return "the GPU is not used: " + strings.TrimPrefix(err.Error(), "cuda: ")
}

// newBackend is NewBackend with the GPU's constructor given; note says why "auto" took
// the CPU though a GPU is present.
func newBackend(opt BackendOptions, gpu func() (backend.Backend, bool, error)) (backend.Backend, string, error) {
	switch opt.Name {
	case "", "auto":
		g, present, err := gpu()
		if err == nil && present {
			return g, "", nil
		}
		note := ""
		if present {
			note = gpuNote(err)
		}
		c, err := cpu.New(cpu.Options{Threads: opt.Threads})
		if err != nil {
			return nil, "", err
		}
		return c, note, nil
	case "cuda":
		c, err := startCUDA(opt, cuda.Available())
		if err != nil {
			return nil, "", err
		}
		return c, "", nil
	case "cpu":
		c, err := cpu.New(cpu.Options{Threads: opt.Threads})
		if err != nil {
			return nil, "", err
		}
		return c, "", nil
	case "ref":
		return ref.New(), "", nil
	}
	return nil, "", fmt.Errorf("unknown backend %q (have %s)", opt.Name, strings.Join(BackendNames(), ", "))
}

// OpenModel opens the GGUF file at path, or the bundled default model when path is
// empty, and loads it on the named backend.
func OpenModel(path string, bo BackendOptions) (*Loaded, error) {
	var (
		f    *gguf.File
		err  error
		name = assets.DefaultModelName
	)
	if path == "" {
		f, err = gguf.Parse(assets.DefaultModel())
	} else {
		f, err = gguf.Open(path)
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if err != nil {
		return nil, openError(path, err)
	}
	l, err := load(f, bo)
	if err != nil {
		f.Close()
		if path != "" {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	l.Name, l.Path = name, path
	return l, nil
}

// openError is err from opening the model file at path, a missing file said plainly.
func openError(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("model file %s does not exist", path)
	}
	return err
}

func load(f *gguf.File, bo BackendOptions) (*Loaded, error) {
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	defer bo.stage("") // the load has ended
	be, note, err := newBackend(bo, gpuBackend(bo))
	if err != nil {
		return nil, err
	}
	stop := weightStages(f, bo)
	m, extra, err := loadPlaced(f, be, bo)
	stop()
	if err == nil && m.Backend() == extra { // nothing went to the GPU
		be.Close()
		be, extra = extra, nil
	}
	if err != nil && errors.Is(err, backend.ErrUnsupported) && be.Name() == "cuda" && (bo.Name == "" || bo.Name == "auto") {
		// "auto" chose the GPU, which lacks a weight type of this file: use the CPU.
		note = gpuNote(err)
		be.Close()
		if be, err = cpu.New(cpu.Options{Threads: bo.Threads}); err != nil {
			return nil, err
		}
		m, err = archs.Load(f, be)
	}
	if err == nil && tok.VocabSize() > m.Params().NVocab {
		m.Close()
		err = fmt.Errorf("model: tokenizer has %d tokens but the embedding only %d rows", tok.VocabSize(), m.Params().NVocab)
	}
	if err != nil {
		be.Close()
		if extra != nil {
			extra.Close()
		}
		return nil, err
	}
	return &Loaded{File: f, Backend: be, Model: m, Tokenizer: tok, Placement: describePlacement(m), GPUNote: note, extra: extra}, nil
}

// Close frees the model, the backend and the file, in that order.
func (l *Loaded) Close() error {
	err := l.Model.Close()
	err = errors.Join(err, l.Backend.Close())
	if l.extra != nil {
		err = errors.Join(err, l.extra.Close())
	}
	return errors.Join(err, l.File.Close())
}
