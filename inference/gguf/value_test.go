package gguf

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// getterFile holds one key of each kind the typed getters are tried on.
func getterFile(t *testing.T) *File {
	w := NewWriter()
	for _, kv := range []struct {
		k string
		v any
	}{
		{"general.architecture", "llama"}, {"u32", uint32(7)}, {"i8neg", int8(-3)}, {"u64big", uint64(math.MaxUint64)},
		{"f32", float32(0.25)}, {"flag", true}, {"strs", []string{"a", "b"}}, {"f32s", []float32{1, 2}},
		{"u8s", []uint8{1, 255}}, {"i64s", []int64{-1, 1 << 40}}, {"u32s", []uint32{math.MaxUint32}},
		{"nested", [][]string{{"x"}}},
	} {
		must(t, w.AddKV(kv.k, kv.v))
	}
	f, err := Parse(writeFile(t, w))
	must(t, err)
	return f
}

func TestGetters(t *testing.T) {
	f := getterFile(t)
	cases := []struct {
		name string
		get  func() (any, error)
		want any
		err  string // substring of the error; "" for success
	}{
		{"String", func() (any, error) { return f.String("general.architecture") }, "llama", ""},
		{"String missing", func() (any, error) { return f.String("nope") }, "", `gguf: key "nope": missing`},
		{"String of uint32", func() (any, error) { return f.String("u32") }, "", `gguf: key "u32": has type uint32, want a string`},
		{"Uint", func() (any, error) { return f.Uint("u32") }, uint64(7), ""},
		{"Uint u64", func() (any, error) { return f.Uint("u64big") }, uint64(math.MaxUint64), ""},
		{"Uint negative", func() (any, error) { return f.Uint("i8neg") }, uint64(0), `key "i8neg": value -3 is negative`},
		{"Uint of string", func() (any, error) { return f.Uint("general.architecture") }, uint64(0), `key "general.architecture": has type string, want an integer`},
		{"Int", func() (any, error) { return f.Int("i8neg") }, int64(-3), ""},
		{"Int too big", func() (any, error) { return f.Int("u64big") }, int64(0), "does not fit in an int64"},
		{"Float f32", func() (any, error) { return f.Float("f32") }, 0.25, ""},
		{"Float int", func() (any, error) { return f.Float("u32") }, 7.0, ""},
		{"Float of bool", func() (any, error) { return f.Float("flag") }, 0.0, "has type bool, want a number"},
		{"Bool", func() (any, error) { return f.Bool("flag") }, true, ""},
		{"Bool of uint32", func() (any, error) { return f.Bool("u32") }, false, "want a bool"},
		{"Strings", func() (any, error) { return f.Strings("strs") }, []string{"a", "b"}, ""},
		{"Strings of f32s", func() (any, error) { return f.Strings("f32s") }, []string(nil), "has type array of float32, want an array of string"},
		{"Strings missing", func() (any, error) { return f.Strings("tokens") }, []string(nil), `key "tokens": missing`},
		{"Float32s", func() (any, error) { return f.Float32s("f32s") }, []float32{1, 2}, ""},
		{"Float32s of string", func() (any, error) { return f.Float32s("general.architecture") }, []float32(nil), "has type string, want an array of float32"},
		{"Int32s u8", func() (any, error) { return f.Int32s("u8s") }, []int32{1, 255}, ""},
		{"Int32s too big", func() (any, error) { return f.Int32s("i64s") }, []int32(nil), "an element of the array of int64 does not fit in int32"},
		{"Int32s of strings", func() (any, error) { return f.Int32s("strs") }, []int32(nil), "has type array of string, want an array of integers"},
		{"Uint32s", func() (any, error) { return f.Uint32s("u32s") }, []uint32{math.MaxUint32}, ""},
		{"Uint32s negative", func() (any, error) { return f.Uint32s("i64s") }, []uint32(nil), "does not fit in uint32"},
		{"Array nested", func() (any, error) {
			a, err := f.Array("nested")
			if err != nil {
				return nil, err
			}
			s, _ := a[0].Strings()
			return s, nil
		}, []string{"x"}, ""},
		{"Array of scalar", func() (any, error) { return f.Array("u32") }, []Value(nil), "has type uint32, want an array"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.get()
			if c.err == "" && err != nil {
				t.Fatalf("error %v", err)
			}
			if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error %v, want one containing %q", err, c.err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
		})
	}
	if !f.Has("flag") || f.Has("nope") || f.Architecture() != "llama" {
		t.Error("Has or Architecture")
	}
	if _, ok := f.Tensor("x"); ok {
		t.Error("Tensor found in a file without tensors")
	}
}

// TestValueAccessors checks that each accessor accepts exactly the types it should.
func TestValueAccessors(t *testing.T) {
	type result struct {
		str, uint, int, float, bool, strs, f32s, i32s, u32s, array bool
	}
	probe := func(v Value) result {
		var r result
		_, r.str = v.String()
		_, r.uint = v.Uint()
		_, r.int = v.Int()
		_, r.float = v.Float()
		_, r.bool = v.Bool()
		_, r.strs = v.Strings()
		_, r.f32s = v.Float32s()
		_, r.i32s = v.Int32s()
		_, r.u32s = v.Uint32s()
		_, r.array = v.Array()
		return r
	}
	cases := []struct {
		in   any
		want result
		n    int
	}{
		{"s", result{str: true}, 0},
		{uint8(1), result{uint: true, int: true, float: true}, 0},
		{int16(-1), result{int: true, float: true}, 0},
		{uint64(math.MaxUint64), result{uint: true, float: true}, 0},
		{float64(1), result{float: true}, 0},
		{false, result{bool: true}, 0},
		{[]string{"a"}, result{strs: true, array: true}, 1},
		{[]float32{1, 2}, result{f32s: true, array: true}, 2},
		{[]float64{1}, result{array: true}, 1},
		{[]int8{-1}, result{i32s: true, array: true}, 1},
		{[]uint16{1, 2, 3}, result{i32s: true, u32s: true, array: true}, 3},
		{[]uint32{math.MaxUint32}, result{u32s: true, array: true}, 1},
		{[]int32{}, result{i32s: true, u32s: true, array: true}, 0},
		{[]bool{true}, result{array: true}, 1},
		{[][]int32{{1}}, result{array: true}, 1},
		{Value{}, result{}, 0}, // the zero Value is malformed: nothing reads it
	}
	for _, c := range cases {
		v, ok := c.in.(Value)
		if !ok {
			v = mustValue(t, c.in)
		}
		if got := probe(v); got != c.want || v.Len() != c.n {
			t.Errorf("%T %v: %+v len %d, want %+v len %d", c.in, c.in, got, v.Len(), c.want, c.n)
		}
	}
}

// TestNestingLimit checks that 8 levels of arrays are written and read, and 9 are not.
func TestNestingLimit(t *testing.T) {
	v := mustValue(t, []uint8{42})
	for range maxNesting - 1 {
		var err error
		v, err = NewArray(TypeArray, []Value{v})
		must(t, err)
	}
	w := NewWriter()
	must(t, w.AddKV("deep", v))
	f, err := Parse(writeFile(t, w))
	must(t, err)
	got, _ := f.Lookup("deep")
	for range maxNesting - 1 {
		a, ok := got.Array()
		if !ok || len(a) != 1 {
			t.Fatalf("level: %v %v", a, ok)
		}
		got = a[0]
	}
	if u8, _ := got.Array(); len(u8) != 1 || u8[0].Any() != uint8(42) {
		t.Fatalf("innermost: %v", u8)
	}
	mustRefuse(t, deepArray(maxNesting+1)(t), "nested more than 8 deep")
	if _, err := Parse(deepArray(maxNesting)(t)); err != nil {
		t.Errorf("8 levels: %v", err)
	}
}
