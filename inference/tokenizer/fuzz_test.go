package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzLoadEncode builds a vocabulary from fuzzed metadata (token texts, types, scores,
// merges, special ids; either model kind and any pre-tokenizer name) and encodes and
// decodes a fuzzed text with it: loading gives a Tokenizer or an error, and encoding
// never panics, gives ids in range and decodes to valid UTF-8.
func FuzzLoadEncode(f *testing.F) {
	f.Add(false, "gpt-2", "a\nb\nab\n<|end|>\n\u0120", []byte{1, 1, 1, 3, 1}, "a b\nab b\n\u0120 a", uint64(3), "ab <|end|>ba")
	f.Add(true, "", "<unk>\n<s>\n</s>\n\u2581a\nb\n<0x41>\n\u2581", []byte{2, 3, 3, 1, 1, 6, 1}, "", uint64(1), " a b\xff A")
	f.Add(false, "llama3", "\n\n\n", []byte{4, 4, 0}, "\n", uint64(99), "\n\n x")
	f.Add(false, "qwen2", "x\nxx\nxxx\n中", []byte{1, 4, 1, 1}, "x x\nxx x\nx xx", uint64(0), "xxxxxxxxxx中中 1234")
	f.Add(false, "deepseek-v3", "a\na", []byte{5, 6}, "a a", uint64(1), "aaaa")
	f.Fuzz(func(t *testing.T, spm bool, pre, tokens string, types []byte, merges string, bos uint64, text string) {
		if len(tokens) > 4096 || len(merges) > 4096 || len(text) > 4096 {
			return
		}
		texts := strings.Split(tokens, "\n")
		m := mapMeta{"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": pre, "tokenizer.ggml.tokens": texts,
			"tokenizer.ggml.merges": strings.Split(merges, "\n"), "tokenizer.ggml.bos_token_id": bos,
			"tokenizer.ggml.eos_token_id": bos / 2, "tokenizer.ggml.add_eos_token": true}
		if spm {
			m["tokenizer.ggml.model"] = "llama"
			scores := make([]float32, len(texts))
			for i := range scores {
				scores[i] = float32(len(texts[i]) % 5)
			}
			m["tokenizer.ggml.scores"] = scores
		}
		if len(types) > 0 {
			tt := make([]int32, len(texts))
			for i := range tt {
				tt[i] = int32(types[i%len(types)] % 8)
			}
			m["tokenizer.ggml.token_type"] = tt
		}
		tok, err := load(m)
		if err != nil {
			return
		}
		for _, opt := range []EncodeOptions{{}, {AddSpecial: true, ParseSpecial: true}} {
			ids := tok.Encode(text, opt)
			for _, id := range ids {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("id %d out of range", id)
				}
			}
			if s := tok.Decode(ids); !utf8.ValidString(s) {
				t.Fatalf("Decode gave invalid UTF-8 %q", s)
			}
		}
	})
}
