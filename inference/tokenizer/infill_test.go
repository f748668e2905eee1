package tokenizer

import (
	"slices"
	"testing"
)

// TestEncodeInfill: DeepSeek-Coder's vocabulary has fill-in-the-middle tokens (found by
// their text): the prompt is BOS, <｜fim▁begin｜>, the prefix, <｜fim▁hole｜>, the suffix,
// <｜fim▁end｜>, special-token text in the code staying text; Llama 2's has none.
func TestEncodeInfill(t *testing.T) {
	tk := openTokenizer(t, "vocab/ggml-vocab-deepseek-coder.gguf")
	id := func(s string) int32 {
		v, ok := tk.toID[s]
		if !ok {
			t.Fatalf("no token %q", s)
		}
		return v
	}
	prefix, suffix := "def add(a, b):\n    return ", "\n\nprint(add(1, 2)) # <｜fim▁end｜>\n"
	got, ok := tk.EncodeInfill(prefix, suffix)
	if !ok {
		t.Fatal("no fill-in-the-middle tokens found")
	}
	var want []int32
	if tk.AddBOS() {
		want = append(want, tk.BOS())
	}
	want = append(want, id("<｜fim▁begin｜>"))
	want = append(want, tk.Encode(prefix, EncodeOptions{})...)
	want = append(want, id("<｜fim▁hole｜>"))
	want = append(want, tk.Encode(suffix, EncodeOptions{})...)
	want = append(want, id("<｜fim▁end｜>"))
	if !slices.Equal(got, want) {
		t.Fatalf("infill prompt %v, want %v", got, want)
	}
	if n := slices.Index(got, id("<｜fim▁end｜>")); n != len(got)-1 {
		t.Errorf("the suffix's special-token text became the token (at %d of %d)", n, len(got))
	}
	if _, ok := openTokenizer(t, "vocab/ggml-vocab-llama-spm.gguf").EncodeInfill("a", "b"); ok {
		t.Error("Llama 2's vocabulary gave an infill prompt")
	}
}
