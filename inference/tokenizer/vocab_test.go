package tokenizer

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"ember/inference/gguf"
)

const testdata = "../../testdata"

var (
	tokCacheMu sync.Mutex
	tokCache   = map[string]*Tokenizer{}
)

// openTokenizer loads (once per test binary) the tokenizer of a GGUF file under testdata.
func openTokenizer(tb testing.TB, rel string) *Tokenizer {
	tb.Helper()
	tokCacheMu.Lock()
	defer tokCacheMu.Unlock()
	if t, ok := tokCache[rel]; ok {
		return t
	}
	f, err := gguf.Parse(readTestdata(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	t, err := FromGGUF(f)
	if err != nil {
		tb.Fatalf("%s: %v", rel, err)
	}
	tokCache[rel] = t
	return t
}

// readTestdata reads testdata/rel, or its gzipped copy rel.gz (the larger vocabularies
// are stored compressed, so the repository stays small enough to ship to the GPU
// machine).
func readTestdata(tb testing.TB, rel string) []byte {
	tb.Helper()
	path := filepath.Join(testdata, rel)
	if b, err := os.ReadFile(path); err == nil {
		return b
	}
	f, err := os.Open(path + ".gz")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("%s.gz: %v", rel, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("%s.gz: %v", rel, err)
	}
	return b
}

// vocabCase is one llama.cpp tokenizer test vector.
type vocabCase struct {
	text string
	ids  []int32
}

// readVectors reads testdata/vocab/<name>.gguf.inp/.out: inputs separated by
// "\n__ggml_vocab_test__\n" (the trailing empty piece is not a test), one line of
// space-separated ids per input.
func readVectors(tb testing.TB, name string) []vocabCase {
	tb.Helper()
	base := filepath.Join(testdata, "vocab", name+".gguf")
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		tb.Fatal(err)
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		tb.Fatal(err)
	}
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	texts = texts[:len(texts)-1]
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		tb.Fatalf("%s: %d inputs, %d outputs", name, len(texts), len(lines))
	}
	cases := make([]vocabCase, len(texts))
	for i, s := range texts {
		cases[i].text = s
		for _, f := range strings.Fields(lines[i]) {
			v, err := strconv.Atoi(f)
			if err != nil {
				tb.Fatalf("%s line %d: %v", name, i+1, err)
			}
			cases[i].ids = append(cases[i].ids, int32(v))
		}
	}
	return cases
}

// checkVectors encodes every vector with no special tokens added or parsed.
func checkVectors(t *testing.T, tok *Tokenizer, name string, cases []vocabCase) {
	pass := 0
	for i, c := range cases {
		got := tok.Encode(c.text, EncodeOptions{})
		if equalIDs(got, c.ids) {
			pass++
			continue
		}
		t.Errorf("%s #%d %q:\n got %v\nwant %v", name, i, c.text, got, c.ids)
	}
	t.Logf("%s: %d/%d", name, pass, len(cases))
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestVocabVectors(t *testing.T) {
	for _, name := range []string{"ggml-vocab-llama-spm", "ggml-vocab-phi-3",
		"ggml-vocab-gpt-2", "ggml-vocab-deepseek-llm", "ggml-vocab-deepseek-coder"} {
		t.Run(name, func(t *testing.T) {
			tok := openTokenizer(t, "vocab/"+name+".gguf")
			cases := readVectors(t, name)
			if len(cases) != 46 {
				t.Fatalf("%d vectors, want 46", len(cases))
			}
			checkVectors(t, tok, name, cases)
		})
	}
}
