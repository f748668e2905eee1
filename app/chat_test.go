package app

import (
	"context"
	"testing"

	"ember/inference/gguf"
	"ember/inference/prompt"
	"ember/inference/tokenizer"
)

func TestChatBaseModel(t *testing.T) {
	l, err := OpenModel("", BackendOptions{Name: "ref"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c := NewChat(l)
	toks, thinking, err := c.Tokens(context.Background(), []prompt.Message{{Role: "user", Content: " Once upon a time "}})
	if err != nil || thinking {
		t.Fatal(err, thinking)
	}
	want := l.Tokenizer.Encode("Once upon a time", tokenizer.EncodeOptions{AddSpecial: true})
	if len(toks) != len(want) || toks[0] != 1 {
		t.Fatalf("tokens %v, want %v", toks, want)
	}
}

// TestChatTemplate renders through the file's own template (phi-3's vocab file has one)
// and checks special tokens are parsed and BOS is not doubled.
func TestChatTemplate(t *testing.T) {
	f, err := gguf.Open("../testdata/vocab/ggml-vocab-phi-3.gguf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	c := NewChat(&Loaded{File: f, Tokenizer: tok})
	if c.base {
		t.Fatal("a file with a chat template was taken for a base model")
	}
	toks, _, err := c.Tokens(context.Background(), []prompt.Message{{Role: "user", Content: "Hi"}})
	if err != nil {
		t.Fatal(err)
	}
	// The template writes "{{ bos_token }}" itself: exactly one BOS, first.
	rendered := "<s><|user|>\nHi<|end|>\n<|assistant|>\n"
	want := tok.Encode(rendered, tokenizer.EncodeOptions{ParseSpecial: true})
	if len(toks) != len(want) || toks[0] != tok.BOS() {
		t.Fatalf("tokens %v, want %v", toks, want)
	}
	for i := range want {
		if toks[i] != want[i] {
			t.Fatalf("tokens %v, want %v", toks, want)
		}
	}
	userID := tok.Encode("<|user|>", tokenizer.EncodeOptions{ParseSpecial: true})
	found := false
	for _, id := range toks {
		if len(userID) == 1 && id == userID[0] {
			found = true
		}
	}
	if !found {
		t.Errorf("<|user|> was not parsed as its special token: %v", toks)
	}
	bos := 0
	for _, id := range toks {
		if id == tok.BOS() {
			bos++
		}
	}
	if bos > 1 {
		t.Errorf("%d BOS tokens", bos)
	}
}
