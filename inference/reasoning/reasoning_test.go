package reasoning

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// split is the reference: the rules of the package doc applied to the whole output.
func split(s string, startInThink bool) (reasoning, content string) {
	think := startInThink
	if strings.HasPrefix(s, openTag) {
		s, think = s[len(openTag):], true
	}
	if !think {
		return "", s
	}
	i := strings.Index(s, closeTag)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i+len(closeTag):], "\r\n")
}

// stream feeds pieces to a new parser and joins what it returns.
func stream(pieces []string, startInThink bool) (reasoning, content string) {
	p := NewParser(startInThink)
	var r, c strings.Builder
	for _, piece := range pieces {
		pr, pc := p.Push(piece)
		r.WriteString(pr)
		c.WriteString(pc)
	}
	pr, pc := p.Flush()
	return r.String() + pr, c.String() + pc
}

// chunks cuts s into pieces of n bytes.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

var cases = []struct {
	name             string
	in               string
	startInThink     bool
	reasoning, reply string
}{
	{"R1 output", "<think>\nLet me think.\n</think>\n\nThe answer is 4.", false, "\nLet me think.\n", "The answer is 4."},
	{"prompt opened the think block", "Let me think.\n</think>\n\nAnswer", true, "Let me think.\n", "Answer"},
	{"think tag repeated after the prompt's", "<think>\nhmm</think>ok", true, "\nhmm", "ok"},
	{"no tags", "Just an answer.", false, "", "Just an answer."},
	{"no tags, reasoning never closed", "still thinking", true, "still thinking", ""},
	{"open tag not at the start is text", "Hello <think>x</think>", false, "", "Hello <think>x</think>"},
	{"space before the open tag", " <think>x</think>y", false, "", " <think>x</think>y"},
	{"tags after the reasoning are text", "<think>a</think>b</think><think>c", false, "a", "b</think><think>c"},
	{"empty reasoning", "<think></think>\n\nx", false, "", "x"},
	{"only leading newlines trimmed", "<think>r</think>\r\n\nx\n\ny\n", false, "r", "x\n\ny\n"},
	{"nothing after the reasoning", "<think>r</think>\n\n", false, "r", ""},
	{"partial open tag at the end", "<thi", false, "", "<thi"},
	{"partial close tag at the end", "<think>abc</thi", false, "abc</thi", ""},
	{"partial close tag, prompt opened", "abc</", true, "abc</", ""},
	{"lookalike tag", "<thank you>", false, "", "<thank you>"},
	{"lone angle bracket", "<", false, "", "<"},
	{"angle brackets in the reasoning", "<think>a < b </ c </thinking> </think>d", false, "a < b </ c </thinking> ", "d"},
	{"UTF-8", "<think>思考中…</think>\n答えは４。", false, "思考中…", "答えは４。"},
	{"tag inside the reasoning", "<think>x<think>y</think>z", false, "x<think>y", "z"},
	{"empty", "", false, "", ""},
	{"empty, prompt opened", "", true, "", ""},
}

// TestSplitPoints streams every case cut into pieces of 1, 2, 3, ... bytes, and cut once
// at every position, and compares with the expected split (and with the reference).
func TestSplitPoints(t *testing.T) {
	for _, tc := range cases {
		if r, c := split(tc.in, tc.startInThink); r != tc.reasoning || c != tc.reply {
			t.Errorf("%s: reference split gives %q, %q; want %q, %q", tc.name, r, c, tc.reasoning, tc.reply)
		}
		var cuts [][]string
		for n := 1; n <= len(tc.in); n++ {
			cuts = append(cuts, chunks(tc.in, n))
		}
		for i := 0; i <= len(tc.in); i++ {
			cuts = append(cuts, []string{tc.in[:i], tc.in[i:]})
		}
		for _, pieces := range cuts {
			r, c := stream(pieces, tc.startInThink)
			if r != tc.reasoning || c != tc.reply {
				t.Errorf("%s, pieces %q: got %q, %q; want %q, %q", tc.name, pieces, r, c, tc.reasoning, tc.reply)
				break
			}
		}
	}
}

// TestNoPartialTags: while a tag is arriving byte by byte, nothing of it comes out.
func TestNoPartialTags(t *testing.T) {
	p := NewParser(false)
	for i, b := range []byte(openTag) {
		if r, c := p.Push(string(b)); r != "" || c != "" {
			t.Fatalf("open tag byte %d gave %q, %q", i, r, c)
		}
	}
	if r, c := p.Push("reason"); r != "reason" || c != "" {
		t.Fatalf("reasoning gave %q, %q", r, c)
	}
	for i, b := range []byte(closeTag + "\n\n") {
		if r, c := p.Push(string(b)); r != "" || c != "" {
			t.Fatalf("close tag byte %d gave %q, %q", i, r, c)
		}
	}
	if r, c := p.Push("answer"); r != "" || c != "answer" {
		t.Fatalf("answer gave %q, %q", r, c)
	}
	// A held prefix that stops being a tag comes out at once, with what follows.
	p = NewParser(true)
	if r, c := p.Push("a </thi"); r != "a " || c != "" {
		t.Fatalf("got %q, %q", r, c)
	}
	if r, c := p.Push("s is"); r != "</this is" || c != "" {
		t.Fatalf("got %q, %q", r, c)
	}
}

// FuzzParser: for any output and any cutting, streaming equals the reference split, and
// reasoning+content is the output minus the tags and the newlines after </think>.
func FuzzParser(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.in, tc.startInThink, uint64(len(tc.in)))
	}
	f.Add("<think><think></think></think>\n\n\r\n", true, uint64(7))
	f.Fuzz(func(t *testing.T, in string, startInThink bool, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var pieces []string
		for s := in; s != ""; {
			n := min(len(s), rng.IntN(12))
			pieces = append(pieces, s[:n])
			s = s[n:]
		}
		r, c := stream(pieces, startInThink)
		wr, wc := split(in, startInThink)
		if r != wr || c != wc {
			t.Fatalf("pieces %q: got %q, %q; want %q, %q", pieces, r, c, wr, wc)
		}
		// Minus the tags: remove the opening tag, the first closing one and the newlines
		// after it; nothing else may be missing or added.
		rest := in
		if strings.HasPrefix(rest, openTag) {
			rest = rest[len(openTag):]
		}
		if strings.HasPrefix(in, openTag) || startInThink {
			if i := strings.Index(rest, closeTag); i >= 0 {
				rest = rest[:i] + strings.TrimLeft(rest[i+len(closeTag):], "\r\n")
			}
		}
		if r+c != rest {
			t.Fatalf("reasoning+content = %q, want %q", r+c, rest)
		}
	})
}
