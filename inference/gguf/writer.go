package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"

	"ember/inference/quant"
)

// Writer builds a GGUF v3 file: metadata in insertion order, then tensors in insertion
// order, each tensor's data aligned. The output depends only on what was added, so it is
// byte-for-byte stable. A Writer is not safe for concurrent use.
type Writer struct {
	kvs       []KV
	keys      map[string]int // key -> index in kvs
	tensors   []writerTensor
	names     map[string]bool
	alignment uint64
	err       error // a bad SetAlignment, reported by WriteTo
}

type writerTensor struct {
	info TensorInfo
	data []byte // the caller's bytes, not copied
}

// NewWriter returns an empty Writer for version 3 with the default alignment (32).
func NewWriter() *Writer {
	return &Writer{keys: map[string]int{}, names: map[string]bool{}, alignment: DefaultAlignment}
}

// SetAlignment sets the data alignment, a non-zero power of two that fits in a uint32,
// and records it as general.alignment (replacing any earlier value, keeping its place).
// A bad alignment makes WriteTo fail.
func (w *Writer) SetAlignment(a uint64) {
	if a == 0 || a&(a-1) != 0 || a > math.MaxUint32 {
		w.err = fmt.Errorf("gguf: alignment %d is not a non-zero power of two that fits in a uint32", a)
		return
	}
	w.err = nil
	w.alignment = a
	v, _ := ValueOf(uint32(a))
	w.set(KeyAlignment, v)
}

// AddKV appends a metadata value (see ValueOf for the Go types accepted). The key must
// be new. general.alignment must be a uint32 power of two and sets the alignment.
func (w *Writer) AddKV(key string, x any) error {
	if _, dup := w.keys[key]; dup {
		return fmt.Errorf("gguf: key %q: duplicate", key)
	}
	return w.SetKV(key, x)
}

// SetKV sets a metadata value: it replaces the value of an existing key, keeping its
// place, or appends a new key.
func (w *Writer) SetKV(key string, x any) error {
	if key == "" || len(key) > MaxKeyLen {
		return fmt.Errorf("gguf: key %q: length %d, want 1..%d bytes", key, len(key), MaxKeyLen)
	}
	v, err := valueOfAny(x)
	if err != nil {
		return fmt.Errorf("gguf: key %q: %w", key, err)
	}
	if key == KeyAlignment {
		if v.Type != TypeUint32 {
			return fmt.Errorf("gguf: key %q: has type %s, want uint32", key, v.TypeName())
		}
		a, _ := v.Uint()
		if a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: key %q: alignment %d is not a non-zero power of two", key, a)
		}
		w.alignment = a
		w.err = nil
	}
	w.set(key, v)
	return nil
}

func (w *Writer) set(key string, v Value) {
	if i, ok := w.keys[key]; ok {
		w.kvs[i].Value = v
		return
	}
	w.keys[key] = len(w.kvs)
	w.kvs = append(w.kvs, KV{Key: key, Value: v})
}

// RemoveKV deletes key, if present, and reports whether it was. Removing
// general.alignment restores the default alignment.
func (w *Writer) RemoveKV(key string) bool {
	i, ok := w.keys[key]
	if !ok {
		return false
	}
	w.kvs = append(w.kvs[:i], w.kvs[i+1:]...)
	delete(w.keys, key)
	for j := i; j < len(w.kvs); j++ {
		w.keys[w.kvs[j].Key] = j
	}
	if key == KeyAlignment {
		w.alignment, w.err = DefaultAlignment, nil
	}
	return true
}

// KVs returns the metadata added so far, in order (a copy of the list; the Values are
// shared and immutable).
func (w *Writer) KVs() []KV { return append([]KV(nil), w.kvs...) }

// CopyKVsFrom adds every KV of f, in f's order; a key already in w is an error.
// general.alignment, if f has it, sets w's alignment.
func (w *Writer) CopyKVsFrom(f *File) error {
	for _, kv := range f.KVs {
		if err := w.AddKV(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	return nil
}

// AddTensor appends a tensor. dims are in ggml order (dims[0] is the row length); data
// must be exactly quant.RowBytes(t, product of dims) bytes. data is not copied: it must
// stay unchanged until WriteTo returns.
func (w *Writer) AddTensor(name string, t quant.Type, dims []uint64, data []byte) error {
	if name == "" || len(name) > MaxNameLen {
		return fmt.Errorf("gguf: tensor %q: name length %d, want 1..%d bytes", name, len(name), MaxNameLen)
	}
	if w.names[name] {
		return fmt.Errorf("gguf: tensor %q: duplicate name", name)
	}
	if len(dims) < 1 || len(dims) > MaxDims {
		return fmt.Errorf("gguf: tensor %q: %d dims, want 1..%d", name, len(dims), MaxDims)
	}
	if !t.Known() {
		return fmt.Errorf("gguf: tensor %q: unknown type %v", name, t)
	}
	n := uint64(1)
	for i, d := range dims {
		hi, lo := bits.Mul64(n, d)
		if d == 0 || hi != 0 || lo > math.MaxInt64 {
			return fmt.Errorf("gguf: tensor %q: dim %d of %v is 0 or overflows the element count", name, i, dims)
		}
		n = lo
	}
	if bs := uint64(t.BlockSize()); dims[0]%bs != 0 {
		return fmt.Errorf("gguf: tensor %q: row length %d is not a multiple of the %v block size %d", name, dims[0], t, bs)
	}
	size, err := quant.RowBytes(t, n)
	if err != nil {
		return fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	if uint64(len(data)) != size {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, want %d for %v %v", name, len(data), size, t, dims)
	}
	info := TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: t, Size: size, Elements: n}
	w.tensors = append(w.tensors, writerTensor{info: info, data: data})
	w.names[name] = true
	return nil
}

// countingWriter counts the bytes written and keeps the first error.
type countingWriter struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (c *countingWriter) write(p []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
}

func (c *countingWriter) u32(x uint32) {
	binary.LittleEndian.PutUint32(c.buf[:], x)
	c.write(c.buf[:4])
}

func (c *countingWriter) u64(x uint64) {
	binary.LittleEndian.PutUint64(c.buf[:], x)
	c.write(c.buf[:8])
}

func (c *countingWriter) str(s string) {
	c.u64(uint64(len(s)))
	if c.err == nil {
		n, err := c.w.WriteString(s)
		c.n += int64(n)
		c.err = err
	}
}

var zeros [64]byte

func (c *countingWriter) pad(align uint64) {
	for k := alignUp(uint64(c.n), align) - uint64(c.n); k > 0 && c.err == nil; {
		m := min(k, uint64(len(zeros)))
		c.write(zeros[:m])
		k -= m
	}
}

// WriteTo writes the file: the header, the KVs in insertion order, the tensor infos,
// padding to the alignment and the tensor data, each tensor padded to the alignment. A
// file without tensors ends right after the metadata. It returns the bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	// Lay out the data section.
	offset := uint64(0)
	for i := range w.tensors {
		t := &w.tensors[i].info
		t.Offset = offset
		if t.Size > math.MaxInt64-w.alignment-offset {
			return 0, fmt.Errorf("gguf: tensor %q: data section overflows", t.Name)
		}
		offset = alignUp(offset+t.Size, w.alignment)
	}
	c := &countingWriter{w: bufio.NewWriterSize(out, 1<<16)}
	c.write([]byte("GGUF"))
	c.u32(3)
	c.u64(uint64(len(w.tensors)))
	c.u64(uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		v := kv.Value
		c.str(kv.Key)
		c.u32(uint32(v.Type))
		switch v.Type {
		case TypeString:
			c.u64(uint64(len(v.raw)))
		case TypeArray:
			c.u32(uint32(v.ElemType))
			c.u64(v.n)
		}
		c.write(v.raw)
	}
	for _, wt := range w.tensors {
		t := &wt.info
		c.str(t.Name)
		c.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			c.u64(d)
		}
		c.u32(uint32(t.Type))
		c.u64(t.Offset)
	}
	if len(w.tensors) > 0 {
		c.pad(w.alignment)
		for _, wt := range w.tensors {
			c.write(wt.data)
			c.pad(w.alignment)
		}
	}
	if c.err == nil {
		c.err = c.w.Flush()
	}
	if c.err != nil {
		return c.n, fmt.Errorf("gguf: write: %w", c.err)
	}
	return c.n, nil
}
