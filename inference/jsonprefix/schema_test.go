package jsonprefix

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func compile(t *testing.T, src string) *Schema {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(src), &v); err != nil {
		t.Fatal(err)
	}
	s, err := Compile(v)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return s
}

// TestSchemaChecker: objects that match the schema are accepted whole; wrong keys,
// a key twice, a missing required key at '}', a wrong type, a fraction where an integer
// goes, a string outside the enum, a ',' where no key may follow, all refused where
// they go wrong.
func TestSchemaChecker(t *testing.T) {
	s := compile(t, `{"type":"object","additionalProperties":false,"required":["name","age"],
		"properties":{"name":{"type":"string","description":"who"},"age":{"type":"integer"},
		"tags":{"type":"array","items":{"type":"string","enum":["red","green"]}},
		"score":{"type":["number","null"]},"ok":{"type":"boolean"},
		"pet":{"type":"object","properties":{"kind":{"type":"string"}},"required":["kind"]}}}`)
	for _, good := range []string{
		`{"name":"Lily","age":7}`,
		`{ "age": -3, "name": "a\"b", "tags": ["red", "green", "red"], "score": null }`,
		`{"name":"x","age":0,"score":1.5e3,"ok":true,"pet":{"kind":"cat","extra":[1,{}]}}`,
		`{"name":"x","age":10,"tags":[]}`,
	} {
		c := NewChecker(s)
		if !c.Feed(good) || !c.Done() {
			t.Errorf("%s refused", good)
		}
	}
	for _, bad := range []string{
		`{"nam":1`,                           // no such key... then a number where a key's value must be a string
		`{"nme"`,                             // no property starts so
		`{"name":"x","name"`,                 // twice
		`{"name":"x"}`,                       // age missing
		`{"name":1`,                          // a number for a string
		`{"name":"x","age":1.5`,              // a fraction for an integer
		`{"name":"x","age":1e3`,              // an exponent for an integer
		`{"name":"x","age":1,"tags":["blue"`, // outside the enum
		`{"name":"x","age":1,"tags":["re"]`,  // a prefix only
		`{"name":"x","age":1,"ok":"yes"`,     // a string for a boolean
		`{"name":"x","age":1,"pet":{}`,       // kind missing
		`{"name":"x","age":1,"score":"1"`,    // a string for a number
		`["name"]`,                           // no object
	} {
		if c := NewChecker(s); c.Feed(bad) && c.Done() {
			t.Errorf("%s accepted whole", bad)
		}
	}
	// Every key used: no ',' may follow.
	small := compile(t, `{"type":"object","properties":{"a":{"type":"boolean"}},"additionalProperties":false}`)
	if c := NewChecker(small); c.Feed(`{"a":true,`) {
		t.Error("a ',' after the only key was taken")
	}
	// A closed object with no properties: no key may even open (the quote alone would
	// leave nothing to write next).
	empty := compile(t, `{"type":"object","properties":{"args":{"type":"object","properties":{},"additionalProperties":false}}}`)
	if c := NewChecker(empty); c.Feed(`{"args":{ "`) {
		t.Error("a key opened in a closed object without properties")
	}
	if c := NewChecker(empty); !c.Feed(`{"args":{ }}`) || !c.Done() {
		t.Error("an empty closed object refused")
	}
	// Accepts leaves the checker as it was.
	c := NewChecker(s)
	c.Feed(`{"name":"x","ag`)
	if !c.Accepts(`e":1}`) || c.Accepts(`x"`) || !c.Feed(`e":1}`) || !c.Done() {
		t.Error("Accepts changed the checker or judged wrong")
	}
}

// TestCompileRefuses: keywords that would be ignored silently are refused, as are enums
// of non-strings and required keys a closed object cannot have.
func TestCompileRefuses(t *testing.T) {
	for _, src := range []string{
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}}}`,
		`{"anyOf":[{"type":"string"}]}`,
		`{"type":"string","pattern":"^a"}`,
		`{"enum":[1,2]}`,
		`{"type":"object","additionalProperties":false,"required":["b"],"properties":{"a":{}}}`,
		`{"type":"strin"}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`[1]`,
	} {
		var v any
		if err := json.Unmarshal([]byte(src), &v); err != nil {
			t.Fatal(err)
		}
		if _, err := Compile(v); err == nil {
			t.Errorf("%s compiled", src)
		}
	}
}

// conforms is the plain reference for the schema subset: v (decoded by encoding/json)
// matches s.
func conforms(s *Schema, v any) bool {
	if s == nil {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		if s.types&tObject == 0 {
			return false
		}
		for k, e := range x {
			p := s.prop(k)
			if p == nil && s.closed || !conforms(p, e) {
				return false
			}
		}
		for _, r := range s.required {
			if _, ok := x[r]; !ok {
				return false
			}
		}
		return true
	case []any:
		if s.types&tArray == 0 {
			return false
		}
		for _, e := range x {
			if !conforms(s.items, e) {
				return false
			}
		}
		return true
	case string:
		if s.types&tString == 0 {
			return false
		}
		return s.enum == nil || slices.Contains(s.enum, x)
	case json.Number:
		if s.types&tNumber != 0 {
			return true
		}
		return s.types&tInteger != 0 && !strings.ContainsAny(string(x), ".eE")
	case bool:
		return s.types&tBool != 0
	case nil:
		return s.types&tNull != 0
	}
	return false
}

// TestSchemaCheckerRandom: on random texts made of the schema's names and JSON's bytes,
// a text the checker takes whole and calls Done is valid JSON that conforms, and a
// conforming object (without duplicate keys) the checker takes whole.
func TestSchemaCheckerRandom(t *testing.T) {
	s := compile(t, `{"type":"object","additionalProperties":false,"required":["a"],
		"properties":{"a":{"type":"integer"},"b":{"type":["string","null"]},"c":{"type":"array","items":{"type":"string","enum":["x","yz"]}},
		"d":{"type":"object","properties":{"e":{"type":"boolean"}}}}}`)
	words := []string{`{`, `}`, `[`, `]`, `:`, `,`, `"a"`, `"b"`, `"c"`, `"d"`, `"e"`, `"x"`, `"yz"`, `"q"`, `1`, `-2`, `3.5`, `1e2`,
		`true`, `false`, `null`, ` `, `"`, `a`, `y`}
	rng := rand.New(rand.NewPCG(7, 8))
	done := 0
	for n := 0; n < 100000; n++ {
		// A conforming object, then (most of the time) a word of it replaced, dropped
		// or doubled, or a random word put in.
		toks := genObject(rng, s)
		if rng.IntN(4) > 0 && len(toks) > 1 {
			i := 1 + rng.IntN(len(toks)-1)
			switch rng.IntN(4) {
			case 0:
				toks[i] = words[rng.IntN(len(words))]
			case 1:
				toks = slices.Delete(toks, i, i+1)
			case 2:
				toks = slices.Insert(toks, i, toks[i])
			default:
				toks = slices.Insert(toks, i, words[rng.IntN(len(words))])
			}
		}
		text := strings.Join(toks, "")
		c := NewChecker(s)
		ok := c.Feed(text) && c.Done()
		var v any
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		valid := json.Valid([]byte(text)) && dec.Decode(&v) == nil && conforms(s, v) && !dupKeys(text)
		if ok {
			done++
		}
		if ok != valid {
			t.Fatalf("%q: checker %v, reference %v", text, ok, valid)
		}
	}
	if done < 20000 || done > 90000 {
		t.Errorf("%d of 100,000 random texts conformed: the test proves little", done)
	}
}

// dupKeys reports whether some object of the JSON text has a key twice.
func dupKeys(text string) bool {
	dec := json.NewDecoder(strings.NewReader(text))
	type frame struct {
		obj  bool
		seen map[string]bool
		key  bool // the next string is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch x := tok.(type) {
		case json.Delim:
			switch x {
			case '{':
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].key = true
				}
				stack = append(stack, &frame{obj: true, seen: map[string]bool{}, key: true})
				continue
			case '[':
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].key = true
				}
				stack = append(stack, &frame{})
				continue
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].key = true
				}
				continue
			}
		case string:
			if f := stack[len(stack)-1]; f.obj && f.key {
				if f.seen[x] {
					return true
				}
				f.seen[x], f.key = true, false
				continue
			}
		}
		if f := stack[len(stack)-1]; f.obj {
			f.key = true
		}
	}
}

// genObject is a random object conforming to s (an object schema), as JSON tokens.
func genObject(rng *rand.Rand, s *Schema) []string {
	toks := []string{"{"}
	first := true
	for _, p := range s.props {
		req := slices.Contains(s.required, p.name)
		if !req && rng.IntN(2) == 0 {
			continue
		}
		if !first {
			toks = append(toks, ",")
		}
		first = false
		toks = append(toks, `"`+p.name+`"`, ":")
		toks = append(toks, genValue(rng, p.s)...)
	}
	return append(toks, "}")
}

func genValue(rng *rand.Rand, s *Schema) []string {
	var opts []uint8
	for _, t := range []uint8{tObject, tArray, tString, tNumber, tInteger, tBool, tNull} {
		if s == nil || s.types&t != 0 {
			opts = append(opts, t)
		}
	}
	switch opts[rng.IntN(len(opts))] {
	case tObject:
		if s == nil {
			return []string{"{", "}"}
		}
		return genObject(rng, s)
	case tArray:
		toks := []string{"["}
		for i := rng.IntN(3); i > 0; i-- {
			if len(toks) > 1 {
				toks = append(toks, ",")
			}
			toks = append(toks, genValue(rng, s.itemSchema())...)
		}
		return append(toks, "]")
	case tString:
		if s != nil && s.enum != nil {
			return []string{`"` + s.enum[rng.IntN(len(s.enum))] + `"`}
		}
		return []string{`"w` + strings.Repeat("x", rng.IntN(3)) + `"`}
	case tNumber:
		return []string{"3.5"}
	case tInteger:
		return []string{"-2"}
	case tBool:
		return []string{"true"}
	}
	return []string{"null"}
}

// TestTagged: a tagged object takes its tag first, a tag among the branches, and then
// the body of that tag's schema (a tool call whose arguments follow the named
// function's parameters); a branch of nil takes any body.
func TestTagged(t *testing.T) {
	s := Tagged("name", "arguments", map[string]*Schema{
		"weather": compile(t, `{"type":"object","properties":{"city":{"type":"string","enum":["Paris","Oslo"]}},"required":["city"],"additionalProperties":false}`),
		"time":    compile(t, `{"type":"object","properties":{},"additionalProperties":false}`),
		"any":     nil,
	})
	for _, good := range []string{
		`{"name":"weather","arguments":{"city":"Oslo"}}`,
		`{ "name" : "time" , "arguments" : { } }`,
		`{"name":"any","arguments":[1,{"x":null}]}`,
	} {
		if c := NewChecker(s); !c.Feed(good) || !c.Done() {
			t.Errorf("%s refused", good)
		}
	}
	for _, bad := range []string{
		`{"arguments":{}`,                              // the body before the tag
		`{"name":"clock"`,                              // no such tag
		`{"name":"time","arguments":{"city"`,           // time's arguments take no key
		`{"name":"weather","arguments":{"city":"Rome"`, // outside weather's enum
		`{"name":"weather","arguments":{}}`,            // city missing
		`{"name":"weather"}`,                           // arguments missing
		`{"name":"time","arguments":{},"x"`,            // no other key
	} {
		if c := NewChecker(s); c.Feed(bad) && c.Done() {
			t.Errorf("%s accepted whole", bad)
		} else if c := NewChecker(s); c.Feed(bad) && !strings.HasSuffix(bad, "}") {
			t.Errorf("%s accepted as a prefix", bad)
		}
	}
	if !s.Object() {
		t.Error("a tagged schema is no object schema")
	}
}
