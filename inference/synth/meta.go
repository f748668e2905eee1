package synth

import (
	"fmt"

	"ember/inference/gguf"
)

// llama.cpp's token types (LLAMA_TOKEN_TYPE_*).
const (
	tokNormal  = 1
	tokUnknown = 2
	tokControl = 3
	tokByte    = 6
)

// Vocab builds the SentencePiece-style ("llama") filler vocabulary of n tokens (n >=
// 260): <unk> <s> </s>, the 256 byte tokens <0xXX>, then pieces: "▁", each printable
// ASCII character alone and after "▁", then letter strings of length 2, 3, ... (frequent
// letters first), each after "▁" and alone. Scores are 0 for the specials and bytes and
// -i for the i-th piece, so earlier pieces merge first. Text tokenizes; it decodes to
// nonsense.
func Vocab(n int) (tokens []string, scores []float32, types []int32, err error) {
	if n < 3+256+1 {
		return nil, nil, nil, fmt.Errorf("synth: vocab size %d, want >= 260", n)
	}
	tokens = make([]string, 0, n)
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	types = make([]int32, 0, n)
	types = append(types, tokUnknown, tokControl, tokControl)
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, tokByte)
	}
	seen := make(map[string]bool, n)
	for _, t := range tokens {
		seen[t] = true
	}
	full := func() bool { return len(tokens) >= n }
	add := func(p string) {
		if !seen[p] && !full() {
			seen[p] = true
			tokens = append(tokens, p)
			types = append(types, tokNormal)
		}
	}
	const sp = "\u2581" // SentencePiece's word-boundary marker
	add(sp)
	for c := byte(33); c < 127; c++ {
		add(string(c))
		add(sp + string(c))
	}
	const letters = "etaoinshrdlucmfwypvbgkjqxz"
	for length := 2; !full(); length++ {
		idx := make([]int, length)
		w := make([]byte, length)
		for !full() {
			for i, j := range idx {
				w[i] = letters[j]
			}
			add(sp + string(w))
			add(string(w))
			j := length - 1
			for ; j >= 0; j-- {
				if idx[j]++; idx[j] < len(letters) {
					break
				}
				idx[j] = 0
			}
			if j < 0 {
				break
			}
		}
	}
	scores = make([]float32, n)
	for i := 3 + 256; i < n; i++ {
		scores[i] = -float32(i - (3 + 256))
	}
	return tokens, scores, types, nil
}

// metadata returns the KVs, in the script's order.
func metadata(p *Params, fileType uint32, alignment uint32) ([]gguf.KV, error) {
	var kvs []gguf.KV
	var err error
	add := func(key string, v any) {
		if err != nil {
			return
		}
		var val gguf.Value
		if val, err = gguf.ValueOf(v); err == nil {
			kvs = append(kvs, gguf.KV{Key: key, Value: val})
		}
	}
	u := func(x int) uint32 { return uint32(x) }
	f := func(x float64) float32 { return float32(x) }
	a := p.Arch
	add("general.architecture", a)
	add("general.name", p.Name)
	add("general.description", p.Desc)
	add("general.file_type", fileType)
	add("general.quantization_version", uint32(2))
	add("general.alignment", alignment)
	add(a+".vocab_size", u(p.NVocab))
	add(a+".context_length", u(p.Ctx))
	add(a+".embedding_length", u(p.NEmbd))
	add(a+".block_count", u(p.NLayer))
	add(a+".feed_forward_length", u(p.NFF))
	add(a+".attention.head_count", u(p.NHead))
	if a == "deepseek2" {
		headKV, kLen, vLen := 1, p.KVLoraRank+p.QKRope, p.KVLoraRank // MLA as MQA over the latent
		if p.MLALayout == "kv_b" {
			headKV, kLen, vLen = p.NHead, p.QKNope+p.QKRope, p.VHeadDim // the older MHA view
		}
		add(a+".attention.head_count_kv", u(headKV))
		add(a+".attention.key_length", u(kLen))
		add(a+".attention.value_length", u(vLen))
		if p.MLALayout != "kv_b" {
			add(a+".attention.key_length_mla", u(p.QKNope+p.QKRope))
			add(a+".attention.value_length_mla", u(p.VHeadDim))
		}
		add(a+".rope.dimension_count", u(p.QKRope))
		add(a+".rope.freq_base", f(p.RopeTheta))
		add(a+".attention.layer_norm_rms_epsilon", f(p.RMSEps))
		add(a+".leading_dense_block_count", u(p.NLayerDense))
		// llama.cpp requires this key unless n_layer is 26/27; 0 = no q compression
		add(a+".attention.q_lora_rank", u(p.QLoraRank))
		add(a+".attention.kv_lora_rank", u(p.KVLoraRank))
		add(a+".expert_feed_forward_length", u(p.NFFExp))
		add(a+".expert_count", u(p.NExpert))
		add(a+".expert_used_count", u(p.NExpertUsed))
		add(a+".expert_shared_count", u(p.NExpertShared))
		add(a+".expert_weights_scale", f(p.ExpertWeightsScale))
		add(a+".expert_gating_func", gatingFuncs[p.ExpertGating])
		if p.NExpert > 0 { // llama.cpp asserts expert_group_count == 0 without experts
			add(a+".expert_group_count", u(p.ExpertGroups))
			add(a+".expert_group_used_count", u(p.ExpertGroupsUsed))
		}
		if p.ExpertWeightsNorm {
			add(a+".expert_weights_norm", true)
		}
		if p.RopeScaling == "yarn" {
			add(a+".rope.scaling.type", "yarn")
			add(a+".rope.scaling.factor", f(p.YarnFactor))
			add(a+".rope.scaling.original_context_length", u(p.YarnOrigCtx))
			// 0.1 * mscale_all_dim: the converter's convention, undone by llama.cpp on load
			add(a+".rope.scaling.yarn_log_multiplier", f(0.1*p.YarnMScaleAllDim))
			add(a+".rope.scaling.yarn_beta_fast", float32(32))
			add(a+".rope.scaling.yarn_beta_slow", float32(1))
		}
	} else {
		add(a+".attention.head_count_kv", u(p.NHeadKV))
		add(a+".attention.key_length", u(p.HeadDim))
		add(a+".attention.value_length", u(p.HeadDim))
		add(a+".rope.dimension_count", u(p.HeadDim))
		add(a+".rope.freq_base", f(p.RopeTheta))
		add(a+".attention.layer_norm_rms_epsilon", f(p.RMSEps))
	}
	tokens, scores, types, verr := Vocab(p.NVocab)
	if verr != nil {
		return nil, verr
	}
	if p.FIM {
		for i, t := range []string{"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"} {
			j := len(tokens) - 3 + i
			tokens[j], types[j] = t, tokControl
		}
	}
	add("tokenizer.ggml.model", "llama")
	add("tokenizer.ggml.tokens", tokens)
	add("tokenizer.ggml.scores", scores)
	add("tokenizer.ggml.token_type", types)
	add("tokenizer.ggml.bos_token_id", uint32(1))
	add("tokenizer.ggml.eos_token_id", uint32(2))
	add("tokenizer.ggml.unknown_token_id", uint32(0))
	add("tokenizer.ggml.add_bos_token", true)
	add("tokenizer.ggml.add_eos_token", false)
	if p.ChatTemplate != "" {
		add("tokenizer.chat_template", p.ChatTemplate)
	}
	if err != nil {
		return nil, fmt.Errorf("synth: metadata: %w", err)
	}
	return kvs, nil
}
