package gguf

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"ember/inference/quant"
)

const (
	stories = "../../assets/stories260K.gguf"
	vocab   = "../../testdata/vocab/ggml-vocab-llama-spm.gguf"
	q4km    = "../../testdata/golden/llama-tiny-q4_k_m.gguf"
)

func TestRealFiles(t *testing.T) {
	cases := []struct {
		path       string
		tensors    int
		dataOffset uint64
		types      map[quant.Type]int
		uints      map[string]uint64
		tokens     int
		check      func(t *testing.T, f *File)
	}{
		{
			path: stories, tensors: 48, dataOffset: 14176, types: map[quant.Type]int{quant.F32: 48},
			uints: map[string]uint64{"llama.block_count": 5, "llama.embedding_length": 64, "llama.context_length": 2048}, tokens: 512,
			check: func(t *testing.T, f *File) {
				ti, ok := f.Tensor("token_embd.weight")
				if !ok || ti.Dims[0] != 64 || ti.Dims[1] != 512 || ti.Offset != 0 || ti.Elements != 64*512 {
					t.Errorf("token_embd.weight = %+v", ti)
				}
				eps, err := f.Float("llama.attention.layer_norm_rms_epsilon")
				if err != nil || eps <= 0 || eps > 1e-3 {
					t.Errorf("rms epsilon %v, %v", eps, err)
				}
			},
		},
		{
			path: vocab, tensors: 0, types: map[quant.Type]int{}, tokens: 32000,
			uints: map[string]uint64{"tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2},
			check: func(t *testing.T, f *File) {
				if f.Size() != 723869 || f.DataOffset < uint64(f.Size()) {
					t.Errorf("size %d, data offset %d: the file should end right after its metadata", f.Size(), f.DataOffset)
				}
				if add, err := f.Bool("tokenizer.ggml.add_bos_token"); err != nil || !add {
					t.Errorf("add_bos_token %v, %v", add, err)
				}
			},
		},
		{
			path: q4km, tensors: 21, dataOffset: 12896, types: map[quant.Type]int{quant.F32: 5, quant.Q4_K: 13, quant.Q6_K: 3},
			uints: map[string]uint64{"general.alignment": 32, "llama.block_count": 2}, tokens: 512,
			check: func(t *testing.T, f *File) {
				for name, want := range map[string]quant.Type{
					"token_embd.weight": quant.Q4_K, "blk.0.attn_norm.weight": quant.F32, "blk.0.attn_q.weight": quant.Q4_K,
				} {
					if ti, ok := f.Tensor(name); !ok || ti.Type != want {
						t.Errorf("tensor %q: %+v, want type %v", name, ti, want)
					}
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			f, err := Open(c.path)
			must(t, err)
			defer f.Close()
			if f.Version != 3 || len(f.Tensors) != c.tensors || (c.tensors > 0 && f.DataOffset != c.dataOffset) {
				t.Errorf("version %d, %d tensors, data at %d", f.Version, len(f.Tensors), f.DataOffset)
			}
			if f.Architecture() != "llama" {
				t.Errorf("architecture %q", f.Architecture())
			}
			types := map[quant.Type]int{}
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				types[ti.Type]++
				if d := f.TensorData(ti); uint64(len(d)) != ti.Size || ti.Offset%f.Alignment != 0 {
					t.Errorf("tensor %q: %d bytes of data, size %d, offset %d", ti.Name, len(d), ti.Size, ti.Offset)
				}
			}
			if len(types) != len(c.types) {
				t.Errorf("tensor types %v, want %v", types, c.types)
			}
			for typ, n := range c.types {
				if types[typ] != n {
					t.Errorf("tensor types %v, want %v", types, c.types)
				}
			}
			for key, want := range c.uints {
				if got, err := f.Uint(key); err != nil || got != want {
					t.Errorf("%s = %d, %v; want %d", key, got, err, want)
				}
			}
			toks, err := f.Strings("tokenizer.ggml.tokens")
			must(t, err)
			scores, err := f.Float32s("tokenizer.ggml.scores")
			must(t, err)
			ttypes, err := f.Int32s("tokenizer.ggml.token_type")
			must(t, err)
			if len(toks) != c.tokens || len(scores) != c.tokens || len(ttypes) != c.tokens {
				t.Errorf("%d tokens, %d scores, %d token types; want %d", len(toks), len(scores), len(ttypes), c.tokens)
			}
			c.check(t, f)

			// Parse over memory agrees, and allocates little beyond the file.
			b, err := os.ReadFile(c.path)
			must(t, err)
			var g *File
			alloc := allocDuring(func() { g, err = Parse(b) })
			must(t, err)
			if alloc > uint64(len(b))/4+allocSlack {
				t.Errorf("Parse allocated %d bytes for a %d-byte file", alloc, len(b))
			}
			if len(g.KVs) != len(f.KVs) || len(g.Tensors) != len(f.Tensors) || g.DataOffset != f.DataOffset {
				t.Errorf("Parse and Open disagree")
			}

			// Our writer reproduces the llama.cpp file byte for byte.
			w := NewWriter()
			must(t, w.CopyKVsFrom(f))
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				must(t, w.AddTensor(ti.Name, ti.Type, ti.Dims, f.TensorData(ti)))
			}
			if out := writeFile(t, w); !bytes.Equal(out, b) {
				t.Errorf("rewritten file differs: %d bytes, want %d", len(out), len(b))
			}
		})
	}
}

func TestOpenClose(t *testing.T) {
	f, err := Open(stories)
	must(t, err)
	abs, err := filepath.Abs(stories)
	must(t, err)
	if runtime.GOOS == "linux" && !mapped(t, abs) {
		t.Errorf("%s is not in /proc/self/maps while open", abs)
	}
	ti, _ := f.Tensor("output_norm.weight")
	if len(f.TensorData(ti)) != 256 {
		t.Fatalf("TensorData: %d bytes", len(f.TensorData(ti)))
	}
	must(t, f.Close())
	if runtime.GOOS == "linux" && mapped(t, abs) {
		t.Errorf("%s is still mapped after Close", abs)
	}
	if f.TensorData(ti) != nil {
		t.Error("TensorData after Close is not nil")
	}
	// Metadata outlives the mapping.
	if n, err := f.Uint("llama.block_count"); err != nil || n != 5 {
		t.Errorf("block_count after Close: %d, %v", n, err)
	}
	if toks, err := f.Strings("tokenizer.ggml.tokens"); err != nil || len(toks) != 512 {
		t.Errorf("tokens after Close: %d, %v", len(toks), err)
	}
	must(t, f.Close()) // twice is fine
}

// mapped reports whether path appears in this process's memory map.
func mapped(t *testing.T, path string) bool {
	maps, err := os.ReadFile("/proc/self/maps")
	must(t, err)
	return bytes.Contains(maps, []byte(path))
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gguf")
	must(t, os.WriteFile(empty, nil, 0o644))
	cases := []struct {
		path string
		want string
		is   error
	}{
		{filepath.Join(dir, "missing.gguf"), "missing.gguf", fs.ErrNotExist},
		{dir, "is a directory", nil},
		{empty, "empty.gguf", ErrTruncated},
		{"../../testdata/vocab/ggml-vocab-llama-spm.gguf.inp", "not a GGUF file", ErrNotGGUF},
	}
	for _, c := range cases {
		f, err := Open(c.path)
		if err == nil {
			f.Close()
			t.Errorf("Open(%s) succeeded", c.path)
			continue
		}
		if !strings.HasPrefix(err.Error(), "gguf: ") || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("Open(%s): %v, want an error mentioning %q", c.path, err, c.want)
		}
	}
}
