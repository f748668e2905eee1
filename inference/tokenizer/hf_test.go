package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"ember/inference/gguf"
)

// hfVocab describes a Hugging Face byte-level BPE tokenizer under testdata/tokenizers,
// with the special tokens its GGUF conversion would append.
type hfVocab struct {
	dir, vocabFile, mergesFile string
	pre                        string
	nVocab                     int              // padded vocabulary size; ids without a token become [PAD<id>] (unused)
	specials                   map[int32]string // control tokens by id
	bos, eos                   uint32
	addBOS                     bool
}

func llama3Vocab() hfVocab {
	sp := map[int32]string{
		128000: "<|begin_of_text|>", 128001: "<|end_of_text|>",
		128006: "<|start_header_id|>", 128007: "<|end_header_id|>",
		128008: "<|eom_id|>", 128009: "<|eot_id|>",
	}
	for id, n := int32(128000), 0; id < 128256; id++ {
		if _, ok := sp[id]; !ok {
			sp[id] = fmt.Sprintf("<|reserved_special_token_%d|>", n)
			n++
		}
	}
	return hfVocab{dir: "llama3.2", vocabFile: "encoder.json", mergesFile: "vocab.bpe", pre: "llama-bpe",
		nVocab: 128256, specials: sp, bos: 128000, eos: 128001, addBOS: true}
}

func qwen2Vocab() hfVocab {
	return hfVocab{dir: "qwen2", vocabFile: "vocab.json", mergesFile: "merges.txt", pre: "qwen2",
		nVocab: 151936, specials: map[int32]string{151643: "<|endoftext|>", 151644: "<|im_start|>", 151645: "<|im_end|>"},
		bos: 151643, eos: 151643}
}

// buildGGUF writes a vocab-only GGUF for v in memory, as llama.cpp's converter would.
func (v hfVocab) buildGGUF(tb testing.TB) []byte {
	tb.Helper()
	dir := filepath.Join("tokenizers", v.dir)
	raw := readTestdata(tb, filepath.Join(dir, v.vocabFile))
	var vocab map[string]int32
	if err := json.Unmarshal(raw, &vocab); err != nil {
		tb.Fatal(err)
	}
	tokens := make([]string, v.nVocab)
	types := make([]int32, v.nVocab)
	for s, id := range vocab {
		tokens[id], types[id] = s, 1
	}
	for id, s := range v.specials {
		tokens[id], types[id] = s, 3
	}
	for id := range tokens {
		if tokens[id] == "" {
			tokens[id], types[id] = fmt.Sprintf("[PAD%d]", id), 5
		}
	}
	raw = readTestdata(tb, filepath.Join(dir, v.mergesFile))
	var merges []string
	for _, line := range strings.Split(string(raw), "\n") {
		if line != "" && !strings.HasPrefix(line, "#version") {
			merges = append(merges, line)
		}
	}
	w := gguf.NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", "llama"},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", v.pre},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.merges", merges},
		{"tokenizer.ggml.bos_token_id", v.bos},
		{"tokenizer.ggml.eos_token_id", v.eos},
		{"tokenizer.ggml.add_bos_token", v.addBOS},
	} {
		if err := w.AddKV(kv.k, kv.v); err != nil {
			tb.Fatalf("%s: %v", kv.k, err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// hfTokenizer builds (once) the tokenizer of v through a GGUF written with gguf.NewWriter.
func hfTokenizer(tb testing.TB, v hfVocab) *Tokenizer {
	tb.Helper()
	key := "hf:" + v.dir
	tokCacheMu.Lock()
	defer tokCacheMu.Unlock()
	if t, ok := tokCache[key]; ok {
		return t
	}
	f, err := gguf.Parse(v.buildGGUF(tb))
	if err != nil {
		tb.Fatal(err)
	}
	t, err := FromGGUF(f)
	if err != nil {
		tb.Fatal(err)
	}
	tokCache[key] = t
	return t
}

func TestHFVocabVectors(t *testing.T) {
	for _, c := range []struct {
		name string
		v    func() hfVocab
	}{
		{"ggml-vocab-llama-bpe", llama3Vocab},
		{"ggml-vocab-qwen2", qwen2Vocab},
	} {
		t.Run(c.name, func(t *testing.T) {
			tok := hfTokenizer(t, c.v())
			cases := readVectors(t, c.name)
			if len(cases) != 46 {
				t.Fatalf("%d vectors, want 46", len(cases))
			}
			checkVectors(t, tok, c.name, cases)
		})
	}
}

func TestBPESpecialTokens(t *testing.T) {
	l3 := hfTokenizer(t, llama3Vocab())
	if l3.BOS() != 128000 || !l3.AddBOS() || l3.EOS() != 128001 {
		t.Fatalf("llama3 bos %d add %v eos %d", l3.BOS(), l3.AddBOS(), l3.EOS())
	}
	for _, id := range []int32{128001, 128008, 128009} {
		if !l3.IsEOG(id) {
			t.Errorf("llama3: %d (%s) should end generation", id, l3.Piece(id))
		}
	}
	if l3.IsEOG(128006) || l3.IsEOG(128000) {
		t.Error("llama3: header/BOS must not end generation")
	}
	const chat = "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
	ids := l3.Encode(chat, EncodeOptions{AddSpecial: true, ParseSpecial: true})
	hi := l3.Encode("\n\nHi", EncodeOptions{})
	want := append(append([]int32{128000, 128006}, l3.Encode("user", EncodeOptions{})...), 128007)
	want = append(append(want, hi...), 128009)
	if !equalIDs(ids, want) {
		t.Errorf("llama3 chat: got %v want %v", ids, want)
	}
	if got := l3.Decode(ids); got != "user\n\nHi" {
		t.Errorf("llama3 Decode = %q", got)
	}
	plain := l3.Encode(chat, EncodeOptions{})
	if got := l3.Decode(plain); got != chat {
		t.Errorf("llama3 unparsed round trip = %q", got)
	}
	if p := l3.Piece(128009); p != "<|eot_id|>" {
		t.Errorf("Piece(eot) = %q", p)
	}

	q := hfTokenizer(t, qwen2Vocab())
	if q.AddBOS() || !q.IsEOG(151645) || !q.IsEOG(151643) || q.IsEOG(151644) {
		t.Errorf("qwen2: addBOS %v eog %v %v %v", q.AddBOS(), q.IsEOG(151645), q.IsEOG(151643), q.IsEOG(151644))
	}
	ids = q.Encode("<|im_start|>user\nhello<|im_end|>", EncodeOptions{AddSpecial: true, ParseSpecial: true})
	if len(ids) < 3 || ids[0] != 151644 || ids[len(ids)-1] != 151645 {
		t.Errorf("qwen2 chat ids %v", ids)
	}
	if p := q.Piece(q.Encode(" hello", EncodeOptions{})[0]); p != " hello" {
		t.Errorf("qwen2 Piece = %q", p)
	}
}
