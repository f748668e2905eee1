// Package archs maps a GGUF file's general.architecture to the package that loads it.
package archs

import (
	"fmt"
	"sort"

	"ember/inference/backend"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/model/deepseek2"
	"ember/inference/model/llama"
	"ember/inference/model/qwen2"
)

type loader func(*gguf.File, backend.Backend) (model.Model, error)

// decoder adapts a loader of the shared llama-style Decoder.
func decoder(load func(*gguf.File, backend.Backend) (*model.Decoder, error)) loader {
	return func(f *gguf.File, be backend.Backend) (model.Model, error) {
		m, err := load(f, be)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

func loaders() map[string]loader {
	return map[string]loader{
		llama.Arch:     decoder(llama.Load),
		qwen2.Arch:     decoder(qwen2.Load),
		deepseek2.Arch: deepseek2.Load,
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

// Load binds the model in f on be. f must stay open until the model is closed.
func Load(f *gguf.File, be backend.Backend) (model.Model, error) {
	arch := f.Architecture()
	load, ok := loaders()[arch]
	if !ok {
		return nil, fmt.Errorf("model: architecture %q is not supported (supported: %v)", arch, Supported())
	}
	m, err := load(f, be)
	if err != nil {
		return nil, err
	}
	return m, nil
}
