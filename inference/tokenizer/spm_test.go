package tokenizer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

const stories = "../assets/stories260K.gguf"

// TestStoriesDecode decodes BOS + llama2.c's greedy ids: the text must match byte for
// byte, without the leading space of the first piece after BOS.
func TestStoriesDecode(t *testing.T) {
	tok := openTokenizer(t, stories)
	raw, err := os.ReadFile(filepath.Join(testdata, "models/stories260K.greedy200.ids"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(testdata, "models/stories260K.greedy200.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ids := []int32{tok.BOS()}
	for _, f := range strings.Fields(string(raw)) {
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, int32(v))
	}
	if len(ids) != 201 {
		t.Fatalf("%d ids, want 200 + BOS", len(ids)-1)
	}
	if got := tok.Decode(ids); got != string(want) {
		t.Errorf("Decode:\n got %q\nwant %q", got, want)
	}
	// Streaming gives the same text.
	d := tok.NewDecoder()
	var sb strings.Builder
	for _, id := range ids {
		sb.WriteString(d.Add(id))
	}
	sb.WriteString(d.Flush())
	if sb.String() != string(want) {
		t.Errorf("Decoder:\n got %q\nwant %q", sb.String(), want)
	}
}

func TestStoriesEncode(t *testing.T) {
	tok := openTokenizer(t, stories)
	if tok.VocabSize() != 512 || tok.BOS() != 1 || tok.EOS() != 2 || !tok.AddBOS() {
		t.Fatalf("vocab %d bos %d eos %d addBOS %v", tok.VocabSize(), tok.BOS(), tok.EOS(), tok.AddBOS())
	}
	const s = "Once upon a time"
	ids := tok.Encode(s, EncodeOptions{AddSpecial: true})
	// The story starts with these tokens in llama2.c's greedy output.
	want := []int32{1, 403, 407, 261, 378}
	if !equalIDs(ids, want) {
		t.Errorf("Encode(%q) = %v, want %v", s, ids, want)
	}
	if got := tok.Decode(ids); got != s {
		t.Errorf("Decode(Encode(%q)) = %q", s, got)
	}
	if got := tok.Decode(tok.Encode(s, EncodeOptions{})); got != s {
		t.Errorf("without BOS: Decode(Encode(%q)) = %q", s, got)
	}
	if !tok.IsEOG(2) || tok.IsEOG(1) || tok.IsEOG(403) {
		t.Error("IsEOG: want only </s>")
	}
	if p := tok.Piece(403); p != " Once" {
		t.Errorf("Piece(403) = %q", p)
	}
	if p := tok.Piece(3 + 'A'); p != "A" {
		t.Errorf("Piece(<0x41>) = %q", p)
	}
	if p := tok.Piece(1); p != "<s>" {
		t.Errorf("Piece(BOS) = %q", p)
	}
}

// TestSpecialParsing checks control tokens are recognised only with ParseSpecial, and
// that the space prefix goes to every fragment after a special token.
func TestSpecialParsing(t *testing.T) {
	tok := openTokenizer(t, "vocab/ggml-vocab-llama-spm.gguf")
	plain := tok.Encode("a</s>b", EncodeOptions{})
	parsed := tok.Encode("a</s>b", EncodeOptions{ParseSpecial: true})
	want := append(append(tok.Encode("a", EncodeOptions{}), 2), tok.Encode("b", EncodeOptions{})...)
	if !equalIDs(parsed, want) {
		t.Errorf("ParseSpecial: got %v want %v", parsed, want)
	}
	for _, id := range plain {
		if id == 2 {
			t.Errorf("without ParseSpecial, </s> was recognised: %v", plain)
		}
	}
	if got := tok.Decode(plain); got != "a</s>b" {
		t.Errorf("Decode(plain) = %q", got)
	}
	// Phi-3: "<|end|>" eats the whitespace after it (RSTRIP), and ends generation.
	phi := openTokenizer(t, "vocab/ggml-vocab-phi-3.gguf")
	a := phi.Encode("x<|end|>\n y", EncodeOptions{ParseSpecial: true})
	b := phi.Encode("x<|end|>y", EncodeOptions{ParseSpecial: true})
	if !equalIDs(a, b) || !phi.IsEOG(32007) || !phi.IsEOG(32000) {
		t.Errorf("phi-3: %v vs %v, eog %v", a, b, phi.IsEOG(32007))
	}
}

// TestDecoderHoldsPartialUTF8 feeds a byte-fallback emoji one token at a time.
func TestDecoderHoldsPartialUTF8(t *testing.T) {
	tok := openTokenizer(t, stories)
	const s = "hi 🦙 there é"
	ids := tok.Encode(s, EncodeOptions{AddSpecial: true})
	bytesSeen := 0
	d := tok.NewDecoder()
	var sb strings.Builder
	for _, id := range ids {
		if tok.attrs[id]&attrByte != 0 {
			bytesSeen++
		}
		out := d.Add(id)
		if !utf8.ValidString(out) {
			t.Fatalf("Add(%d) = %q: not valid UTF-8", id, out)
		}
		sb.WriteString(out)
	}
	if bytesSeen < 4 {
		t.Fatalf("expected byte fallback for the emoji, ids %v", ids)
	}
	sb.WriteString(d.Flush())
	if sb.String() != s {
		t.Errorf("streamed %q, want %q", sb.String(), s)
	}
	// Each prefix of the emoji's bytes is held back.
	emoji := tok.Encode("🦙", EncodeOptions{})
	d = tok.NewDecoder()
	for i, id := range emoji {
		out := d.Add(id)
		if i < len(emoji)-1 && out != "" && out != " " {
			t.Errorf("token %d of the emoji gave %q", i, out)
		}
	}
	// A truncated sequence is flushed as U+FFFD.
	d = tok.NewDecoder()
	if got := d.Add(emoji[len(emoji)-4]) + d.Add(emoji[len(emoji)-3]); got != "" {
		t.Errorf("lead bytes gave %q", got)
	}
	if got := d.Flush(); got != "\uFFFD\uFFFD" {
		t.Errorf("Flush = %q", got)
	}
}
