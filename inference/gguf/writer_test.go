package gguf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"ember/inference/quant"
)

type myFloat float32 // a defined type: ValueOf goes by kind

// roundTripKVs covers every value type, empty values and nested arrays.
func roundTripKVs(t testing.TB) []struct {
	key  string
	in   any
	want any // what Value.Any returns; nil means in
	typ  string
} {
	emptyI32, err := NewArray(TypeInt32, nil)
	must(t, err)
	emptyNested, err := NewArray(TypeArray, nil)
	must(t, err)
	mixed, err := NewArray(TypeArray, []Value{mustValue(t, []uint8{1}), mustValue(t, []string{"s"}), emptyI32})
	must(t, err)
	return []struct {
		key  string
		in   any
		want any
		typ  string
	}{
		{"t.u8", uint8(200), nil, "uint8"},
		{"t.i8", int8(-100), nil, "int8"},
		{"t.u16", uint16(65535), nil, "uint16"},
		{"t.i16", int16(-32768), nil, "int16"},
		{"t.u32", uint32(4000000000), nil, "uint32"},
		{"t.i32", int32(-2000000000), nil, "int32"},
		{"t.f32", float32(-1.5), nil, "float32"},
		{"t.true", true, nil, "bool"},
		{"t.false", false, nil, "bool"},
		{"t.str", "héllo, wörld", nil, "string"},
		{"t.empty_str", "", nil, "string"},
		{"t.u64", uint64(math.MaxUint64), nil, "uint64"},
		{"t.i64", int64(math.MinInt64), nil, "int64"},
		{"t.f64", math.Pi, nil, "float64"},
		{"t.myfloat", myFloat(2.5), float32(2.5), "float32"},
		{"a.u8", []uint8{0, 255}, nil, "array of uint8"},
		{"a.i8", []int8{-128, 127}, nil, "array of int8"},
		{"a.u16", []uint16{1, 65535}, nil, "array of uint16"},
		{"a.i16", []int16{-1, 1}, nil, "array of int16"},
		{"a.u32", []uint32{0, math.MaxUint32}, nil, "array of uint32"},
		{"a.i32", []int32{-1, 0, 1}, nil, "array of int32"},
		{"a.f32", []float32{0.5, float32(math.Inf(-1))}, nil, "array of float32"},
		{"a.bool", []bool{true, false, true}, nil, "array of bool"},
		{"a.str", []string{"", "a", "日本"}, nil, "array of string"},
		{"a.u64", []uint64{math.MaxUint64}, nil, "array of uint64"},
		{"a.i64", [2]int64{math.MinInt64, math.MaxInt64}, []int64{math.MinInt64, math.MaxInt64}, "array of int64"},
		{"a.f64", []float64{1e300}, nil, "array of float64"},
		{"a.empty_str", []string{}, nil, "array of string"},
		{"a.empty_i32", emptyI32, []int32{}, "array of int32"},
		{"n.strs", [][]string{{"a", "b"}, {}, {"c"}}, []any{[]string{"a", "b"}, []string{}, []string{"c"}}, "array of array"},
		{"n.deep", [][][]int32{{{1}, {2, 3}}, {}}, []any{[]any{[]int32{1}, []int32{2, 3}}, []any{}}, "array of array"},
		{"n.empty", emptyNested, []any{}, "array of array"},
		{"n.mixed", mixed, []any{[]uint8{1}, []string{"s"}, []int32{}}, "array of array"},
		{"n.values", []Value{mustValue(t, "x"), mustValue(t, "y")}, []string{"x", "y"}, "array of string"},
	}
}

func mustValue(t testing.TB, x any) Value {
	t.Helper()
	v, err := ValueOf(x)
	must(t, err)
	return v
}

type testTensor struct {
	name string
	typ  quant.Type
	dims []uint64
	data []byte
}

func testTensors(t testing.TB) []testTensor {
	rng := rand.New(rand.NewPCG(1, 2))
	var out []testTensor
	shapes := []struct {
		typ  quant.Type
		dims []uint64
	}{
		{quant.F32, []uint64{3}}, {quant.F16, []uint64{5, 3}}, {quant.BF16, []uint64{2, 2, 2}},
		{quant.Q4_0, []uint64{64, 3}}, {quant.Q8_0, []uint64{32, 1, 2, 3}}, {quant.Q4_K, []uint64{256, 2}},
		{quant.Q6_K, []uint64{512}}, {quant.I32, []uint64{7}}, {quant.Q5_1, []uint64{32, 5}}, {quant.F32, []uint64{1, 1, 1, 1}},
	}
	for i, s := range shapes {
		n := uint64(1)
		for _, d := range s.dims {
			n *= d
		}
		size, err := quant.RowBytes(s.typ, n)
		must(t, err)
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		out = append(out, testTensor{"blk." + itoa(i) + ".w." + strings.ToLower(s.typ.String()), s.typ, s.dims, data})
	}
	return out
}

func writeFile(t testing.TB, w *Writer) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	must(t, err)
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo returned %d, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint64{0, 32, 64, 1} { // 0: leave the default
		t.Run("align"+itoa(int(align)), func(t *testing.T) {
			kvs := roundTripKVs(t)
			tensors := testTensors(t)
			build := func() *Writer {
				w := NewWriter()
				if align != 0 {
					w.SetAlignment(align)
				}
				for _, kv := range kvs {
					must(t, w.AddKV(kv.key, kv.in))
				}
				for _, tt := range tensors {
					must(t, w.AddTensor(tt.name, tt.typ, tt.dims, tt.data))
				}
				return w
			}
			b := writeFile(t, build())
			if again := writeFile(t, build()); !bytes.Equal(b, again) {
				t.Fatal("two identical writers wrote different bytes")
			}
			f, err := Parse(b)
			must(t, err)
			wantAlign := align
			if align == 0 {
				wantAlign = DefaultAlignment
			}
			if f.Version != 3 || f.Alignment != wantAlign || f.DataOffset%wantAlign != 0 || f.DataOffset < f.metaEnd {
				t.Errorf("version %d, alignment %d, data at %d", f.Version, f.Alignment, f.DataOffset)
			}
			offset := 0
			if align != 0 {
				offset = 1 // general.alignment comes first
				if f.KVs[0].Key != KeyAlignment {
					t.Errorf("first key %q", f.KVs[0].Key)
				}
			}
			if len(f.KVs) != len(kvs)+offset {
				t.Fatalf("%d KVs, want %d", len(f.KVs), len(kvs)+offset)
			}
			for i, kv := range kvs {
				got := f.KVs[i+offset]
				want := kv.want
				if want == nil {
					want = kv.in
				}
				if got.Key != kv.key || got.Value.TypeName() != kv.typ || !reflect.DeepEqual(got.Value.Any(), want) {
					t.Errorf("KV %d: %q %s %#v, want %q %s %#v", i, got.Key, got.Value.TypeName(), got.Value.Any(), kv.key, kv.typ, want)
				}
			}
			if len(f.Tensors) != len(tensors) {
				t.Fatalf("%d tensors, want %d", len(f.Tensors), len(tensors))
			}
			for i, tt := range tensors {
				ti, ok := f.Tensor(tt.name)
				if !ok || ti != &f.Tensors[i] {
					t.Fatalf("Tensor(%q) = %v, %v", tt.name, ti, ok)
				}
				if ti.Type != tt.typ || !reflect.DeepEqual(ti.Dims, tt.dims) || ti.Offset%wantAlign != 0 ||
					!bytes.Equal(f.TensorData(ti), tt.data) || ti.Size != uint64(len(tt.data)) {
					t.Errorf("tensor %q: %v %v offset %d size %d", tt.name, ti.Type, ti.Dims, ti.Offset, ti.Size)
				}
			}
			// Copying a parsed file through a new Writer gives the same bytes.
			w := NewWriter()
			must(t, w.CopyKVsFrom(f))
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				must(t, w.AddTensor(ti.Name, ti.Type, ti.Dims, f.TensorData(ti)))
			}
			if copied := writeFile(t, w); !bytes.Equal(copied, b) {
				t.Error("rewriting the parsed file changed its bytes")
			}
		})
	}
}

func TestWriterNoTensorsNoPadding(t *testing.T) {
	w := NewWriter()
	must(t, w.AddKV("general.architecture", "llama"))
	b := writeFile(t, w)
	want := 24 + 8 + len("general.architecture") + 4 + 8 + len("llama")
	if len(b) != want {
		t.Fatalf("%d bytes, want %d (no padding)", len(b), want)
	}
	f, err := Parse(b)
	must(t, err)
	if len(f.Tensors) != 0 || f.Architecture() != "llama" {
		t.Errorf("tensors %d, architecture %q", len(f.Tensors), f.Architecture())
	}
}

func TestWriterErrors(t *testing.T) {
	f32 := f32bytes(1, 2, 3, 4)
	cases := []struct {
		name string
		do   func(w *Writer) error
		want string
	}{
		{"duplicate key", func(w *Writer) error { w.AddKV("k", "a"); return w.AddKV("k", "b") }, `key "k": duplicate`},
		{"empty key", func(w *Writer) error { return w.AddKV("", "a") }, "want 1..65535"},
		{"int", func(w *Writer) error { return w.AddKV("k", 5) }, "Go type int has no GGUF type"},
		{"map", func(w *Writer) error { return w.AddKV("k", map[string]int32{}) }, "has no GGUF type"},
		{"[]any", func(w *Writer) error { return w.AddKV("k", []any{int32(1)}) }, "has no GGUF type"},
		{"nil", func(w *Writer) error { return w.AddKV("k", nil) }, "nil"},
		{"zero Value", func(w *Writer) error { return w.AddKV("k", Value{}) }, "malformed uint8"},
		{"empty []Value", func(w *Writer) error { return w.AddKV("k", []Value{}) }, "use NewArray"},
		{"mixed []Value", func(w *Writer) error {
			return w.AddKV("k", []Value{mustValue(t, "a"), mustValue(t, uint8(1))})
		}, "element 1 has type uint8, want string"},
		{"too deep", func(w *Writer) error { return w.AddKV("k", [][][][][][][][][]uint8{{{{{{{{{1}}}}}}}}}) }, "nested more than 8"},
		{"too deep Values", func(w *Writer) error {
			v := mustValue(t, []uint8{1})
			var err error
			for range 8 {
				if v, err = NewArray(TypeArray, []Value{v}); err != nil {
					return err
				}
			}
			return w.AddKV("k", v)
		}, "nested more than 8"},
		{"alignment uint64", func(w *Writer) error { return w.AddKV(KeyAlignment, uint64(64)) }, "has type uint64, want uint32"},
		{"alignment 48", func(w *Writer) error { return w.AddKV(KeyAlignment, uint32(48)) }, "not a non-zero power of two"},
		{"SetAlignment 0", func(w *Writer) error { w.SetAlignment(0); _, err := w.WriteTo(&bytes.Buffer{}); return err }, "alignment 0"},
		{"SetAlignment 2^32", func(w *Writer) error { w.SetAlignment(1 << 32); _, err := w.WriteTo(&bytes.Buffer{}); return err }, "fits in a uint32"},
		{"duplicate tensor", func(w *Writer) error {
			w.AddTensor("t", quant.F32, []uint64{4}, f32)
			return w.AddTensor("t", quant.F32, []uint64{4}, f32)
		}, `tensor "t": duplicate name`},
		{"wrong size", func(w *Writer) error { return w.AddTensor("t", quant.F32, []uint64{3}, f32) }, "16 bytes of data, want 12"},
		{"no dims", func(w *Writer) error { return w.AddTensor("t", quant.F32, nil, f32) }, "0 dims"},
		{"5 dims", func(w *Writer) error { return w.AddTensor("t", quant.F32, []uint64{1, 1, 1, 1, 4}, f32) }, "5 dims"},
		{"dim 0", func(w *Writer) error { return w.AddTensor("t", quant.F32, []uint64{4, 0}, f32) }, "dim 1"},
		{"overflow", func(w *Writer) error { return w.AddTensor("t", quant.F32, []uint64{1 << 40, 1 << 40}, f32) }, "overflows"},
		{"unknown type", func(w *Writer) error { return w.AddTensor("t", quant.Type(4), []uint64{4}, f32) }, "unknown type"},
		{"partial block", func(w *Writer) error { return w.AddTensor("t", quant.Q4_0, []uint64{16}, f32) }, "block size 32"},
		{"empty name", func(w *Writer) error { return w.AddTensor("", quant.F32, []uint64{4}, f32) }, "name length 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do(NewWriter())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

func TestWriterSetAndRemove(t *testing.T) {
	w := NewWriter()
	must(t, w.AddKV("a", "1"))
	must(t, w.AddKV("b", uint32(2)))
	must(t, w.AddKV("c", true))
	must(t, w.SetKV("b", "two")) // replaced in place
	if !w.RemoveKV("a") || w.RemoveKV("a") {
		t.Fatal("RemoveKV")
	}
	w.SetAlignment(64)
	w.SetAlignment(128) // replaced in place
	must(t, w.AddTensor("t", quant.F32, []uint64{1}, f32bytes(1)))
	f, err := Parse(writeFile(t, w))
	must(t, err)
	var keys []string
	for _, kv := range f.KVs {
		keys = append(keys, kv.Key)
	}
	if !reflect.DeepEqual(keys, []string{"b", "c", KeyAlignment}) || len(w.KVs()) != 3 {
		t.Fatalf("keys %v", keys)
	}
	if s, _ := f.String("b"); s != "two" || f.Alignment != 128 || f.DataOffset%128 != 0 {
		t.Errorf("b = %q, alignment %d, data at %d", s, f.Alignment, f.DataOffset)
	}
	w.RemoveKV(KeyAlignment)
	f, err = Parse(writeFile(t, w))
	must(t, err)
	if f.Alignment != DefaultAlignment {
		t.Errorf("alignment %d after removing the key", f.Alignment)
	}
}
