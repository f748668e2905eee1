package tokenizer

import "ember/inference/gguf"

// FromGGUF builds the tokenizer described by a GGUF file's tokenizer.ggml.* metadata:
// model, tokens, scores, token_type, merges, pre, the special token ids, add_bos_token,
// add_eos_token and add_space_prefix. Errors name the key at fault.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	return load(f)
}
