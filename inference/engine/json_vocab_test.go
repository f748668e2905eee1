package engine

import (
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"ember/inference/gguf"
	"ember/inference/jsonprefix"
	"ember/inference/sample"
	"ember/inference/tokenizer"
)

// bigVocab is DeepSeek-LLM's 102,400-token vocabulary (testdata/vocab).
func bigVocab(b testing.TB) *tokenizer.Tokenizer {
	b.Helper()
	in, err := os.Open("../../testdata/vocab/ggml-vocab-deepseek-llm.gguf.gz")
	if err != nil {
		b.Skip(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "vocab.gguf")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		b.Fatal(err)
	}
	out.Close()
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		b.Fatal(err)
	}
	return tok
}

// BenchmarkJSONMask: one full pass of the vocabulary through jsonReply.allowed, as the
// masked draw makes when its first draws are refused, at a tool call's name (an enum:
// few tokens allowed).
func BenchmarkJSONMask(b *testing.B) {
	tok := bigVocab(b)
	s := jsonprefix.Tagged("name", "arguments", map[string]*jsonprefix.Schema{"get_weather": nil, "get_time": nil})
	j := newJSONReply(tok, false, s)
	j.push(`{"name": "get_`)
	n := int32(tok.VocabSize())
	b.ResetTimer()
	for range b.N {
		ok := 0
		for id := int32(0); id < n; id++ {
			if j.allowed(id) {
				ok++
			}
		}
		if ok == 0 {
			b.Fatal("no token allowed")
		}
	}
}

// TestJSONMaskFirstByte: the first-byte filter of jsonReply.allowed refuses exactly the
// tokens the checker refuses, over a 102,400-token vocabulary at several states (the
// start, a key, a value, inside a string, an enum, after a value).
func TestJSONMaskFirstByte(t *testing.T) {
	tok := bigVocab(t)
	s := jsonprefix.Tagged("name", "arguments", map[string]*jsonprefix.Schema{"get_weather": nil, "get_time": nil})
	for _, c := range []struct {
		schema *jsonprefix.Schema
		text   string
	}{
		{nil, ""}, {nil, `{"a`}, {nil, `{"a": `}, {nil, `{"a": "x y`}, {nil, `{"a": 12`}, {nil, `{"a": [1, {"b": true}`},
		{s, `{`}, {s, `{"name": "get_`}, {s, `{"name": "get_time", "arguments": `},
	} {
		j := newJSONReply(tok, false, c.schema)
		j.push(c.text)
		ref := jsonprefix.NewChecker(c.schema)
		ref.Feed(c.text)
		n, allowed := int32(tok.VocabSize()), 0
		for id := int32(0); id < n; id++ {
			piece := tok.Piece(id)
			want := piece != "" && !tok.IsControl(id) && ref.Accepts(piece)
			if tok.IsEOG(id) {
				want = ref.Done()
			}
			if got := j.allowed(id); got != want {
				t.Fatalf("after %q: token %d %q allowed %v, checker %v", c.text, id, piece, got, want)
			}
			if want {
				allowed++
			}
		}
		if allowed == 0 {
			t.Errorf("after %q: no token allowed", c.text)
		}
	}
}

// BenchmarkJSONMaskedDraw: a masked draw at a tool call's name over random logits of a
// 102,400-token vocabulary (few tokens allowed), greedy and sampled.
func BenchmarkJSONMaskedDraw(b *testing.B) {
	tok := bigVocab(b)
	s := jsonprefix.Tagged("name", "arguments", map[string]*jsonprefix.Schema{"get_weather": nil, "get_time": nil})
	rng := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, tok.VocabSize())
	for i := range logits {
		logits[i] = float32(rng.NormFloat64() * 3)
	}
	row := make([]float32, len(logits))
	for _, p := range []sample.Params{{}, {Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05}} {
		b.Run(fmt.Sprintf("temp %g", p.Temperature), func(b *testing.B) {
			smp := sample.New(p)
			for range b.N {
				j := newJSONReply(tok, false, s)
				j.push(`{"name": "get_`)
				copy(row, logits)
				if id := smp.SampleMasked(row, j.allowed); !j.allowed(id) {
					b.Fatal("a refused token drawn")
				}
			}
		})
	}
}
