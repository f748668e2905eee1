// Package gguf reads and writes GGUF v2/v3 model files: typed metadata and tensor infos,
// with the tensor data left in place (memory-mapped by Open). The reader trusts nothing:
// every count, length, shape and offset is checked with overflow-safe arithmetic before
// it is used, and a bad file gives an error naming the key or tensor and the offset,
// never a panic. The metadata is validated in a first pass that allocates nothing; only
// then are the KVs and tensor infos stored, so a count the file does not back costs no
// memory, and a valid file costs at most a few times the size of its metadata (the
// KV and TensorInfo structs; keys, names and dims share one allocation each).
//
// Layout (little-endian): "GGUF", version u32, tensor count u64, KV count u64, the KVs
// (key string, value type u32, value), the tensor infos (name string, n_dims u32, dims
// u64[n_dims], type u32, offset u64), padding to the alignment, then the data section.
// A string is a u64 length and its bytes; an array is an element type u32, a count u64
// and the elements.
package gguf

import (
	"fmt"
	"math"
	"os"
	"sort"

	"ember/inference/quant"
)

// KV is one metadata key and its value.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor; its data is File.TensorData.
type TensorInfo struct {
	Name     string
	Dims     []uint64   // ggml order: Dims[0] is the row length (innermost); 1..4 dims, each >= 1
	Type     quant.Type // a known ggml type
	Offset   uint64     // bytes, relative to the start of the data section, as stored
	Size     uint64     // bytes, = quant.RowBytes(Type, Elements)
	Elements uint64     // product of Dims, at most MaxInt64
}

// File is a parsed GGUF file. Its metadata stays valid after Close; tensor data does not.
// A File is safe for concurrent reads; Close must not race with them.
type File struct {
	Version    uint32
	KVs        []KV         // in file order
	Tensors    []TensorInfo // in file order
	Alignment  uint64       // general.alignment, or DefaultAlignment
	DataOffset uint64       // absolute offset of the data section (may equal or pass the end of a file with no tensors)

	data    []byte       // the whole file: a mapping (Open) or the caller's bytes (Parse); nil after Close
	unmap   func() error // releases data; nil when there is nothing to release
	size    int64        // len(data) as parsed, kept after Close
	metaEnd uint64       // offset just past the tensor infos
	byKey   []int32      // KVs indexes sorted by key
	byName  []int32      // Tensors indexes sorted by name
	onData  func(*TensorInfo)
}

// OnTensorData has fn called with each tensor whose data TensorData hands out from now
// on (nil: none), from whichever goroutines call it: how a model's load reports its
// progress. OnTensorData itself must not be called while TensorData may run.
func (f *File) OnTensorData(fn func(t *TensorInfo)) { f.onData = fn }

// TensorBytes is the size of all the tensors' data, in bytes.
func (f *File) TensorBytes() uint64 {
	var n uint64
	for i := range f.Tensors {
		n += f.Tensors[i].Size
	}
	return n
}

// Parse reads a GGUF file held in memory. data is kept by reference (not copied): it must
// not change while the File is in use.
func Parse(data []byte) (*File, error) {
	f, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	return f, nil
}

// Open maps the file at path read-only (a plain read on systems without mmap) and parses
// it. The caller must Close the File when done with its tensor data.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if !st.Mode().IsRegular() {
		what := "not a regular file"
		if st.IsDir() {
			what = "is a directory"
		}
		return nil, fmt.Errorf("gguf: open %s: %s", path, what)
	}
	if st.Size() > math.MaxInt {
		return nil, fmt.Errorf("gguf: open %s: %d bytes do not fit in memory", path, st.Size())
	}
	data, unmap, err := mapFile(fd, int(st.Size()))
	if err != nil {
		return nil, fmt.Errorf("gguf: map %s: %w", path, err)
	}
	f, err := parse(data)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		return nil, fmt.Errorf("gguf: %s: %w", path, err)
	}
	// Copy the metadata out of the mapping, so that it outlives Close.
	for i := range f.KVs {
		f.KVs[i].Value.raw = append([]byte(nil), f.KVs[i].Value.raw...)
	}
	f.unmap = unmap
	return f, nil
}

// Close releases the mapping. Slices returned by TensorData must not be used afterwards;
// metadata and tensor infos stay valid. Closing twice is harmless.
func (f *File) Close() error {
	f.data = nil
	if f.unmap == nil {
		return nil
	}
	unmap := f.unmap
	f.unmap = nil
	if err := unmap(); err != nil {
		return fmt.Errorf("gguf: unmap: %w", err)
	}
	return nil
}

// Size is the size of the file in bytes.
func (f *File) Size() int64 { return f.size }

// TensorData returns the Size bytes of t's data, a slice of the mapping (or of the bytes
// given to Parse): read-only, and invalid after Close. It returns nil after Close, or if
// t does not lie inside the file.
func (f *File) TensorData(t *TensorInfo) []byte {
	if t == nil || f.data == nil {
		return nil
	}
	n := uint64(len(f.data))
	if f.DataOffset > n || t.Offset > n-f.DataOffset || t.Size > n-f.DataOffset-t.Offset {
		return nil
	}
	start := f.DataOffset + t.Offset
	end := start + t.Size
	if f.onData != nil {
		f.onData(t)
	}
	return f.data[start:end:end]
}

// Tensor finds a tensor info by name; the pointer is into f.Tensors.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i := sort.Search(len(f.byName), func(i int) bool { return f.Tensors[f.byName[i]].Name >= name })
	if i < len(f.byName) && f.Tensors[f.byName[i]].Name == name {
		return &f.Tensors[f.byName[i]], true
	}
	return nil, false
}

// Lookup finds a metadata value by key.
func (f *File) Lookup(key string) (Value, bool) {
	i := sort.Search(len(f.byKey), func(i int) bool { return f.KVs[f.byKey[i]].Key >= key })
	if i < len(f.byKey) && f.KVs[f.byKey[i]].Key == key {
		return f.KVs[f.byKey[i]].Value, true
	}
	return Value{}, false
}

// Has reports whether key is present.
func (f *File) Has(key string) bool {
	_, ok := f.Lookup(key)
	return ok
}

// Architecture is general.architecture, or "" if it is missing or not a string.
func (f *File) Architecture() string {
	s, _ := f.String("general.architecture")
	return s
}

// lookup returns key's value, or the "missing" error.
func (f *File) lookup(key string) (Value, error) {
	v, ok := f.Lookup(key)
	if !ok {
		return Value{}, fmt.Errorf("gguf: key %q: missing", key)
	}
	return v, nil
}

func typeError(key string, v Value, want string) error {
	return fmt.Errorf("gguf: key %q: has type %s, want %s", key, v.TypeName(), want)
}

// String returns the string value of key.
func (f *File) String(key string) (string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return "", err
	}
	if s, ok := v.String(); ok {
		return s, nil
	}
	return "", typeError(key, v, "a string")
}

// Uint returns the value of key, of any integer type, that must not be negative.
func (f *File) Uint(key string) (uint64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if u, ok := v.Uint(); ok {
		return u, nil
	}
	if i, ok := v.Int(); ok {
		return 0, fmt.Errorf("gguf: key %q: value %d is negative, want an unsigned integer", key, i)
	}
	return 0, typeError(key, v, "an integer")
}

// Int returns the value of key, of any integer type, that must fit in an int64.
func (f *File) Int(key string) (int64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if i, ok := v.Int(); ok {
		return i, nil
	}
	if u, ok := v.Uint(); ok {
		return 0, fmt.Errorf("gguf: key %q: value %d does not fit in an int64", key, u)
	}
	return 0, typeError(key, v, "an integer")
}

// Float returns the value of key: a float32, a float64 or an integer.
func (f *File) Float(key string) (float64, error) {
	v, err := f.lookup(key)
	if err != nil {
		return 0, err
	}
	if x, ok := v.Float(); ok {
		return x, nil
	}
	return 0, typeError(key, v, "a number")
}

// Bool returns the bool value of key.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.lookup(key)
	if err != nil {
		return false, err
	}
	if b, ok := v.Bool(); ok {
		return b, nil
	}
	return false, typeError(key, v, "a bool")
}

// Strings returns the value of key, an array of strings.
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if s, ok := v.Strings(); ok {
		return s, nil
	}
	return nil, typeError(key, v, "an array of string")
}

// Float32s returns the value of key, an array of float32.
func (f *File) Float32s(key string) ([]float32, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if s, ok := v.Float32s(); ok {
		return s, nil
	}
	return nil, typeError(key, v, "an array of float32")
}

// Int32s returns the value of key, an array of any integer type whose elements all fit
// in an int32.
func (f *File) Int32s(key string) ([]int32, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if s, ok := v.Int32s(); ok {
		return s, nil
	}
	return nil, intArrayError(key, v, "int32")
}

// Uint32s returns the value of key, an array of any integer type whose elements all fit
// in a uint32.
func (f *File) Uint32s(key string) ([]uint32, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if s, ok := v.Uint32s(); ok {
		return s, nil
	}
	return nil, intArrayError(key, v, "uint32")
}

func intArrayError(key string, v Value, want string) error {
	if v.Type == TypeArray && v.ElemType.isInteger() {
		return fmt.Errorf("gguf: key %q: an element of the %s does not fit in %s", key, v.TypeName(), want)
	}
	return typeError(key, v, "an array of integers")
}

// Array returns the elements of key's value, an array of any type.
func (f *File) Array(key string) ([]Value, error) {
	v, err := f.lookup(key)
	if err != nil {
		return nil, err
	}
	if a, ok := v.Array(); ok {
		return a, nil
	}
	return nil, typeError(key, v, "an array")
}
