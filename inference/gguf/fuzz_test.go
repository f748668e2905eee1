package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, and that for every file it accepts the
// tensor data lies in bounds, every accessor works, and a copy through Writer parses
// back to the same metadata and tensors.
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(hostileDir, "*.gguf"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		must(f, err)
		f.Add(b)
	}
	f.Add(baseFile().b)
	w := NewWriter()
	for _, kv := range roundTripKVs(f) {
		must(f, w.AddKV(kv.key, kv.in))
	}
	for _, tt := range testTensors(f)[:4] {
		must(f, w.AddTensor(tt.name, tt.typ, tt.dims, tt.data))
	}
	f.Add(writeFile(f, w))
	// The metadata of a real model, without its tensors.
	if real, err := Open(stories); err == nil {
		w := NewWriter()
		must(f, w.CopyKVsFrom(real))
		f.Add(writeFile(f, w))
		real.Close()
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data[:len(data):len(data)])
		if err != nil {
			if file != nil {
				t.Fatal("a File with an error")
			}
			return
		}
		checkAccepted(t, file, data)
	})
}

func checkAccepted(t *testing.T, f *File, data []byte) {
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		d := f.TensorData(ti)
		if uint64(len(d)) != ti.Size || ti.Size == 0 {
			t.Fatalf("tensor %q: %d bytes, size %d", ti.Name, len(d), ti.Size)
		}
		start := f.DataOffset + ti.Offset
		if start+ti.Size > uint64(len(data)) || !bytes.Equal(d, data[start:start+ti.Size]) {
			t.Fatalf("tensor %q: data out of place", ti.Name)
		}
		if got, ok := f.Tensor(ti.Name); !ok || got != ti {
			t.Fatalf("Tensor(%q) does not find it", ti.Name)
		}
	}
	for _, kv := range f.KVs {
		if v, ok := f.Lookup(kv.Key); !ok || !v.Equal(kv.Value) {
			t.Fatalf("Lookup(%q) does not find it", kv.Key)
		}
		f.String(kv.Key)
		f.Uint(kv.Key)
		f.Int(kv.Key)
		f.Float(kv.Key)
		f.Bool(kv.Key)
		f.Strings(kv.Key)
		f.Float32s(kv.Key)
		f.Int32s(kv.Key)
		f.Uint32s(kv.Key)
		walk(t, kv.Value, 0)
	}
	f.Architecture()

	w := NewWriter()
	if err := w.CopyKVsFrom(f); err != nil {
		t.Fatalf("CopyKVsFrom: %v", err)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, f.TensorData(ti)); err != nil {
			t.Fatalf("AddTensor: %v", err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	g, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("the rewritten file does not parse: %v", err)
	}
	if len(g.KVs) != len(f.KVs) || len(g.Tensors) != len(f.Tensors) || g.Alignment != f.Alignment {
		t.Fatalf("rewritten: %d KVs, %d tensors, alignment %d", len(g.KVs), len(g.Tensors), g.Alignment)
	}
	for i := range f.KVs {
		if g.KVs[i].Key != f.KVs[i].Key || !g.KVs[i].Value.Equal(f.KVs[i].Value) {
			t.Fatalf("rewritten KV %d differs", i)
		}
	}
	for i := range f.Tensors {
		a, b := &f.Tensors[i], &g.Tensors[i]
		if a.Name != b.Name || a.Type != b.Type || a.Size != b.Size || !bytes.Equal(f.TensorData(a), g.TensorData(b)) {
			t.Fatalf("rewritten tensor %d differs", i)
		}
	}
}

// walk calls every accessor on v and its elements.
func walk(t *testing.T, v Value, depth int) {
	if depth > maxNesting {
		t.Fatalf("value nested deeper than %d", maxNesting)
	}
	v.String()
	v.Uint()
	v.Int()
	v.Float()
	v.Bool()
	v.Strings()
	v.Float32s()
	v.Int32s()
	v.Uint32s()
	v.Any()
	v.TypeName()
	elems, ok := v.Array()
	if v.Type == TypeArray && (!ok || len(elems) != v.Len()) {
		t.Fatalf("array of %d elements gives %d, %v", v.Len(), len(elems), ok)
	}
	for _, e := range elems {
		walk(t, e, depth+1)
	}
}
