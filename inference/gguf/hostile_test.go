package gguf

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the hostile corpus in testdata/hostile")

const hostileDir = "../../testdata/hostile"

// allocSlack is how much Parse may allocate beyond the size of the file it parses.
const allocSlack = 64 << 10

type hostileCase struct {
	name string // corpus file name, without .gguf
	desc string // one line for the corpus README
	make func(t testing.TB) []byte
	want []string // substrings the error must contain
}

// patch corrupts the base file: x is written at the mark plus delta.
func patch(mark string, delta int, x any) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		fb := baseFile()
		return withPatch(fb.b, fb.at(t, mark)+delta, x)
	}
}

// deepArray is a file whose one KV nests arrays depth levels deep.
func deepArray(depth int) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		fb := newBuilder()
		fb.b = append(fb.b, "GGUF"...)
		fb.u32(3)
		fb.u64(0)
		fb.u64(1)
		fb.str("test.deep")
		fb.u32(uint32(TypeArray))
		for range depth - 1 {
			fb.u32(uint32(TypeArray))
			fb.u64(1)
		}
		fb.u32(uint32(TypeUint8))
		fb.u64(1)
		fb.u8(7)
		return fb.b
	}
}

var hostileCases = []hostileCase{
	{"bad-magic", `magic "GGML"`, patch("magic", 0, "GGML"), []string{"magic", "not a GGUF file"}},
	{"version-0", "version 0", patch("version", 0, uint32(0)), []string{"unsupported version 0"}},
	{"version-1", "version 1 (GGUF v1, 32-bit counts)", patch("version", 0, uint32(1)), []string{"unsupported version 1 at offset 4"}},
	{"version-99", "version 99", patch("version", 0, uint32(99)), []string{"unsupported version 99"}},
	{"version-3-byteswapped", "version 3 stored big-endian", patch("version", 0, uint32(3<<24)), []string{"big-endian", "version 3 byte-swapped"}},
	{"tensor-count-2p62", "tensor count 2^62", patch("n_tensors", 0, uint64(1)<<62), []string{"tensor count 4611686018427387904"}},
	{"kv-count-2p62", "KV count 2^62", patch("n_kvs", 0, uint64(1)<<62), []string{"KV count 4611686018427387904"}},
	{"key-length-2p40", "first key's length 2^40", patch("kv.arch", 0, uint64(1)<<40), []string{"KV 0", "key", "length 1099511627776 exceeds the limit of 65535"}},
	{"key-too-long", "first key's length 70000 > 65535", patch("kv.arch", 0, uint64(70000)), []string{"KV 0", "length 70000 exceeds the limit"}},
	{"key-empty", "first key's length 0", patch("kv.arch", 0, uint64(0)), []string{"KV 0", "empty key"}},
	{"key-duplicate", "test.flag renamed test.ints", patch("kv.flag", 8, "test.ints"), []string{`key "test.ints": duplicate`}},
	{"string-length-beyond-file", "general.architecture value length 2^40", patch("kv.arch.value", 0, uint64(1)<<40), []string{`key "general.architecture"`, "string at offset", "runs past the end"}},
	{"array-count-2p60", "test.ints array count 2^60", patch("kv.ints.count", 0, uint64(1)<<60), []string{`key "test.ints"`, "array length 1152921504606846976"}},
	{"string-array-count-2p60", "test.strings array count 2^60", patch("kv.strings.count", 0, uint64(1)<<60), []string{`key "test.strings"`, "array length 1152921504606846976"}},
	{"string-element-length", "test.strings element 0 length 2^40", patch("kv.strings.0", 0, uint64(1)<<40), []string{`key "test.strings"`, "element 0", "length 1099511627776 runs past the end"}},
	{"nested-array-count-2p60", "test.nested element 0 count 2^60", patch("kv.nested.0.count", 0, uint64(1)<<60), []string{`key "test.nested"`, "element 0", "array length 1152921504606846976"}},
	{"nested-outer-count-2p60", "test.nested outer count 2^60", patch("kv.nested.count", 0, uint64(1)<<60), []string{`key "test.nested"`, "array length 1152921504606846976"}},
	{"nested-too-deep", "arrays nested 9 deep (limit 8)", deepArray(9), []string{`key "test.deep"`, "nested more than 8 deep"}},
	{"unknown-value-type", "general.architecture value type 13", patch("kv.arch.type", 0, uint32(13)), []string{`key "general.architecture"`, "unknown value type id 13"}},
	{"unknown-element-type", "test.ints element type 99", patch("kv.ints.elemtype", 0, uint32(99)), []string{`key "test.ints"`, "unknown value type id 99"}},
	{"bool-2", "test.flag bool value 2", patch("kv.flag.value", 0, "\x02"), []string{`key "test.flag"`, "neither 0 nor 1"}},
	{"alignment-0", "general.alignment 0", patch("kv.align.value", 0, uint32(0)), []string{`key "general.alignment"`, "alignment 0 is not a non-zero power of two"}},
	{"alignment-3", "general.alignment 3", patch("kv.align.value", 0, uint32(3)), []string{`key "general.alignment"`, "alignment 3 is not a non-zero power of two"}},
	{"alignment-int32", "general.alignment stored as int32", patch("kv.align.type", 0, uint32(TypeInt32)), []string{`key "general.alignment"`, "has type int32, want uint32"}},
	{"tensor-name-empty", "tensor 0 name length 0", patch("t0", 0, uint64(0)), []string{"tensor 0", "empty name"}},
	{"tensor-name-too-long", "tensor 0 name length 70000", patch("t0", 0, uint64(70000)), []string{"tensor 0", "length 70000 exceeds the limit of 65536"}},
	{"tensor-duplicate-name", "tensor 1 renamed like tensor 0", patch("t1", 8, baseT0), []string{`tensor "blk.0.a": duplicate name`}},
	{"tensor-unknown-type-4", "tensor type id 4 (removed Q4_2)", patch("t0.type", 0, uint32(4)), []string{`tensor "blk.0.a"`, "unknown tensor type id 4"}},
	{"tensor-unknown-type-99", "tensor type id 99", patch("t0.type", 0, uint32(99)), []string{`tensor "blk.0.a"`, "unknown tensor type id 99"}},
	{"tensor-ndims-0", "tensor n_dims 0", patch("t0.ndims", 0, uint32(0)), []string{`tensor "blk.0.a"`, "n_dims 0"}},
	{"tensor-ndims-5", "tensor n_dims 5", patch("t0.ndims", 0, uint32(5)), []string{`tensor "blk.0.a"`, "n_dims 5"}},
	{"tensor-dim-0", "tensor dim 1 is 0", patch("t0.dim1", 0, uint64(0)), []string{`tensor "blk.0.a"`, "dim 1", "is 0"}},
	{"tensor-dims-overflow", "tensor dims 2^32 x 2^32 overflow uint64", func(t testing.TB) []byte {
		fb := baseFile()
		b := withPatch(fb.b, fb.at(t, "t0.dim0"), uint64(1)<<32)
		return withPatch(b, fb.at(t, "t0.dim1"), uint64(1)<<32)
	}, []string{`tensor "blk.0.a"`, "dim 1", "overflows"}},
	{"tensor-row-not-blocks", "Q8_0 tensor with a row of 16", patch("t1.dim0", 0, uint64(16)), []string{`tensor "blk.0.b"`, "row length 16 is not a multiple of the Q8_0 block size 32"}},
	{"tensor-misaligned", "tensor offset 4 with alignment 32", patch("t1.offset", 0, uint64(4)), []string{`tensor "blk.0.b"`, "offset 4", "not a multiple of the alignment 32"}},
	{"tensor-offset-beyond-file", "tensor offset 2^40", patch("t2.offset", 0, uint64(1)<<40), []string{`tensor "output.weight"`, "offset 1099511627776 is beyond the end of the file"}},
	{"tensor-data-past-end", "last tensor grown to 32 F16 so its data runs past the end", patch("t2.dim0", 0, uint64(32)), []string{`tensor "output.weight"`, "run past the end of the file"}},
	{"tensor-overlap", "tensor 1 moved onto tensor 0's data", patch("t1.offset", 0, uint64(32)), []string{`tensors "blk.0.a" and "blk.0.b" overlap`}},
	{"tensor-same-offset", "tensor 2 at tensor 1's offset", patch("t2.offset", 0, uint64(64)), []string{"overlap", `"blk.0.b"`, `"output.weight"`}},
}

// allocDuring returns the bytes allocated while f runs.
func allocDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// mustRefuse parses b and checks that it fails with all of want in the message, without
// allocating more than the file size plus allocSlack.
func mustRefuse(t *testing.T, b []byte, want ...string) error {
	t.Helper()
	var f *File
	var err error
	alloc := allocDuring(func() { f, err = Parse(b[:len(b):len(b)]) })
	if err == nil {
		t.Fatalf("Parse accepted the file (%d tensors, %d KVs)", len(f.Tensors), len(f.KVs))
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "gguf: ") {
		t.Errorf("error %q does not start with \"gguf: \"", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
	if alloc > uint64(len(b))+allocSlack {
		t.Errorf("Parse allocated %d bytes for a %d-byte file", alloc, len(b))
	}
	return err
}

func TestBaseFileIsValid(t *testing.T) {
	fb := baseFile()
	f, err := Parse(fb.b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 3 || len(f.KVs) != 6 || f.DataOffset != uint64(fb.at(t, "data")) {
		t.Fatalf("got %d tensors, %d KVs, data at %d", len(f.Tensors), len(f.KVs), f.DataOffset)
	}
	nested, err := f.Array("test.nested")
	if err != nil || len(nested) != 2 {
		t.Fatalf("test.nested: %v %v", nested, err)
	}
	if s, ok := nested[0].Strings(); !ok || !slices.Equal(s, []string{"x"}) {
		t.Errorf("test.nested[0] = %v", s)
	}
	v2, err := Parse(withPatch(fb.b, fb.at(t, "version"), uint32(2)))
	if err != nil || v2.Version != 2 {
		t.Errorf("version 2: %v", err)
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		d := f.TensorData(ti)
		if uint64(len(d)) != ti.Size || d[0] != uint8(i*31) {
			t.Errorf("tensor %q: %d bytes starting %d", ti.Name, len(d), d[0])
		}
	}
}

func TestHostile(t *testing.T) {
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			mustRefuse(t, c.make(t), c.want...)
		})
	}
}

// TestTruncated cuts valid files at every byte: each cut must fail with ErrTruncated,
// except cuts in the padding after the last tensor's data.
func TestTruncated(t *testing.T) {
	w := NewWriter()
	must(t, w.AddKV("general.architecture", "llama"))
	must(t, w.AddKV("tokenizer.ggml.tokens", []string{"<unk>", "a", ""}))
	must(t, w.AddKV("tokenizer.ggml.scores", []float32{0, -1, -2}))
	var vocab bytes.Buffer
	if _, err := w.WriteTo(&vocab); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"base": baseFile().b, "vocab-only": vocab.Bytes()}
	for name, b := range files {
		t.Run(name, func(t *testing.T) {
			f, err := Parse(b)
			if err != nil {
				t.Fatalf("the whole file: %v", err)
			}
			end := f.metaEnd // the last byte the file needs; the padding after it is optional
			for _, ti := range f.Tensors {
				end = max(end, f.DataOffset+ti.Offset+ti.Size)
			}
			for cut := int(end); cut < len(b); cut++ {
				if _, err := Parse(b[:cut:cut]); err != nil {
					t.Fatalf("cut at %d, in the final padding: %v", cut, err)
				}
			}
			for cut := range int(end) {
				err := mustRefuse(t, b[:cut])
				if !errors.Is(err, ErrTruncated) {
					t.Fatalf("cut at %d: %v is not ErrTruncated", cut, err)
				}
				if cut < 4 && !errors.Is(err, ErrNotGGUF) {
					t.Fatalf("cut at %d: %v is not ErrNotGGUF", cut, err)
				}
			}
		})
	}
}

// hostileREADME is the corpus README, generated from hostileCases.
func hostileREADME() string {
	var sb strings.Builder
	sb.WriteString("# Hostile GGUF files\n\n")
	sb.WriteString("Corrupted GGUF files that `inference/gguf` must refuse with a clear error, without\n")
	sb.WriteString("panicking and without allocating more than the file size. Each but nested-too-deep is\n")
	sb.WriteString("a small valid file (`baseFile` in `inference/gguf/build_test.go`) with one field\n")
	sb.WriteString("changed. They are generated by `hostileCases` in `inference/gguf/hostile_test.go`;\n")
	sb.WriteString("refresh them with\n")
	sb.WriteString("`go test ./inference/gguf -run TestHostileCorpus -update`. They also seed `FuzzParse`.\n\n")
	sb.WriteString("| file | corruption | the error mentions |\n|---|---|---|\n")
	for _, c := range hostileCases {
		fmt.Fprintf(&sb, "| `%s.gguf` | %s | %s |\n", c.name, c.desc, "`"+strings.Join(c.want, "`, `")+"`")
	}
	return sb.String()
}

// TestHostileCorpus checks that testdata/hostile holds exactly the generated cases, and
// that Parse and Open refuse each file with the expected message.
func TestHostileCorpus(t *testing.T) {
	if *update {
		must(t, os.MkdirAll(hostileDir, 0o755))
		for _, c := range hostileCases {
			must(t, os.WriteFile(filepath.Join(hostileDir, c.name+".gguf"), c.make(t), 0o644))
		}
		must(t, os.WriteFile(filepath.Join(hostileDir, "README.md"), []byte(hostileREADME()), 0o644))
	}
	readme, err := os.ReadFile(filepath.Join(hostileDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(readme) != hostileREADME() {
		t.Errorf("%s/README.md is stale; run with -update", hostileDir)
	}
	paths, err := filepath.Glob(filepath.Join(hostileDir, "*.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(hostileCases) {
		t.Errorf("%d files in %s, want %d", len(paths), hostileDir, len(hostileCases))
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".gguf")
		i := slices.IndexFunc(hostileCases, func(c hostileCase) bool { return c.name == name })
		if i < 0 {
			t.Errorf("%s: not a known case", p)
			continue
		}
		c := hostileCases[i]
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(p)
			must(t, err)
			if !bytes.Equal(b, c.make(t)) {
				t.Errorf("%s differs from what the test generates; run with -update", p)
			}
			mustRefuse(t, b, c.want...)
			if _, err := Open(p); err == nil || !strings.Contains(err.Error(), p) {
				t.Errorf("Open: %v, want an error naming the file", err)
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
