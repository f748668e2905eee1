package jsonprefix

import (
	"encoding/json"
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
