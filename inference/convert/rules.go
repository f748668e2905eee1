package convert

import (
	"fmt"
	"sort"
	"strings"

	"ember/inference/gguf"
	"ember/inference/quant"
)

// The type rules below restate llama.cpp's llama_tensor_get_type (src/llama-quant.cpp)
// for the mixes of FileTypes, without an importance matrix, tensor-type overrides or
// --pure. Its facts, in short:
//   - Only tensors with 2 or more dims whose name ends in "weight" are quantized, except
//     norms ("_norm.weight"), MoE routers ("ffn_gate_inp.weight") and a few small
//     tensors of other architectures (notQuantized). The rest are copied as they are.
//   - output.weight, and token_embd.weight when the model has no output.weight (tied
//     embeddings), get Q6_K, or Q8_0 in a Q8_0 file (or when the row length is not a
//     multiple of the default type's block size, or for falcon).
//   - attn_v (and attn_qkv, attn_kv_b) in the _M mixes: Q6_K where use_more_bits(i, n)
//     picks the i-th of the n attn_v tensors; Q4_K_S: Q5_K for the first 4; Q3_K_M: Q5_K
//     for the first 2, Q4_K after; Q3_K_L: Q5_K; Q2_K: Q4_K when n_head/n_head_kv >= 4
//     (GQA), else Q3_K; 70B llamas bump Q3_K/Q4_K to Q5_K; 8-expert models get Q8_0.
//   - ffn_down: layer i of n (from the tensor name when the model has experts, else
//     counted): Q4_K_M/Q5_K_M: Q6_K where use_more_bits(i, n); Q4_K_S: Q5_K for
//     i < n/8; Q3_K_M: Q5_K for i < n/16, Q4_K after; Q3_K_L: Q5_K; Q2_K: Q3_K.
//   - attn_output: Q2_K: Q3_K; Q3_K_M: Q4_K; Q3_K_L: Q5_K; 8-expert models: Q5_K in
//     the 2-4-bit K mixes. attn_k in 8-expert models: Q8_0. attn_qkv follows attn_v.
//   - Finally a row length that is not a multiple of the chosen type's block size falls
//     back: Q2_K/Q3_K -> Q4_0, Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, and to F16 when
//     that does not fit either; a 32-block type that does not fit is an error.

// useMoreBits is llama.cpp's use_more_bits: the first and last eighth of the layers and
// every third one between get the bigger type in the _M mixes.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// Model holds the hyperparameters the type rules look at.
type Model struct {
	Arch    string // general.architecture
	NLayer  int    // {arch}.block_count
	NHead   int    // {arch}.attention.head_count (of layer 0)
	NHeadKV int    // {arch}.attention.head_count_kv (of layer 0); NHead when absent
	NExpert int    // {arch}.expert_count; 0 for dense models
}

// ModelOf reads the hyperparameters the rules need from a model's metadata.
func ModelOf(f *gguf.File) (Model, error) {
	m := Model{Arch: f.Architecture()}
	if m.Arch == "" {
		return m, fmt.Errorf("convert: general.architecture: missing or not a string")
	}
	n, err := f.Uint(m.Arch + ".block_count")
	if err != nil {
		return m, fmt.Errorf("convert: %w", err)
	}
	m.NLayer = int(n)
	if m.NHead, err = firstUint(f, m.Arch+".attention.head_count", 0); err != nil {
		return m, err
	}
	if m.NHeadKV, err = firstUint(f, m.Arch+".attention.head_count_kv", m.NHead); err != nil {
		return m, err
	}
	if m.NExpert, err = firstUint(f, m.Arch+".expert_count", 0); err != nil {
		return m, err
	}
	return m, nil
}

// firstUint reads an integer key that may also be a per-layer array (then its first
// element counts, as llama.cpp's n_gqa() looks at layer 0); def when it is absent.
func firstUint(f *gguf.File, key string, def int) (int, error) {
	if !f.Has(key) {
		return def, nil
	}
	if u, err := f.Uint(key); err == nil {
		return int(u), nil
	}
	a, err := f.Uint32s(key)
	if err != nil {
		return 0, fmt.Errorf("convert: %w", err)
	}
	if len(a) == 0 {
		return def, nil
	}
	return int(a[0]), nil
}

func (m Model) gqa() int {
	if m.NHeadKV == 0 {
		return 0
	}
	return m.NHead / m.NHeadKV
}

// is70B is llama.cpp's model type LLM_TYPE_70B, the only size its rules look at.
func (m Model) is70B() bool {
	switch m.Arch {
	case "llama":
		return m.NLayer == 80 && m.NHead != m.NHeadKV
	case "qwen2", "olmo", "deci":
		return m.NLayer == 80
	case "jais2":
		return m.NLayer == 68
	}
	return false
}

// TensorDesc is what the rules see of a tensor.
type TensorDesc struct {
	Name string
	Dims []uint64   // ggml order: Dims[0] is the row length
	Type quant.Type // the type it has now
}

type category int

const (
	catOther category = iota
	catTokenEmbd
	catAttnQ
	catAttnV
	catAttnK
	catAttnQKV
	catAttnKVB
	catAttnOutput
	catFFNUp
	catFFNGate
	catFFNDown
	catOutput
)

// categoryOf sorts a tensor name into llama.cpp's broad categories (tensor_get_category:
// substring tests, in this order).
func categoryOf(name string) category {
	switch {
	case name == "output.weight":
		return catOutput
	case name == "token_embd.weight" || name == "per_layer_token_embd.weight":
		return catTokenEmbd
	}
	for _, c := range []struct {
		sub string
		cat category
	}{
		{"attn_qkv.weight", catAttnQKV}, {"attn_kv_b.weight", catAttnKVB},
		{"attn_v.weight", catAttnV}, {"attn_k.weight", catAttnK}, {"attn_q.weight", catAttnQ},
		{"attn_output.weight", catAttnOutput}, {"ffn_up", catFFNUp}, {"ffn_gate", catFFNGate},
		{"ffn_down", catFFNDown},
	} {
		if strings.Contains(name, c.sub) {
			return c.cat
		}
	}
	return catOther
}

func (c category) attnVLike() bool { return c == catAttnV || c == catAttnQKV || c == catAttnKVB }

// notQuantized are the name fragments of llama.cpp's tensor_allows_quantization that
// keep a weight in its type.
var notQuantized = []string{
	"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
	"per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
	"indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight",
	"time_mix_w1.weight", "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight",
	"time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight",
	"time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight",
	"time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight",
	".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd",
	".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
}

// nDims is ggml_n_dims: the number of dims up to the last one above 1 (at least 1).
func nDims(dims []uint64) int {
	n := 1
	for i, d := range dims {
		if d > 1 {
			n = i + 1
		}
	}
	return n
}

// Quantizable reports whether llama.cpp's quantizer may change a tensor's type.
func Quantizable(name string, dims []uint64) bool {
	if nDims(dims) < 2 || !strings.HasSuffix(name, "weight") {
		return false
	}
	if name == "position_embd.weight" || name == "token_types.weight" {
		return false
	}
	for _, s := range notQuantized {
		if strings.Contains(name, s) {
			return false
		}
	}
	return true
}

// layerOf parses "blk.N." the way llama.cpp's sscanf(name, "blk.%d.", &il) does.
func layerOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1, false
	}
	i, neg := 0, false
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		neg, rest = rest[0] == '-', rest[1:]
	}
	n := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		n = n*10 + int(rest[i]-'0')
		i++
		if n > 1<<30 {
			return -1, false
		}
	}
	if i == 0 {
		return -1, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// LlamaOrder returns the indexes of names in the order llama.cpp's model loader keeps
// its weights (and so writes a quantized file): by layer number ("blk.N.", tensors
// outside the blocks first), then by name.
func LlamaOrder(names []string) []int {
	type key struct {
		layer int
		name  string
	}
	keys := make([]key, len(names))
	order := make([]int, len(names))
	for i, n := range names {
		l, ok := layerOf(n)
		if !ok {
			l = -1
		}
		keys[i], order[i] = key{l, n}, i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ka, kb := keys[order[a]], keys[order[b]]
		if ka.layer != kb.layer {
			return ka.layer < kb.layer
		}
		return ka.name < kb.name
	})
	return order
}
