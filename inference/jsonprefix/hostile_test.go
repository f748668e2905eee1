package jsonprefix

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestMaxDepth: containers nest at most MaxDepth deep, and at that depth Accepts stays
// cheap (it copies the open containers on every call, once per vocabulary token).
func TestMaxDepth(t *testing.T) {
	var c Checker
	deep := `{"a":` + strings.Repeat("[", MaxDepth-1)
	if !c.Feed(deep) {
		t.Fatalf("%d open containers refused", MaxDepth)
	}
	if c.Accepts("[") || c.Accepts("{") || c.Accepts(` [`) {
		t.Fatalf("container %d accepted", MaxDepth+1)
	}
	if !c.Accepts("1]") || !c.Accepts("]") {
		t.Fatal("a value or a close refused at the deepest level")
	}
	if !c.Feed(strings.Repeat("]", MaxDepth-1)+"}") || !c.Done() {
		t.Fatal("closing every container refused")
	}

	var h Checker
	if h.Feed(`{"a":` + strings.Repeat("[", 100000)) {
		t.Fatal("100000 open arrays accepted")
	}
	if len(h.stack) > MaxDepth {
		t.Fatalf("stack of %d frames", len(h.stack))
	}
}

// TestAcceptsCost: a reply with a long string value or a long key keeps no copy of the
// text that no schema needs, so Accepts does not grow with it.
func TestAcceptsCost(t *testing.T) {
	s, err := Compile(map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s      *Schema
		prefix string
	}{
		{nil, `{"a": "` + strings.Repeat("x", 1<<20)},
		{nil, `{"` + strings.Repeat("k", 1<<20)},
		{s, `{"name": "` + strings.Repeat("x", 1<<20)},
		{s, `{"` + strings.Repeat("k", 1<<20)},
	} {
		c := NewChecker(tc.s)
		if !c.Feed(tc.prefix) {
			t.Fatalf("%.20q... refused", tc.prefix)
		}
		if len(c.str) > 8 {
			t.Errorf("%.20q...: %d bytes of the string kept", tc.prefix, len(c.str))
		}
		start := time.Now()
		for range 100000 {
			c.Accepts("abc")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%.20q...: 100000 Accepts took %v", tc.prefix, d)
		}
	}
	// A long key is still told apart from a property it starts with.
	c := NewChecker(s)
	if !c.Feed(`{"`+strings.Repeat("name", 10)+`": 1, "name": "x"}`) || !c.Done() {
		t.Error("an object with a long extra key and the property refused")
	}
}

// FuzzChecker: any text is refused or accepted without a panic; Accepts says what Feed
// does; a text accepted whole is valid JSON; and a valid JSON object no deeper than
// MaxDepth is accepted.
func FuzzChecker(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": [1, -2.5e3, "x\u00e9", true, null, {"b": []}]}`, `{"a":01}`,
		`{"a":` + strings.Repeat("[", 200), "{\"\x00\":1}", `{"a":"\uZZZZ"}`, ` {"a" : { } } `} {
		f.Add(s, false)
		f.Add(s, true)
	}
	schema, err := Compile(map[string]any{"type": "object", "additionalProperties": false, "required": []any{"kind"},
		"properties": map[string]any{
			"kind":  map[string]any{"enum": []any{"a", "ab", "b"}},
			"items": map[string]any{"type": "array", "items": map[string]any{"type": []any{"integer", "null"}}},
			"more":  map[string]any{"type": "object"},
		}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, withSchema bool) {
		c := &Checker{}
		if withSchema {
			c = NewChecker(schema)
		}
		half := len(text) / 2
		if !c.Feed(text[:half]) {
			return
		}
		accepts := c.Accepts(text[half:])
		ok := c.Feed(text[half:])
		if accepts != ok {
			t.Fatalf("Accepts %v, Feed %v", accepts, ok)
		}
		if ok && c.Done() && !json.Valid([]byte(text)) {
			t.Fatalf("%q accepted whole, not valid JSON", text)
		}
		if !ok && !withSchema && json.Valid([]byte(text)) && strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "{") &&
			depth(text) <= MaxDepth && !longSpace(text) {
			t.Fatalf("%q refused, a valid JSON object", text)
		}
	})
}

// depth is the deepest nesting of brackets outside strings in valid JSON text.
func depth(text string) int {
	d, most, inStr, esc := 0, 0, false, false
	for i := 0; i < len(text); i++ {
		b := text[i]
		switch {
		case esc:
			esc = false
		case inStr && b == '\\':
			esc = true
		case b == '"':
			inStr = !inStr
		case !inStr && (b == '{' || b == '['):
			d++
			most = max(most, d)
		case !inStr && (b == '}' || b == ']'):
			d--
		}
	}
	return most
}

// longSpace reports whether text has more than MaxSpace whitespace bytes in a row, which
// the checker refuses by design outside strings (counted here inside strings too).
func longSpace(text string) bool {
	n := 0
	for i := 0; i < len(text); i++ {
		if space(text[i]) {
			if n++; n > MaxSpace {
				return true
			}
		} else {
			n = 0
		}
	}
	return false
}
