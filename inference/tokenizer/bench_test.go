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
