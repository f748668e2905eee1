package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// roundTripVocabs are the tokenizers the round-trip property and the fuzz target use.
var roundTripVocabs = []string{
	stories,
	"vocab/ggml-vocab-llama-spm.gguf",
	"vocab/ggml-vocab-phi-3.gguf",
	"vocab/ggml-vocab-gpt-2.gguf",
	"vocab/ggml-vocab-deepseek-llm.gguf",
	"vocab/ggml-vocab-deepseek-coder.gguf",
	"hf:llama3.2",
	"hf:qwen2",
}

// roundTripTokenizer opens one of roundTripVocabs.
func roundTripTokenizer(tb testing.TB, name string) *Tokenizer {
	switch name {
	case "hf:llama3.2":
		return hfTokenizer(tb, llama3Vocab())
	case "hf:qwen2":
		return hfTokenizer(tb, qwen2Vocab())
	}
	return openTokenizer(tb, name)
}

// roundTrips reports whether Decode(Encode(s)) must equal s: s is valid UTF-8, holds no
// U+2581 (SentencePiece's space mark, which decodes to a space), and encoding produced no
// control or unknown token (plain text can spell one, e.g. "<s>", and those render as
// nothing).
func roundTrips(tok *Tokenizer, s string, ids []int32) bool {
	if !utf8.ValidString(s) || (tok.kind == kindSPM && strings.ContainsRune(s, '\u2581')) {
		return false
	}
	for _, id := range ids {
		if tok.attrs[id]&(attrControl|attrUnknown) != 0 {
			return false
		}
	}
	return true
}

// checkRoundTrip encodes s every way and checks the invariants; it never panics on any
// input and reports failures through t.
func checkRoundTrip(t *testing.T, tok *Tokenizer, name, s string) {
	for _, opt := range []EncodeOptions{{}, {AddSpecial: true}, {ParseSpecial: true}, {AddSpecial: true, ParseSpecial: true}} {
		ids := tok.Encode(s, opt)
		for _, id := range ids {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("%s: Encode(%q, %+v) gave id %d", name, s, opt, id)
			}
		}
		got := tok.Decode(ids)
		if !utf8.ValidString(got) {
			t.Fatalf("%s: Decode gave invalid UTF-8 %q", name, got)
		}
		// Streaming one id at a time gives the same text.
		d := tok.NewDecoder()
		var sb strings.Builder
		sb.WriteString(d.Add(tok.BOS()))
		for _, id := range ids {
			sb.WriteString(d.Add(id))
		}
		sb.WriteString(d.Flush())
		if sb.String() != got {
			t.Fatalf("%s: stream %q != Decode %q for %q", name, sb.String(), got, s)
		}
		if !opt.ParseSpecial && roundTrips(tok, s, ids) && got != s {
			t.Fatalf("%s: Decode(Encode(%q, %+v)) = %q (ids %v)", name, s, opt, got, ids)
		}
	}
}

// randomText draws text from a mix of scripts, whitespace, digits and punctuation.
func randomText(r *rand.Rand) string {
	alphabets := []string{
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
		"0123456789",
		" \t\n\r  ",
		".,;:!?'\"()[]{}<>-_=+*/\\|&%$#@^`~",
		"äöüßéèçñÄÖÜ",
		"нещоБългарски",
		"我想在工作天～",
		"កាន់តែពិសេស",
		"🦙🚀😁✅\u200d🌫️",
		"\u00a0\u2003\u3000\u0085",
	}
	n := r.IntN(40)
	var sb strings.Builder
	for i := 0; i < n; i++ {
		a := []rune(alphabets[r.IntN(len(alphabets))])
		for k := 1 + r.IntN(4); k > 0; k-- {
			sb.WriteRune(a[r.IntN(len(a))])
		}
	}
	return sb.String()
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", " ", "  ", "\n", "Hello world", " Hello", "Hello ", "a  b", "\t\tx\n\n"}
	for i := 0; i < 300; i++ {
		texts = append(texts, randomText(r))
	}
	for _, name := range roundTripVocabs {
		tok := roundTripTokenizer(t, name)
		for _, s := range texts {
			checkRoundTrip(t, tok, name, s)
		}
	}
}

func FuzzEncodeDecode(f *testing.F) {
	for _, s := range []string{"", " ", "Hello world", " this is 🦙.cpp", "\xff\xfe", "a</s>b<s>", "<|end|>\n x",
		"\n \n\n \t \t\t", "ied 4 ½ months", "Äpfel", "3333333", "I've 'RE", "\xf0\x9f\xa6"} {
		f.Add(s)
	}
	toks := make([]*Tokenizer, len(roundTripVocabs))
	for i, name := range roundTripVocabs {
		toks[i] = roundTripTokenizer(f, name)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, tok := range toks {
			checkRoundTrip(t, tok, roundTripVocabs[i], s)
		}
	})
}
