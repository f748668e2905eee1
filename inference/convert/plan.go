package convert

import (
	"fmt"

	"ember/inference/quant"
)

// planner is llama.cpp's quantize_state_impl: the counters its rules read while it walks
// the tensors in LlamaOrder.
type planner struct {
	m                   Model
	ft                  FileType
	tied                bool // no output.weight: token_embd doubles as the output
	nAttnV, iAttnV      int  // attn_v-like tensors: how many, and how many seen
	iFFNDown, nFFNLayer int
}

// Plan chooses the type of each tensor of ts for the mix ft, as llama.cpp's quantizer
// would for a model m (no importance matrix, no overrides). types[i] is for ts[i];
// order lists the indexes of ts in the order llama.cpp writes them (LlamaOrder), which
// is also the order the layer counters of its rules run in. An error names a tensor
// whose shape no type of the mix fits, or one outside the model's layers.
func Plan(m Model, ft FileType, ts []TensorDesc) (types []quant.Type, order []int, err error) {
	p := &planner{m: m, ft: ft, tied: true, nFFNLayer: m.NLayer}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
		c := categoryOf(t.Name)
		if c.attnVLike() {
			p.nAttnV++
		}
		if c == catOutput {
			p.tied = false
		}
	}
	order = LlamaOrder(names)
	types = make([]quant.Type, len(ts))
	for _, i := range order {
		t := &ts[i]
		if types[i], err = p.choose(t); err != nil {
			return nil, nil, fmt.Errorf("convert: tensor %q %v: %w", t.Name, t.Dims, err)
		}
	}
	return types, order, nil
}

// choose is llama_tensor_get_type for one tensor.
func (p *planner) choose(t *TensorDesc) (quant.Type, error) {
	if !Quantizable(t.Name, t.Dims) {
		return t.Type, nil
	}
	typ := p.ft.Default
	if !isQuantized(typ) {
		return typ, nil // F32, F16, BF16: every quantizable weight gets the default
	}
	typ, err := p.mix(t, typ)
	if err != nil {
		return 0, err
	}
	return Fallback(typ, t.Dims[0])
}

// OutputType is llama.cpp's type for output.weight (and for token_embd.weight when the
// embeddings are tied) in a mix whose default type is def: Q8_0 for falcon or when the
// row length ne0 is not a multiple of def's block size, else Q6_K, except that a Q8_0
// mix keeps Q8_0.
func OutputType(def quant.Type, ne0 uint64, arch string) quant.Type {
	if arch == "falcon" || ne0%uint64(def.BlockSize()) != 0 || def == quant.Q8_0 {
		return quant.Q8_0
	}
	return quant.Q6_K
}

// mix is llama_tensor_get_type_impl for the mixes of FileTypes: the per-category rules.
func (p *planner) mix(t *TensorDesc, typ quant.Type) (quant.Type, error) {
	m, ft := p.m, p.ft.ID
	falcon := m.Arch == "falcon"
	cat := categoryOf(t.Name)
	switch {
	case cat == catOutput || (p.tied && cat == catTokenEmbd):
		return OutputType(typ, t.Dims[0], m.Arch), nil
	case cat == catTokenEmbd:
		return typ, nil // only the IQ and ternary mixes change it
	case cat.attnVLike():
		switch {
		case ft == FtypeQ2_K:
			typ = quant.Q3_K
			if m.gqa() >= 4 {
				typ = quant.Q4_K
			}
		case ft == FtypeQ3_K_M:
			typ = quant.Q4_K
			if p.iAttnV < 2 {
				typ = quant.Q5_K
			}
		case ft == FtypeQ3_K_L:
			typ = quant.Q5_K
		case (ft == FtypeQ4_K_M || ft == FtypeQ5_K_M) && useMoreBits(p.iAttnV, p.nAttnV):
			typ = quant.Q6_K
		case ft == FtypeQ4_K_S && p.iAttnV < 4:
			typ = quant.Q5_K
		}
		if m.is70B() && (typ == quant.Q3_K || typ == quant.Q4_K) {
			typ = quant.Q5_K
		}
		if m.NExpert == 8 {
			typ = quant.Q8_0
		}
		p.iAttnV++
	case cat == catAttnK:
		if m.NExpert == 8 {
			typ = quant.Q8_0
		}
	case cat == catFFNDown:
		i, n := p.iFFNDown, p.nFFNLayer
		if m.NExpert > 1 {
			var ok bool
			if i, ok = layerOf(t.Name); !ok {
				return 0, fmt.Errorf("cannot tell its layer (want a blk.N. prefix)")
			}
			if i < 0 || i >= n {
				return 0, fmt.Errorf("layer %d is outside the model's %d layers", i, n)
			}
		}
		switch {
		case ft == FtypeQ2_K:
			typ = quant.Q3_K
		case ft == FtypeQ3_K_M:
			switch {
			case i < n/16:
				typ = quant.Q5_K
			case !falcon || useMoreBits(i, n):
				typ = quant.Q4_K
			default:
				typ = quant.Q3_K
			}
		case ft == FtypeQ3_K_L:
			typ = quant.Q5_K
			if falcon {
				typ = quant.Q4_K
			}
		case ft == FtypeQ4_K_M:
			if falcon {
				typ = quant.Q4_K
				if i < n/16 {
					typ = quant.Q6_K
				} else if useMoreBits(i, n) {
					typ = quant.Q5_K
				}
			} else if useMoreBits(i, n) {
				typ = quant.Q6_K
			}
		case ft == FtypeQ5_K_M && useMoreBits(i, n):
			typ = quant.Q6_K
		case ft == FtypeQ4_K_S && !falcon && i < n/8:
			typ = quant.Q5_K
		}
		p.iFFNDown++
	case cat == catAttnOutput:
		if falcon {
			if ft == FtypeQ3_K_L {
				typ = quant.Q4_K
			}
		} else if m.NExpert == 8 {
			switch ft {
			case FtypeQ2_K, FtypeQ3_K_S, FtypeQ3_K_M, FtypeQ4_K_S, FtypeQ4_K_M:
				typ = quant.Q5_K
			}
		} else {
			switch ft {
			case FtypeQ2_K:
				typ = quant.Q3_K
			case FtypeQ3_K_M:
				typ = quant.Q4_K
			case FtypeQ3_K_L:
				typ = quant.Q5_K
			}
		}
		// llama.cpp has an attn_qkv branch after these (Q4_K_M: Q5_K, Q5_K_M: Q6_K, ...),
		// but attn_qkv is attn_v-like, so the attn_v branch above always takes it first.
	}
	return typ, nil
}

// Fallback is llama.cpp's tensor_type_fallback: a row length of ne0 that is not a
// multiple of typ's block size demotes a 256-block type to a 32-block one, and that to
// F16 when it does not fit either. A 32-block type that does not fit is an error, as in
// llama.cpp ("no tensor type fallback is defined").
func Fallback(typ quant.Type, ne0 uint64) (quant.Type, error) {
	if ne0%uint64(typ.BlockSize()) == 0 {
		return typ, nil
	}
	var fb quant.Type
	switch typ {
	case quant.Q2_K, quant.Q3_K:
		fb = quant.Q4_0
	case quant.Q4_K:
		fb = quant.Q5_0
	case quant.Q5_K:
		fb = quant.Q5_1
	case quant.Q6_K:
		fb = quant.Q8_0
	default:
		return 0, fmt.Errorf("row length %d is not a multiple of %v's block size %d, and %v has no fallback type",
			ne0, typ, typ.BlockSize(), typ)
	}
	if ne0%uint64(fb.BlockSize()) != 0 {
		return quant.F16, nil
	}
	return fb, nil
}
