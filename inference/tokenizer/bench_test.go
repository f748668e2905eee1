package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ember/inference/gguf"
)

// englishText is about 1 MB of English: the stories260K golden text and the llama.cpp
// test inputs, repeated.
func englishText(tb testing.TB) string {
	tb.Helper()
	story, err := os.ReadFile(filepath.Join(testdata, "models/stories260K.greedy200.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.Write(story)
		sb.WriteString("\n\nThe quick brown fox jumps over the lazy dog, doesn't it? It's 3:45 p.m. on 2024-06-01.\n")
	}
	return sb.String()
}

func benchEncode(b *testing.B, tok *Tokenizer) {
	text := englishText(b)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		n = len(tok.Encode(text, EncodeOptions{AddSpecial: true}))
	}
	b.ReportMetric(float64(n)/float64(len(text)), "tokens/byte")
}

func BenchmarkEncodeGPT2(b *testing.B) {
	benchEncode(b, openTokenizer(b, "vocab/ggml-vocab-gpt-2.gguf"))
}

func BenchmarkEncodeLlama3(b *testing.B) { benchEncode(b, hfTokenizer(b, llama3Vocab())) }

func BenchmarkEncodeQwen2(b *testing.B) { benchEncode(b, hfTokenizer(b, qwen2Vocab())) }

func BenchmarkEncodeDeepseekLLM(b *testing.B) {
	benchEncode(b, openTokenizer(b, "vocab/ggml-vocab-deepseek-llm.gguf"))
}

func BenchmarkEncodeSPM(b *testing.B) {
	benchEncode(b, openTokenizer(b, "vocab/ggml-vocab-llama-spm.gguf"))
}

func BenchmarkDecode(b *testing.B) {
	tok := hfTokenizer(b, llama3Vocab())
	text := englishText(b)
	ids := tok.Encode(text, EncodeOptions{})
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tok.Decode(ids)
	}
}

func BenchmarkLoadQwen2(b *testing.B) {
	data := qwen2Vocab().buildGGUF(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := gguf.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := FromGGUF(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeDeepseekCoder(b *testing.B) {
	benchEncode(b, openTokenizer(b, "vocab/ggml-vocab-deepseek-coder.gguf"))
}

// BenchmarkPretokenize measures each pre-tokenizer alone (UTF-8 decoding and splitting).
func BenchmarkPretokenize(b *testing.B) {
	text := englishText(b)
	for _, p := range []*pretokenizer{preGPT2, preLlama3, preQwen2, preDefault, preStarcoder,
		preDeepseekLLM, preDeepseekCoder, preDeepseekV3} {
		b.Run(p.name, func(b *testing.B) {
			var cps []rune
			var segs, tmp []int
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				cps, _ = toCpts(text, cps)
				segs, tmp = p.split(cps, segs, tmp)
			}
			b.ReportMetric(float64(len(segs))/float64(len(text)), "words/byte")
		})
	}
}
