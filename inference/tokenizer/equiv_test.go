package tokenizer

import (
	"math/rand/v2"
	"testing"
)

// TestSPMChunksMatchOneQueue checks that merging SentencePiece chunks separately
// (spmSplit) gives the tokens of one queue over the whole text, as llama.cpp does.
func TestSPMChunksMatchOneQueue(t *testing.T) {
	for _, name := range []string{"vocab/ggml-vocab-llama-spm.gguf", stories} {
		tok := openTokenizer(t, name)
		if !tok.spmSplit {
			t.Fatalf("%s: expected spmSplit", name)
		}
		whole := *tok
		whole.spmSplit = false
		r := rand.New(rand.NewPCG(3, 4))
		texts := []string{englishText(t)[:20000], " \u2581 a\u2581\u2581b \u2581", "\xe2 \xe2\x96 x"}
		for i := 0; i < 200; i++ {
			texts = append(texts, randomText(r)+"\u2581"+randomText(r))
		}
		for _, s := range texts {
			a := tok.Encode(s, EncodeOptions{})
			b := whole.Encode(s, EncodeOptions{})
			if !equalIDs(a, b) {
				t.Fatalf("%s: %q: chunked %v, whole %v", name, s, a, b)
			}
		}
	}
}

// TestBPEShortMatchesHeap checks the scanning merge against the priority queue.
func TestBPEShortMatchesHeap(t *testing.T) {
	tok := openTokenizer(t, "vocab/ggml-vocab-gpt-2.gguf")
	r := rand.New(rand.NewPCG(5, 6))
	words := []string{"aaaaaaaaaaaa", "hello", "  ", "\n\n\n", "internationalization", "🦙🦙", "ÄpfelÄpfel"}
	for i := 0; i < 500; i++ {
		words = append(words, randomText(r))
	}
	s := tok.newBPEState()
	defer tok.freeBPEState(s)
	for _, w := range words {
		if w == "" {
			continue
		}
		var heap, short []int32
		for _, useHeap := range []bool{true, false} {
			s.syms, s.ids = s.syms[:0], s.ids[:0]
			for i := 0; i < len(w); i++ {
				s.syms = append(s.syms, symbol{start: int32(i), n: 1, prev: int32(i) - 1, next: int32(i) + 1})
				s.ids = append(s.ids, tok.bpe.byteID[w[i]])
			}
			s.syms[len(w)-1].next = -1
			if useHeap {
				s.mergeHeap(w)
			} else {
				s.mergeShort(w)
			}
			var out []int32
			for i := int32(0); i != -1; i = s.syms[i].next {
				sym := s.syms[i]
				out = s.emit(out, w[sym.start:sym.start+sym.n], s.ids[i])
			}
			if useHeap {
				heap = out
			} else {
				short = out
			}
		}
		if !equalIDs(heap, short) {
			t.Fatalf("%q: heap %v, scan %v", w, heap, short)
		}
	}
}
