package synth

import (
	"fmt"
	"strings"

	"ember/inference/convert"
	"ember/inference/quant"
)

// FileTypes are the -ftype values: every mix of convert.FileTypes (by its lower-case
// name), plus "q4_k", the script's all-Q4_K mix (output Q6_K, file type 14).
func FileTypes() []string {
	names := []string{"q4_k"}
	for _, ft := range convert.FileTypes {
		names = append(names, strings.ToLower(ft.Name))
	}
	return names
}

// fill says what a tensor's data is.
type fill int

const (
	fillRandom fill = iota
	fillOnes        // F32 1.0: norm weights
)

// tensor is one tensor of the plan: its name, dims (ggml order), type and data.
type tensor struct {
	convert.TensorDesc
	fill fill
}

// plan lists the model's tensors in the script's order, with the types llama.cpp's
// quantizer would give them for mix ft (convert.Plan), as if quantizing the F32 model.
// q4_k is the script's own mix: every weight Q4_K except the output (or the tied
// embedding), which gets llama.cpp's output rule, with llama.cpp's fallbacks.
func plan(p *Params, ftName string) (ts []tensor, fileType uint32, err error) {
	if p.Arch == "deepseek2" {
		ts = deepseek2Tensors(p)
	} else {
		ts = llamaTensors(p)
	}
	descs := make([]convert.TensorDesc, len(ts))
	for i := range ts {
		descs[i] = ts[i].TensorDesc
	}
	m := convert.Model{Arch: p.Arch, NLayer: p.NLayer, NHead: p.NHead, NHeadKV: p.NHeadKV, NExpert: p.NExpert}
	if p.Arch == "deepseek2" {
		m.NHeadKV = 1
		if p.MLALayout == "kv_b" {
			m.NHeadKV = p.NHead
		}
	}
	var types []quant.Type
	if strings.EqualFold(ftName, "q4_k") {
		fileType = convert.FtypeQ4_K_S
		types, err = pureQ4K(descs)
	} else {
		var ft convert.FileType
		if ft, err = convert.ParseFileType(ftName); err != nil {
			return nil, 0, fmt.Errorf("synth: type %q: want one of %v", ftName, FileTypes())
		}
		fileType = ft.ID
		types, _, err = convert.Plan(m, ft, descs)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("synth: %w", err)
	}
	for i := range ts {
		ts[i].Type = types[i]
		if !canFill(types[i]) {
			return nil, 0, fmt.Errorf("synth: tensor %q: cannot make random %v blocks", ts[i].Name, types[i])
		}
	}
	return ts, fileType, nil
}

// pureQ4K is the script's q4_k mix.
func pureQ4K(descs []convert.TensorDesc) ([]quant.Type, error) {
	tied := true
	for _, d := range descs {
		if d.Name == "output.weight" {
			tied = false
		}
	}
	types := make([]quant.Type, len(descs))
	for i, d := range descs {
		t := d.Type
		if convert.Quantizable(d.Name, d.Dims) {
			t = quant.Q4_K
			if d.Name == "output.weight" || (tied && d.Name == "token_embd.weight") {
				t = convert.OutputType(quant.Q4_K, d.Dims[0], "")
			}
			var err error
			if t, err = convert.Fallback(t, d.Dims[0]); err != nil {
				return nil, fmt.Errorf("convert: tensor %q %v: %w", d.Name, d.Dims, err)
			}
		}
		types[i] = t
	}
	return types, nil
}

// builder collects tensors; every weight starts as F32 (the model before quantization).
type builder []tensor

func (b *builder) w(name string, dims ...int) {
	d := make([]uint64, len(dims))
	for i, x := range dims {
		d[i] = uint64(x)
	}
	*b = append(*b, tensor{TensorDesc: convert.TensorDesc{Name: name, Dims: d, Type: quant.F32}})
}

func (b *builder) norm(name string, n int) {
	b.w(name, n)
	(*b)[len(*b)-1].fill = fillOnes
}

func llamaTensors(p *Params) []tensor {
	e, v, ff := p.NEmbd, p.NVocab, p.NFF
	qDim, kvDim := p.NHead*p.HeadDim, p.NHeadKV*p.HeadDim
	var b builder
	b.w("token_embd.weight", e, v)
	for i := range p.NLayer {
		pre := fmt.Sprintf("blk.%d.", i)
		b.norm(pre+"attn_norm.weight", e)
		b.w(pre+"attn_q.weight", e, qDim)
		b.w(pre+"attn_k.weight", e, kvDim)
		b.w(pre+"attn_v.weight", e, kvDim)
		if p.Arch == "qwen2" {
			b.w(pre+"attn_q.bias", qDim)
			b.w(pre+"attn_k.bias", kvDim)
			b.w(pre+"attn_v.bias", kvDim)
		}
		b.w(pre+"attn_output.weight", qDim, e)
		b.norm(pre+"ffn_norm.weight", e)
		b.w(pre+"ffn_gate.weight", e, ff)
		b.w(pre+"ffn_up.weight", e, ff)
		b.w(pre+"ffn_down.weight", ff, e)
	}
	b.norm("output_norm.weight", e)
	if !p.Tied {
		b.w("output.weight", e, v)
	}
	return b
}

// deepseek2Tensors lists DeepSeek-V2's tensors as llama.cpp's current converter writes
// them. 3-D expert tensors {ne0, ne1, n_expert} are n_expert matrices one after another.
func deepseek2Tensors(p *Params) []tensor {
	e, v, ff, h := p.NEmbd, p.NVocab, p.NFF, p.NHead
	nope, rope, vd, kvr := p.QKNope, p.QKRope, p.VHeadDim, p.KVLoraRank
	var b builder
	b.w("token_embd.weight", e, v)
	for i := range p.NLayer {
		pre := fmt.Sprintf("blk.%d.", i)
		b.norm(pre+"attn_norm.weight", e)
		if p.QLoraRank > 0 {
			b.w(pre+"attn_q_a.weight", e, p.QLoraRank)
			b.norm(pre+"attn_q_a_norm.weight", p.QLoraRank)
			b.w(pre+"attn_q_b.weight", p.QLoraRank, h*(nope+rope))
		} else {
			b.w(pre+"attn_q.weight", e, h*(nope+rope))
		}
		// output rows: kv_lora_rank latent values, then the shared rope key
		b.w(pre+"attn_kv_a_mqa.weight", e, kvr+rope)
		b.norm(pre+"attn_kv_a_norm.weight", kvr)
		if p.MLALayout == "kv_b" {
			// per head: qk_nope rows of k_nope, then v_head_dim rows of v
			b.w(pre+"attn_kv_b.weight", kvr, h*(nope+vd))
		} else {
			b.w(pre+"attn_k_b.weight", nope, kvr, h)
			b.w(pre+"attn_v_b.weight", kvr, vd, h)
		}
		b.w(pre+"attn_output.weight", h*vd, e)
		b.norm(pre+"ffn_norm.weight", e)
		if i < p.NLayerDense {
			b.w(pre+"ffn_gate.weight", e, ff)
			b.w(pre+"ffn_up.weight", e, ff)
			b.w(pre+"ffn_down.weight", ff, e)
			continue
		}
		// the router: F32 in converted files; llama.cpp's quantizer never touches it
		b.w(pre+"ffn_gate_inp.weight", e, p.NExpert)
		if p.ExpProbsB {
			b.w(pre+"exp_probs_b.bias", p.NExpert)
		}
		fe, fs := p.NFFExp, p.NFFExp*p.NExpertShared
		b.w(pre+"ffn_gate_exps.weight", e, fe, p.NExpert)
		b.w(pre+"ffn_up_exps.weight", e, fe, p.NExpert)
		b.w(pre+"ffn_down_exps.weight", fe, e, p.NExpert)
		b.w(pre+"ffn_gate_shexp.weight", e, fs)
		b.w(pre+"ffn_up_shexp.weight", e, fs)
		b.w(pre+"ffn_down_shexp.weight", fs, e)
	}
	b.norm("output_norm.weight", e)
	if !p.Tied {
		b.w("output.weight", e, v)
	}
	return b
}
