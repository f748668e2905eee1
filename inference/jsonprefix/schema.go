package jsonprefix

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Type bits of a Schema.
const (
	tObject uint8 = 1 << iota
	tArray
	tString
	tNumber
	tInteger
	tBool
	tNull
	tAny = tObject | tArray | tString | tNumber | tInteger | tBool | tNull
)

// Schema is a compiled JSON schema of the subset structured outputs use: "type" (one or
// a list), "properties", "required", "additionalProperties" (a boolean), "items",
// "enum" of strings; descriptive keywords (title, description, default, format, ...)
// are ignored, and any other keyword is refused by Compile, so that a schema is never
// half enforced.
type Schema struct {
	types    uint8
	props    []prop // sorted by name
	maxName  int    // the length of the longest property name
	required []string
	closed   bool    // additionalProperties false: no other keys
	items    *Schema // nil: any
	enum     []string
	// A tagged object (Tagged): property tag comes first, and its value, one of byTag's
	// keys, picks the schema of property body.
	tag, body string
	byTag     map[string]*Schema
}

// Tagged is the schema of an object of two properties, both required and no other: tag,
// a string among byTag's keys, written first, then body, of the schema byTag gives for
// the tag's value (nil: any value). A tool call {"name": ..., "arguments": {...}} whose
// arguments follow the named function's parameters is Tagged("name", "arguments", ...).
func Tagged(tag, body string, byTag map[string]*Schema) *Schema {
	names := make([]string, 0, len(byTag))
	for n := range byTag {
		names = append(names, n)
	}
	sort.Strings(names)
	s := &Schema{types: tObject, required: []string{tag, body}, closed: true, tag: tag, body: body, byTag: byTag,
		props: []prop{{tag, &Schema{types: tString, enum: names}}, {body, nil}}}
	sort.Slice(s.props, func(i, j int) bool { return s.props[i].name < s.props[j].name })
	s.maxName = max(len(tag), len(body))
	return s
}

type prop struct {
	name string
	s    *Schema
}

// ignored are the keywords that describe and do not constrain.
var ignored = map[string]bool{"title": true, "description": true, "default": true, "examples": true,
	"format": true, "$schema": true, "$id": true, "strict": true, "name": true, "$comment": true}

// Compile compiles a JSON schema decoded by encoding/json (map[string]any).
func Compile(v any) (*Schema, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a schema must be an object, not %T", v)
	}
	s := &Schema{types: tAny}
	for k, x := range m {
		switch k {
		case "type":
			t, err := types(x)
			if err != nil {
				return nil, err
			}
			s.types = t
		case "properties":
			pm, ok := x.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("properties must be an object")
			}
			for name, ps := range pm {
				c, err := Compile(ps)
				if err != nil {
					return nil, fmt.Errorf("property %q: %w", name, err)
				}
				if strings.ContainsAny(name, "\"\\") || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
					return nil, fmt.Errorf("property %q: names with quotes, backslashes or control characters are not supported", name)
				}
				s.props = append(s.props, prop{name, c})
				s.maxName = max(s.maxName, len(name))
			}
			if len(s.props) > 64 {
				return nil, fmt.Errorf("%d properties: at most 64 are supported", len(s.props))
			}
			sort.Slice(s.props, func(i, j int) bool { return s.props[i].name < s.props[j].name })
		case "required":
			l, ok := x.([]any)
			if !ok {
				return nil, fmt.Errorf("required must be an array")
			}
			for _, r := range l {
				name, ok := r.(string)
				if !ok {
					return nil, fmt.Errorf("required must list strings")
				}
				s.required = append(s.required, name)
			}
		case "additionalProperties":
			b, ok := x.(bool)
			if !ok {
				return nil, fmt.Errorf("additionalProperties: only true or false is supported")
			}
			s.closed = !b
		case "items":
			c, err := Compile(x)
			if err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
			s.items = c
		case "enum":
			l, ok := x.([]any)
			if !ok || len(l) == 0 {
				return nil, fmt.Errorf("enum must be a non-empty array")
			}
			for _, e := range l {
				str, ok := e.(string)
				if !ok || strings.ContainsAny(str, "\"\\") || strings.ContainsFunc(str, func(r rune) bool { return r < 0x20 }) {
					return nil, fmt.Errorf("enum: only strings without quotes, backslashes or control characters are supported")
				}
				s.enum = append(s.enum, str)
			}
			s.types &= tString
			if s.types == 0 {
				return nil, fmt.Errorf("enum of strings on a schema that is no string")
			}
		default:
			if !ignored[k] {
				return nil, fmt.Errorf("keyword %q is not supported", k)
			}
		}
	}
	for _, r := range s.required {
		if s.prop(r) == nil && s.closed {
			return nil, fmt.Errorf("required property %q is not among the properties", r)
		}
	}
	return s, nil
}

func types(x any) (uint8, error) {
	names := []any{x}
	if l, ok := x.([]any); ok {
		names = l
	}
	var t uint8
	for _, n := range names {
		switch n {
		case "object":
			t |= tObject
		case "array":
			t |= tArray
		case "string":
			t |= tString
		case "number":
			t |= tNumber | tInteger
		case "integer":
			t |= tInteger
		case "boolean":
			t |= tBool
		case "null":
			t |= tNull
		default:
			return 0, fmt.Errorf("type %v is not a JSON schema type", n)
		}
	}
	if t == 0 {
		return 0, fmt.Errorf("type lists no type")
	}
	return t, nil
}

// prop is the schema of property name, nil when it has none.
func (s *Schema) prop(name string) *Schema {
	i := sort.Search(len(s.props), func(i int) bool { return s.props[i].name >= name })
	if i < len(s.props) && s.props[i].name == name {
		return s.props[i].s
	}
	return nil
}

// propIndex is the index of property name, -1 when none.
func (s *Schema) propIndex(name string) int {
	i := sort.Search(len(s.props), func(i int) bool { return s.props[i].name >= name })
	if i < len(s.props) && s.props[i].name == name {
		return i
	}
	return -1
}

// keyPrefix reports whether k starts a property name not in used (a closed object), or
// any name (an open one).
func (s *Schema) keyPrefix(k []byte, used uint64) bool {
	if s == nil || !s.closed {
		return true
	}
	if s.byTag != nil && used&(1<<s.propIndex(s.tag)) == 0 {
		return strings.HasPrefix(s.tag, string(k)) // the tag first
	}
	for i, p := range s.props {
		if used&(1<<i) == 0 && strings.HasPrefix(p.name, string(k)) {
			return true
		}
	}
	return false
}

// keyDone is the schema of key k when it may close here (nil for any), and whether it
// may.
func (s *Schema) keyDone(k []byte, used uint64) (*Schema, int, bool) {
	if s == nil {
		return nil, -1, true
	}
	i := s.propIndex(string(k))
	switch {
	case i >= 0 && used&(1<<i) != 0:
		return nil, -1, false // a key twice
	case i >= 0:
		return s.props[i].s, i, true
	}
	return nil, -1, !s.closed
}

// canClose reports whether an object of s with used keys may close: every required key
// there.
func (s *Schema) canClose(used uint64) bool {
	if s == nil {
		return true
	}
	for _, r := range s.required {
		i := s.propIndex(r)
		if i < 0 || used&(1<<i) == 0 {
			return false
		}
	}
	return true
}

// moreKeys reports whether an object of s with used keys may take another key.
func (s *Schema) moreKeys(used uint64) bool {
	if s == nil || !s.closed {
		return true
	}
	return used != (uint64(1)<<len(s.props))-1
}

// enumPrefix reports whether v starts one of s's enum values (always, without enum);
// enumDone whether v is one.
func (s *Schema) enumPrefix(v []byte) bool {
	if s == nil || s.enum == nil {
		return true
	}
	return slices.ContainsFunc(s.enum, func(e string) bool { return strings.HasPrefix(e, string(v)) })
}

func (s *Schema) enumDone(v []byte) bool {
	return s == nil || s.enum == nil || slices.Contains(s.enum, string(v))
}

// Object reports whether s allows an object at the top (the JSON modes want one).
func (s *Schema) Object() bool { return s.allows(tObject) }

// allows reports whether a value of s may be of type t.
func (s *Schema) allows(t uint8) bool { return s == nil || s.types&t != 0 }
