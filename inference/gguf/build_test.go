package gguf

import (
	"encoding/binary"
	"math"
	"strconv"
	"testing"

	"ember/inference/quant"
)

// fileBuilder writes GGUF bytes by hand, independently of Writer, and remembers where
// each named field starts so that tests can corrupt it.
type fileBuilder struct {
	b     []byte
	marks map[string]int
}

func newBuilder() *fileBuilder { return &fileBuilder{marks: map[string]int{}} }

func (fb *fileBuilder) mark(name string) { fb.marks[name] = len(fb.b) }

func (fb *fileBuilder) u8(x uint8) { fb.b = append(fb.b, x) }
func (fb *fileBuilder) u32(x uint32) {
	fb.b = binary.LittleEndian.AppendUint32(fb.b, x)
}
func (fb *fileBuilder) u64(x uint64) {
	fb.b = binary.LittleEndian.AppendUint64(fb.b, x)
}
func (fb *fileBuilder) str(s string) { fb.u64(uint64(len(s))); fb.b = append(fb.b, s...) }

func (fb *fileBuilder) pad(a int) {
	for len(fb.b)%a != 0 {
		fb.b = append(fb.b, 0)
	}
}

// at returns the offset of a mark, failing the test if it does not exist.
func (fb *fileBuilder) at(t testing.TB, name string) int {
	t.Helper()
	off, ok := fb.marks[name]
	if !ok {
		t.Fatalf("no mark %q", name)
	}
	return off
}

// Names of the tensors in the base file; the first two have names of equal length.
const (
	baseT0 = "blk.0.a"
	baseT1 = "blk.0.b"
	baseT2 = "output.weight"
)

// baseFile builds a small valid file with a mark before every field:
//
//	KVs: general.architecture = "llama" (string), general.alignment = 32 (uint32),
//	     test.ints = [1 2 3] (int32), test.strings = ["ab" "c"], test.nested = [["x"] []]
//	     (array of arrays of strings), test.flag = true.
//	tensors: blk.0.a F32 [8 2], blk.0.b Q8_0 [32 1], output.weight F16 [4].
func baseFile() *fileBuilder {
	fb := newBuilder()
	fb.mark("magic")
	fb.b = append(fb.b, "GGUF"...)
	fb.mark("version")
	fb.u32(3)
	fb.mark("n_tensors")
	fb.u64(3)
	fb.mark("n_kvs")
	fb.u64(6)

	fb.mark("kv.arch")
	fb.str("general.architecture")
	fb.mark("kv.arch.type")
	fb.u32(uint32(TypeString))
	fb.mark("kv.arch.value")
	fb.str("llama")

	fb.mark("kv.align")
	fb.str(KeyAlignment)
	fb.mark("kv.align.type")
	fb.u32(uint32(TypeUint32))
	fb.mark("kv.align.value")
	fb.u32(32)

	fb.mark("kv.ints")
	fb.str("test.ints")
	fb.u32(uint32(TypeArray))
	fb.mark("kv.ints.elemtype")
	fb.u32(uint32(TypeInt32))
	fb.mark("kv.ints.count")
	fb.u64(3)
	for _, x := range []uint32{1, 2, 3} {
		fb.u32(x)
	}

	fb.mark("kv.strings")
	fb.str("test.strings")
	fb.u32(uint32(TypeArray))
	fb.u32(uint32(TypeString))
	fb.mark("kv.strings.count")
	fb.u64(2)
	fb.mark("kv.strings.0")
	fb.str("ab")
	fb.str("c")

	fb.mark("kv.nested")
	fb.str("test.nested")
	fb.u32(uint32(TypeArray))
	fb.u32(uint32(TypeArray))
	fb.mark("kv.nested.count")
	fb.u64(2)
	fb.mark("kv.nested.0.elemtype")
	fb.u32(uint32(TypeString))
	fb.mark("kv.nested.0.count")
	fb.u64(1)
	fb.str("x")
	fb.u32(uint32(TypeString))
	fb.u64(0)

	fb.mark("kv.flag")
	fb.str("test.flag")
	fb.u32(uint32(TypeBool))
	fb.mark("kv.flag.value")
	fb.u8(1)

	type tensor struct {
		name string
		typ  quant.Type
		dims []uint64
	}
	tensors := []tensor{
		{baseT0, quant.F32, []uint64{8, 2}},
		{baseT1, quant.Q8_0, []uint64{32, 1}},
		{baseT2, quant.F16, []uint64{4}},
	}
	var offsets, sizes []uint64
	off := uint64(0)
	for _, t := range tensors {
		n := uint64(1)
		for _, d := range t.dims {
			n *= d
		}
		size, _ := quant.RowBytes(t.typ, n)
		offsets, sizes = append(offsets, off), append(sizes, size)
		off = alignUp(off+size, 32)
	}
	for i, t := range tensors {
		fb.mark("t" + itoa(i))
		fb.str(t.name)
		fb.mark("t" + itoa(i) + ".ndims")
		fb.u32(uint32(len(t.dims)))
		for j, d := range t.dims {
			fb.mark("t" + itoa(i) + ".dim" + itoa(j))
			fb.u64(d)
		}
		fb.mark("t" + itoa(i) + ".type")
		fb.u32(uint32(t.typ))
		fb.mark("t" + itoa(i) + ".offset")
		fb.u64(offsets[i])
	}
	fb.mark("infos.end")
	fb.pad(32)
	fb.mark("data")
	for i := range tensors {
		for k := range sizes[i] {
			fb.u8(uint8(i*31 + int(k)))
		}
		fb.pad(32)
	}
	return fb
}

func itoa(i int) string { return strconv.Itoa(i) }

// withPatch returns a copy of b with x written little-endian at off (x is 4 or 8 bytes).
func withPatch(b []byte, off int, x any) []byte {
	c := append([]byte(nil), b...)
	switch x := x.(type) {
	case uint32:
		binary.LittleEndian.PutUint32(c[off:], x)
	case uint64:
		binary.LittleEndian.PutUint64(c[off:], x)
	case string:
		copy(c[off:], x)
	default:
		panic("withPatch: bad type")
	}
	return c
}

// f32bytes encodes float32s as tensor data.
func f32bytes(xs ...float32) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}
