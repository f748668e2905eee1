package openai

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestThinkParser: the split does not depend on how the text is chunked.
func TestThinkParser(t *testing.T) {
	cases := []struct {
		in, reasoning, content string
		startInThink           bool
	}{
		{"<think>\nLet me see.\n</think>\n\nThe answer is 4.", "Let me see.", "The answer is 4.", false},
		{"  <think>a</think>b", "a", "b", false},
		{"Hello <think>x</think>", "", "Hello <think>x</think>", false},
		{"<thinking>no</thinking>", "", "<thinking>no</thinking>", false},
		{"\n\n  Plain answer", "", "\n\n  Plain answer", false},
		{"<", "", "<", false},
		{"<think>unfinished", "unfinished", "", false},
		{"reasoning</think>answer", "reasoning", "answer", true},
		{"\nstep 1\nstep 2\n</think>\n\nok </think> stays", "step 1\nstep 2", "ok </think> stays", true},
		{"all thought", "all thought", "", true},
		{"a</thin", "a</thin", "", true},
		{"", "", "", false},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		for trial := range 30 {
			p := newThinkParser(c.startInThink)
			var r, k string
			s := c.in
			for len(s) > 0 {
				n := 1 + rng.IntN(len(s))
				if trial == 0 {
					n = len(s)
				}
				a, b := p.Push(s[:n])
				r, k, s = r+a, k+b, s[n:]
			}
			a, b := p.Flush()
			r, k = r+a, k+b
			if r != c.reasoning || k != c.content {
				t.Fatalf("%q (trial %d): reasoning %q content %q; want %q, %q", c.in, trial, r, k, c.reasoning, c.content)
			}
		}
	}
}

func TestJSONCut(t *testing.T) {
	cases := []struct {
		in, keep string
		over, ok bool
	}{
		{` {"a": "}", "b": [1, {"c": "\"}"}]} trailing talk`, ` {"a": "}", "b": [1, {"c": "\"}"}]}`, true, true},
		{`{"a": 1`, `{"a": 1`, false, true},
		{`Sure! {"a":1}`, `S`, true, false},
		{`[1,2]`, `[`, true, false},
	}
	for _, c := range cases {
		var j jsonCut
		keep, over, ok := "", false, true
		for i := 0; i < len(c.in) && !over; i++ { // byte by byte
			var k string
			k, over, ok = j.push(c.in[i : i+1])
			keep += k
		}
		if keep != c.keep || over != c.over || ok != c.ok {
			t.Errorf("%q: %q %v %v", c.in, keep, over, ok)
		}
		if c.over && c.ok && !json.Valid([]byte(keep)) {
			t.Errorf("%q: kept invalid JSON", c.in)
		}
	}
}
