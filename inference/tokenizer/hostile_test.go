package tokenizer

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSpecialIndexPresent: the automaton finds exactly the special tokens that occur in
// a text, for overlapping tokens over a small alphabet (prefixes, suffixes, repeats).
func TestSpecialIndexPresent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	word := func(n int) string {
		b := make([]byte, 1+r.IntN(n))
		for i := range b {
			b[i] = "abc"[r.IntN(3)]
		}
		return string(b)
	}
	for round := 0; round < 2000; round++ {
		texts := make([]string, 1+r.IntN(8))
		specials := make([]int32, len(texts))
		for i := range texts {
			texts[i], specials[i] = word(5), int32(i)
		}
		x := newSpecialIndex(texts, specials)
		for k := 0; k < 10; k++ {
			text := word(30)
			seen := make([]bool, len(specials))
			found := x.present(text, seen)
			any := false
			for i, s := range texts {
				want := strings.Contains(text, s)
				any = any || want
				if seen[i] != want {
					t.Fatalf("tokens %q, text %q: token %q seen %v, want %v", texts, text, s, seen[i], want)
				}
			}
			if found != any {
				t.Fatalf("tokens %q, text %q: found %v, want %v", texts, text, found, any)
			}
		}
	}
}

// TestLongSpecialTokenEncode: a vocabulary with a long special token (as a hostile file
// could have) costs time linear in the text: a megabyte of spaces against a user-defined
// token of 20000 spaces and an "x" took minutes when each byte walked the token's trie.
func TestLongSpecialTokenEncode(t *testing.T) {
	long := strings.Repeat(" ", 20000) + "x"
	tok, err := load(mapMeta{"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2",
		"tokenizer.ggml.tokens": []string{"a", "\u0120", long, "\u0120\u0120"}, "tokenizer.ggml.merges": []string{"\u0120 \u0120"},
		"tokenizer.ggml.token_type": []int32{1, 1, 4, 1}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ids := tok.Encode(strings.Repeat(" ", 1<<20), EncodeOptions{})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("encoding 1 MiB of spaces took %v", d)
	}
	if len(ids) != 1<<19 {
		t.Errorf("%d ids, want %d", len(ids), 1<<19)
	}
	if got := tok.Encode("a"+long+"a", EncodeOptions{}); !equalIDs(got, []int32{0, 2, 0}) {
		t.Errorf("the long token in text: %v", got)
	}
}

// TestUndecodableTokenPiece: a byte-level BPE token whose code points stand for no byte
// renders as llama.cpp renders it while short, and in memory linear in its length when
// long (llama.cpp repeats the whole text after each such code point).
func TestUndecodableTokenPiece(t *testing.T) {
	long := strings.Repeat("中", 20000)
	m := mapMeta{"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2",
		"tokenizer.ggml.tokens": []string{"a", "b", "a中", long}, "tokenizer.ggml.merges": []string{"a b"}}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	tok, err := load(m)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 64<<20 {
		t.Errorf("loading allocated %d MiB", a>>20)
	}
	if got, want := tok.Piece(2), "a[UNK_BYTE_0xe4b8ada中]"; got != want {
		t.Errorf("Piece = %q, want %q", got, want)
	}
	if got, want := len(tok.Piece(3)), 20000*len("[UNK_BYTE_0xe4b8ad]"); got != want {
		t.Errorf("long Piece: %d bytes, want %d", got, want)
	}
}
