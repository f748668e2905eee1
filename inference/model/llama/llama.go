// Package llama is the Llama architecture (Llama 2 and 3, TinyLlama, Mistral, the
// DeepSeek-R1 Llama distills): pre-norm decoder blocks of grouped-query attention with
// adjacent-pair RoPE (GGUF stores Q and K permuted for it) and a SwiGLU feed-forward,
// RMSNorm everywhere. Llama 3.1's frequency scaling comes from a rope_freqs tensor or
// from rope.scaling metadata.
package llama

import (
	"ember/inference/backend"
	"ember/inference/gguf"
	"ember/inference/model"
)

// Arch is the GGUF general.architecture this package loads.
const Arch = "llama"

// Load binds a llama GGUF file's weights on be. f must stay open until the model is closed.
func Load(f *gguf.File, be backend.Backend) (*model.Decoder, error) {
	p, err := model.ReadParams(f, Arch)
	if err != nil {
		return nil, err
	}
	return LoadOn(f, model.Uniform(be, p.NLayer))
}

// LoadOn is Load with each layer on its backend in pl (len(pl) must be the file's
// block count).
func LoadOn(f *gguf.File, pl model.Placement) (*model.Decoder, error) {
	p, err := model.ReadParams(f, Arch)
	if err != nil {
		return nil, err
	}
	p.RoPE.Style = backend.RoPENormal
	return model.LoadDecoderOn(f, pl, p, false)
}
