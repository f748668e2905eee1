// Package archs maps a GGUF file's general.architecture to the package that loads it.
package archs

import (
	"errors"
	"fmt"
	"sort"

	"ember/inference/backend"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/model/deepseek2"
	"ember/inference/model/llama"
	"ember/inference/model/qwen2"
)

type loader func(*gguf.File, model.Placement) (model.Model, error)

// decoder adapts a loader of the shared llama-style Decoder.
func decoder(load func(*gguf.File, model.Placement) (*model.Decoder, error)) loader {
	return func(f *gguf.File, pl model.Placement) (model.Model, error) {
		m, err := load(f, pl)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

// whole adapts the loader of an architecture whose layers must all be on one backend.
func whole(arch string, load func(*gguf.File, backend.Backend) (model.Model, error)) loader {
	return func(f *gguf.File, pl model.Placement) (model.Model, error) {
		if !pl.Uniform() {
			return nil, fmt.Errorf("model: %s: %w", arch, ErrNoSplit)
		}
		return load(f, pl[0])
	}
}

// ErrNoSplit is returned for an architecture whose layers cannot be split over
// backends.
var ErrNoSplit = errors.New("layers cannot be split over backends")

func loaders() map[string]loader {
	return map[string]loader{
		llama.Arch:     decoder(llama.LoadOn),
		qwen2.Arch:     decoder(qwen2.LoadOn),
		deepseek2.Arch: whole(deepseek2.Arch, deepseek2.Load),
	}
}

// Supported lists the architectures Load accepts.
func Supported() []string {
	var out []string
	for a := range loaders() {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Layers is the number of layers (blocks) of the model in f.
func Layers(f *gguf.File) (int, error) {
	p, err := model.ReadParams(f, f.Architecture())
	if err != nil {
		return 0, err
	}
	return p.NLayer, nil
}

// Load binds the model in f on be. f must stay open until the model is closed.
func Load(f *gguf.File, be backend.Backend) (model.Model, error) {
	if _, ok := loaders()[f.Architecture()]; !ok {
		return nil, unsupported(f.Architecture())
	}
	n, err := Layers(f)
	if err != nil {
		return nil, err
	}
	return LoadOn(f, model.Uniform(be, n))
}

// LoadOn binds the model in f with each layer on its backend in pl (len(pl) is Layers).
// Architectures that cannot split their layers refuse a placement of several backends
// with ErrNoSplit.
func LoadOn(f *gguf.File, pl model.Placement) (model.Model, error) {
	arch := f.Architecture()
	load, ok := loaders()[arch]
	if !ok {
		return nil, unsupported(arch)
	}
	return load(f, pl)
}

func unsupported(arch string) error {
	return fmt.Errorf("model: architecture %q is not supported (supported: %v)", arch, Supported())
}
