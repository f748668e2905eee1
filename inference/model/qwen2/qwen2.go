// Package qwen2 is the Qwen2 architecture (Qwen1.5, Qwen2, Qwen2.5 and the
// DeepSeek-R1 Qwen distills): the Llama block with biases on the q, k and v projections
// and NeoX-style RoPE (dim i paired with i + d/2), usually with a large rope base.
package qwen2

import (
	"ember/inference/backend"
	"ember/inference/gguf"
	"ember/inference/model"
)

// Arch is the GGUF general.architecture this package loads.
const Arch = "qwen2"

// Load binds a qwen2 GGUF file's weights on be. f must stay open until the model is closed.
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
	p.RoPE.Style = backend.RoPENeoX
	return model.LoadDecoderOn(f, pl, p, true)
}
