package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"ember/inference/quant"
)

// Limits of the format and of this reader.
const (
	// DefaultAlignment is the data alignment when general.alignment is absent.
	DefaultAlignment = 32
	// KeyAlignment is the metadata key that sets the alignment (a uint32).
	KeyAlignment = "general.alignment"
	// MaxDims is GGML_MAX_DIMS, the most dimensions a tensor may have.
	MaxDims = 4
	// MaxKeyLen is the longest metadata key the spec allows, in bytes.
	MaxKeyLen = 1<<16 - 1
	// MaxNameLen is the longest tensor name this reader accepts, in bytes.
	MaxNameLen = 64 << 10

	maxNesting         = 8                     // arrays of arrays: at most this many levels
	minKVBytes         = 8 + 1 + 4 + 1         // key length, 1-byte key, type, 1-byte value
	minTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8 // name length, 1-byte name, n_dims, 1 dim, type, offset
)

var (
	// ErrTruncated is wrapped by every error that says the file ends before what its
	// header, counts or lengths promise.
	ErrTruncated = errors.New("unexpected end of file")
	// ErrNotGGUF is wrapped by the error for a file that does not start with "GGUF".
	ErrNotGGUF = errors.New("not a GGUF file")
)

// reader walks a byte slice; every read is bounds checked and names what it reads.
type reader struct {
	b   []byte
	off int
}

func (r *reader) left() uint64 { return uint64(len(r.b) - r.off) }

func (r *reader) take(n uint64, what string) ([]byte, error) {
	if n > r.left() {
		return nil, fmt.Errorf("%s at offset %d: %w (need %d bytes, %d left)", what, r.off, ErrTruncated, n, r.left())
	}
	p := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return p, nil
}

func (r *reader) u32(what string) (uint32, error) {
	p, err := r.take(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(p), nil
}

func (r *reader) u64(what string) (uint64, error) {
	p, err := r.take(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p), nil
}

// str reads a length-prefixed string of at most max bytes.
func (r *reader) str(what string, max uint64) ([]byte, error) {
	start := r.off
	n, err := r.u64(what)
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, fmt.Errorf("%s at offset %d: length %d exceeds the limit of %d bytes", what, start, n, max)
	}
	if n > r.left() {
		return nil, fmt.Errorf("%s at offset %d: length %d runs past the end of the file (%d bytes left): %w", what, start, n, r.left(), ErrTruncated)
	}
	return r.take(n, what)
}

// value reads the payload of one value of type t; depth counts enclosing arrays.
func (r *reader) value(t ValueType, depth int) (Value, error) {
	start := r.off
	switch t {
	case TypeString:
		p, err := r.str("string", math.MaxUint64)
		return Value{Type: t, raw: p}, err
	case TypeArray:
		if depth >= maxNesting {
			return Value{}, fmt.Errorf("array at offset %d: arrays nested more than %d deep", start, maxNesting)
		}
		et, err := r.u32("array element type")
		if err != nil {
			return Value{}, err
		}
		n, err := r.u64("array length")
		if err != nil {
			return Value{}, err
		}
		first := r.off
		if err := r.elems(ValueType(et), n, depth+1); err != nil {
			return Value{}, fmt.Errorf("array at offset %d: %w", start, err)
		}
		return Value{Type: t, ElemType: ValueType(et), n: n, raw: r.b[first:r.off:r.off]}, nil
	}
	size, ok := t.fixedSize()
	if !ok {
		return Value{}, fmt.Errorf("value type at offset %d: unknown value type id %d", start-4, uint32(t))
	}
	p, err := r.take(size, "value")
	if err != nil {
		return Value{}, err
	}
	if t == TypeBool && p[0] > 1 {
		return Value{}, fmt.Errorf("bool at offset %d: value %d is neither 0 nor 1", start, p[0])
	}
	return Value{Type: t, raw: p}, nil
}

// elems checks n encoded array elements of type et, after checking that the bytes left
// could hold n of the smallest such element.
func (r *reader) elems(et ValueType, n uint64, depth int) error {
	least, ok := et.minSize()
	if !ok {
		return fmt.Errorf("element type at offset %d: unknown value type id %d", r.off-12, uint32(et))
	}
	if n > r.left()/least {
		return fmt.Errorf("array length %d at offset %d: %d elements of %v need at least %d bytes each, only %d bytes left: %w",
			n, r.off-8, n, et, least, r.left(), ErrTruncated)
	}
	if _, fixed := et.fixedSize(); fixed {
		start := r.off
		p, err := r.take(n*least, "array elements")
		if err != nil {
			return err
		}
		if et == TypeBool {
			for i, c := range p {
				if c > 1 {
					return fmt.Errorf("element %d: bool at offset %d: value %d is neither 0 nor 1", i, start+i, c)
				}
			}
		}
		return nil
	}
	for i := range n {
		if _, err := r.value(et, depth); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

// parse reads and validates the whole file held in data, keeping data by reference.
func parse(data []byte) (*File, error) {
	r := &reader{b: data}
	magic, err := r.take(4, "magic")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotGGUF, err)
	}
	if string(magic) != "GGUF" {
		return nil, fmt.Errorf("magic %q at offset 0: %w (want \"GGUF\")", magic, ErrNotGGUF)
	}
	version, err := r.u32("version")
	if err != nil {
		return nil, err
	}
	if version != 2 && version != 3 {
		if sw := bits.ReverseBytes32(version); sw >= 1 && sw <= 3 {
			return nil, fmt.Errorf("version at offset 4 is %#08x, version %d byte-swapped: big-endian GGUF files are not supported", version, sw)
		}
		return nil, fmt.Errorf("unsupported version %d at offset 4 (want 2 or 3)", version)
	}
	nTensors, err := r.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nKVs, err := r.u64("KV count")
	if err != nil {
		return nil, err
	}
	if nTensors > r.left()/minTensorInfoBytes {
		return nil, fmt.Errorf("tensor count %d at offset 8: the %d bytes left hold at most %d tensor infos: %w",
			nTensors, r.left(), r.left()/minTensorInfoBytes, ErrTruncated)
	}
	if kvRoom := r.left() - nTensors*minTensorInfoBytes; nKVs > kvRoom/minKVBytes {
		return nil, fmt.Errorf("KV count %d at offset 16: the %d bytes left (after %d tensor infos) hold at most %d KVs: %w",
			nKVs, kvRoom, nTensors, kvRoom/minKVBytes, ErrTruncated)
	}
	f := &File{Version: version, Alignment: DefaultAlignment, data: data, size: int64(len(data))}
	if err := f.parseKVs(r, nKVs); err != nil {
		return nil, err
	}
	if err := f.parseTensorInfos(r, nTensors); err != nil {
		return nil, err
	}
	if err := f.checkTensorData(uint64(r.off)); err != nil {
		return nil, err
	}
	return f, nil
}

// parseKVs reads n KVs in two passes. The first validates them all and allocates
// nothing, so a count or length the file does not back costs no memory; the second
// stores exactly what the first found, with every key in one allocation.
func (f *File) parseKVs(r *reader, n uint64) error {
	start, keyBytes := r.off, 0
	for i := range n {
		key, _, err := r.kv(i)
		if err != nil {
			return err
		}
		keyBytes += len(key)
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("KV count %d: more than %d are not supported", n, math.MaxInt32)
	}
	r.off = start
	f.KVs = make([]KV, n)
	f.byKey = make([]int32, n) // key lengths for now
	var keys strings.Builder
	keys.Grow(keyBytes)
	for i := range f.KVs {
		key, v, _ := r.kv(uint64(i)) // cannot fail: the first pass read the same bytes
		keys.Write(key)
		f.KVs[i].Value = v
		f.byKey[i] = int32(len(key))
	}
	all, off := keys.String(), 0
	for i := range f.KVs {
		end := off + int(f.byKey[i])
		f.KVs[i].Key = all[off:end]
		off = end
	}
	f.byKey = sortedIndex(f.byKey, func(i int32) string { return f.KVs[i].Key })
	for j := 1; j < len(f.byKey); j++ {
		a, b := f.byKey[j-1], f.byKey[j]
		if f.KVs[a].Key == f.KVs[b].Key {
			return fmt.Errorf("key %q: duplicate (KVs %d and %d)", f.KVs[a].Key, min(a, b), max(a, b))
		}
	}
	if v, ok := f.Lookup(KeyAlignment); ok {
		if v.Type != TypeUint32 {
			return fmt.Errorf("key %q: has type %s, want uint32", KeyAlignment, v.TypeName())
		}
		a, _ := v.Uint()
		if a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("key %q: alignment %d is not a non-zero power of two", KeyAlignment, a)
		}
		f.Alignment = a
	}
	return nil
}

// kv reads KV number i: its key and its value.
func (r *reader) kv(i uint64) ([]byte, Value, error) {
	start := r.off
	key, err := r.str("key", MaxKeyLen)
	if err != nil {
		return nil, Value{}, fmt.Errorf("KV %d: %w", i, err)
	}
	if len(key) == 0 {
		return nil, Value{}, fmt.Errorf("KV %d at offset %d: empty key", i, start)
	}
	t, err := r.u32("value type")
	var v Value
	if err == nil {
		v, err = r.value(ValueType(t), 0)
	}
	if err != nil {
		return nil, Value{}, fmt.Errorf("key %q at offset %d: %w", key, start, err)
	}
	return key, v, nil
}

// sortedIndex overwrites idx with 0..len(idx)-1 sorted by name.
func sortedIndex(idx []int32, name func(int32) string) []int32 {
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := strings.Compare(name(a), name(b)); c != 0 {
			return c
		}
		return int(a - b)
	})
	return idx
}

// parseTensorInfos reads n tensor infos in two passes, like parseKVs: validate, then
// store, with all names in one allocation and all dims in another.
func (f *File) parseTensorInfos(r *reader, n uint64) error {
	start, nameBytes, nDims := r.off, 0, 0
	var scratch TensorInfo
	var dims [MaxDims]uint64
	for i := range n {
		name, err := r.tensorInfo(i, f.Alignment, &scratch, dims[:0])
		if err != nil {
			return err
		}
		nameBytes += len(name)
		nDims += len(scratch.Dims)
	}
	if n > math.MaxInt32 {
		return fmt.Errorf("tensor count %d: more than %d are not supported", n, math.MaxInt32)
	}
	r.off = start
	f.Tensors = make([]TensorInfo, n)
	f.byName = make([]int32, n) // name lengths for now
	pool := make([]uint64, 0, nDims)
	var names strings.Builder
	names.Grow(nameBytes)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		name, _ := r.tensorInfo(uint64(i), f.Alignment, t, pool[len(pool):]) // cannot fail now
		pool = pool[:len(pool)+len(t.Dims)]
		names.Write(name)
		f.byName[i] = int32(len(name))
	}
	all, off := names.String(), 0
	for i := range f.Tensors {
		end := off + int(f.byName[i])
		f.Tensors[i].Name = all[off:end]
		off = end
	}
	f.byName = sortedIndex(f.byName, func(i int32) string { return f.Tensors[i].Name })
	for j := 1; j < len(f.byName); j++ {
		a, b := f.byName[j-1], f.byName[j]
		if f.Tensors[a].Name == f.Tensors[b].Name {
			return fmt.Errorf("tensor %q: duplicate name (tensors %d and %d)", f.Tensors[a].Name, min(a, b), max(a, b))
		}
	}
	return nil
}

// tensorInfo reads tensor info number i into t, its dims appended to dims (which must
// have room for them), and returns the name.
func (r *reader) tensorInfo(i, alignment uint64, t *TensorInfo, dims []uint64) ([]byte, error) {
	start := r.off
	name, err := r.str("tensor name", MaxNameLen)
	if err != nil {
		return nil, fmt.Errorf("tensor %d: %w", i, err)
	}
	if len(name) == 0 {
		return nil, fmt.Errorf("tensor %d at offset %d: empty name", i, start)
	}
	if err := t.read(r, alignment, dims); err != nil {
		return nil, fmt.Errorf("tensor %q at offset %d: %w", name, start, err)
	}
	return name, nil
}

// read reads the rest of a tensor info (after the name) and validates its shape, type
// and offset. Its dims are appended to dims, which must have room for them.
func (t *TensorInfo) read(r *reader, alignment uint64, dims []uint64) error {
	at := r.off
	nd, err := r.u32("n_dims")
	if err != nil {
		return err
	}
	if nd < 1 || nd > MaxDims {
		return fmt.Errorf("n_dims %d at offset %d: want 1..%d", nd, at, MaxDims)
	}
	elements := uint64(1)
	for d := range nd {
		at = r.off
		ne, err := r.u64("dim")
		if err != nil {
			return err
		}
		if ne == 0 {
			return fmt.Errorf("dim %d at offset %d is 0", d, at)
		}
		hi, lo := bits.Mul64(elements, ne)
		if hi != 0 || lo > math.MaxInt64 {
			return fmt.Errorf("dim %d at offset %d: %d: the element count overflows", d, at, ne)
		}
		elements = lo
		dims = append(dims, ne)
	}
	t.Dims = dims[:nd:nd]
	t.Elements = elements
	at = r.off
	typ, err := r.u32("type")
	if err != nil {
		return err
	}
	t.Type = quant.Type(typ)
	if !t.Type.Known() {
		return fmt.Errorf("type at offset %d: unknown tensor type id %d", at, typ)
	}
	if bs := uint64(t.Type.BlockSize()); t.Dims[0]%bs != 0 {
		return fmt.Errorf("row length %d is not a multiple of the %v block size %d", t.Dims[0], t.Type, bs)
	}
	if t.Size, err = quant.RowBytes(t.Type, elements); err != nil {
		return fmt.Errorf("shape %v: %w", t.Dims, err)
	}
	at = r.off
	if t.Offset, err = r.u64("offset"); err != nil {
		return err
	}
	if t.Offset%alignment != 0 {
		return fmt.Errorf("offset %d (at %d) is not a multiple of the alignment %d", t.Offset, at, alignment)
	}
	return nil
}

// checkTensorData places the data section after the metadata that ends at metaEnd and
// checks that every tensor's data lies inside the file and overlaps no other tensor's.
func (f *File) checkTensorData(metaEnd uint64) error {
	f.metaEnd = metaEnd
	f.DataOffset = alignUp(metaEnd, f.Alignment)
	if len(f.Tensors) == 0 {
		return nil // vocab-only files may end right after the metadata, unpadded
	}
	size := uint64(len(f.data))
	if f.DataOffset > size {
		return fmt.Errorf("data section at offset %d lies beyond the end of the file (%d bytes): %w", f.DataOffset, size, ErrTruncated)
	}
	room := size - f.DataOffset
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset >= room {
			return fmt.Errorf("tensor %q: offset %d is beyond the end of the file (the data section at offset %d holds %d bytes): %w",
				t.Name, t.Offset, f.DataOffset, room, ErrTruncated)
		}
		if t.Size > room-t.Offset {
			return fmt.Errorf("tensor %q: %d bytes of data at offset %d run past the end of the file (%d bytes): %w",
				t.Name, t.Size, f.DataOffset+t.Offset, size, ErrTruncated)
		}
	}
	idx := make([]int, len(f.Tensors))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		oa, ob := f.Tensors[a].Offset, f.Tensors[b].Offset
		switch {
		case oa < ob:
			return -1
		case oa > ob:
			return 1
		}
		return a - b
	})
	for j := 1; j < len(idx); j++ {
		a, b := &f.Tensors[idx[j-1]], &f.Tensors[idx[j]]
		if a.Offset+a.Size > b.Offset {
			return fmt.Errorf("tensors %q and %q overlap: data [%d, %d) and [%d, %d)",
				a.Name, b.Name, a.Offset, a.Offset+a.Size, b.Offset, b.Offset+b.Size)
		}
	}
	return nil
}

// alignUp rounds x up to a multiple of the power of two a; x is at most a file size, so
// the sum cannot overflow.
func alignUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }
