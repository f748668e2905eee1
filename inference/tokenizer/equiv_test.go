package tokenizer

import (
	"fmt"
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

// refPartition is tokenizer_st_partition without the presence filter.
func refPartition(t *Tokenizer, text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{0, len(text), noToken}}
	for _, id := range t.specials {
		a := t.attrs[id]
		if !parseSpecial && a&(attrControl|attrUnknown) != 0 {
			continue
		}
		tok := t.texts[id]
		var next []fragment
		for _, f := range frags {
			if f.tok != noToken {
				next = append(next, f)
				continue
			}
			start, end := f.start, f.end
			for start < end {
				i := indexIn(text, start, end, tok)
				if i < 0 {
					break
				}
				left := i
				for a&attrLStrip != 0 && left > start && isCSpace(text[left-1]) {
					left--
				}
				if left > start {
					next = append(next, fragment{start, left, noToken})
				}
				next = append(next, fragment{i, i + len(tok), id})
				start = i + len(tok)
				for a&attrRStrip != 0 && start < end && isCSpace(text[start]) {
					start++
				}
			}
			if start < end {
				next = append(next, fragment{start, end, noToken})
			}
		}
		frags = next
	}
	return frags
}

func TestPartitionFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, name := range []string{"vocab/ggml-vocab-phi-3.gguf", "vocab/ggml-vocab-deepseek-coder.gguf"} {
		tok := openTokenizer(t, name)
		for i := 0; i < 300; i++ {
			var sb []byte
			for k := r.IntN(8); k >= 0; k-- {
				if r.IntN(2) == 0 {
					sb = append(sb, tok.texts[tok.specials[r.IntN(len(tok.specials))]]...)
				} else {
					sb = append(sb, randomText(r)...)
				}
			}
			s := string(sb)
			for _, ps := range []bool{false, true} {
				got, want := tok.partition(s, ps), refPartition(tok, s, ps)
				if len(got) != len(want) {
					t.Fatalf("%s %q: %v vs %v", name, s, got, want)
				}
				for j := range got {
					if got[j] != want[j] {
						t.Fatalf("%s %q: %v vs %v", name, s, got, want)
					}
				}
			}
		}
	}
}

// TestConcurrentEncode runs Encode and Decode from several goroutines on one Tokenizer
// (run with -race).
func TestConcurrentEncode(t *testing.T) {
	tok := openTokenizer(t, "vocab/ggml-vocab-gpt-2.gguf")
	spm := openTokenizer(t, stories)
	text := englishText(t)[:4000]
	want, wantSPM := tok.Encode(text, EncodeOptions{}), spm.Encode(text, EncodeOptions{})
	done := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 5; i++ {
				if !equalIDs(tok.Encode(text, EncodeOptions{}), want) || !equalIDs(spm.Encode(text, EncodeOptions{}), wantSPM) {
					done <- fmt.Errorf("concurrent Encode differs")
					return
				}
				if tok.Decode(want) != text {
					done <- fmt.Errorf("concurrent Decode differs")
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
