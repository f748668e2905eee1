package jsonprefix

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestChecker: whole objects are accepted and Done, their prefixes accepted and not
// Done (but at the close), and texts that no object starts with refused at the first
// offending byte; in every case encoding/json agrees on the whole text.
func TestChecker(t *testing.T) {
	good := []string{
		`{}`, ` { } `, `{"a":1}`, `{"a": -0.5e+10, "b": [true, false, null, "x\"\u00e9\n"], "c": {"d": []}}`,
		`{"k":[1,2.0,3e5,-4E-2,0]}`, "{\"ü\": \"ok\"}\n", `{"":""}`, `{"a":[[],[{}]]}`,
	}
	for _, s := range good {
		var c Checker
		for i := 0; i < len(s); i++ {
			if !c.Accepts(s[i:i+1]) || !c.Feed(s[i:i+1]) {
				t.Fatalf("%q refused at byte %d", s, i)
			}
		}
		if !c.Done() || !json.Valid([]byte(s)) {
			t.Errorf("%q: done %v, valid %v", s, c.Done(), json.Valid([]byte(s)))
		}
	}
	bad := []string{
		`[]`, `"a"`, `1`, `{a:1}`, `{"a" 1}`, `{"a":01}`, `{"a":1,}`, `{"a":tru }`, `{"a":1]`,
		`{"a":[1}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", `{"a":.5}`, `{"a":1.}`, `{"a":1e}`, `{} {}`,
		`{"a":-}`, `{"a":"\u12g4"}`, `{,}`, `{"a":[,]}`,
	}
	for _, s := range bad {
		var c Checker
		if c.Feed(s) && c.Done() {
			t.Errorf("%q accepted whole", s)
		}
		if json.Valid([]byte(s)) && s[0] == '{' {
			t.Errorf("%q is valid JSON: the case is wrong", s)
		}
	}
}

// TestCheckerRandom: on random texts built from JSON's bytes, a text the checker
// accepts whole and calls Done is valid JSON, and every valid JSON object it is given
// (the good texts, split anywhere) it accepts.
func TestCheckerRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]:,"\ 0123456789-+.eEtrufalsn` + "\n")
	done := 0
	for n := 0; n < 200000; n++ {
		b := make([]byte, 1+rng.IntN(12))
		b[0] = '{'
		for i := 1; i < len(b); i++ {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		var c Checker
		ok := c.Feed(string(b))
		if ok && c.Done() {
			done++
			if !json.Valid(b) {
				t.Fatalf("%q accepted as a whole object, not valid JSON", b)
			}
		}
		if !ok && json.Valid(b) {
			t.Fatalf("%q refused, valid JSON", b)
		}
	}
	if done < 100 {
		t.Errorf("only %d random objects completed: the test proves little", done)
	}
}
