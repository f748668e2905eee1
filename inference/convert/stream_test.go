package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"ember/inference/gguf"
	"ember/inference/quant"
)

// TestStreamWriterMatchesWriter: the streaming writer's output is gguf.Writer's, for
// several alignments, tensor counts and write sizes, and gguf reads it back.
func TestStreamWriterMatchesWriter(t *testing.T) {
	for _, tc := range []struct {
		align   uint32 // 0: no general.alignment key
		tensors int
		piece   int // bytes per Write call
	}{{0, 0, 1}, {0, 1, 7}, {0, 5, 1 << 20}, {64, 3, 5}, {1, 4, 3}, {4096, 2, 100}} {
		t.Run(fmt.Sprintf("align%d_tensors%d_piece%d", tc.align, tc.tensors, tc.piece), func(t *testing.T) {
			w := gguf.NewWriter()
			w.AddKV("general.architecture", "llama")
			if tc.align != 0 {
				w.AddKV(gguf.KeyAlignment, tc.align)
			}
			w.AddKV("x.list", []string{"a", "bc"})
			var descs []TensorDesc
			var datas [][]byte
			types := []quant.Type{quant.F32, quant.Q4_K, quant.F16, quant.Q8_0, quant.Q6_K}
			for i := range tc.tensors {
				typ := types[i%len(types)]
				dims := []uint64{uint64(typ.BlockSize() * (i + 1)), uint64(i + 2)}
				n, _ := quant.RowBytes(typ, dims[0]*dims[1])
				data := make([]byte, n)
				for j := range data {
					data[j] = byte(i*31 + j)
				}
				name := fmt.Sprintf("t%d.weight", i)
				if err := w.AddTensor(name, typ, dims, data); err != nil {
					t.Fatal(err)
				}
				descs = append(descs, TensorDesc{Name: name, Dims: dims, Type: typ})
				datas = append(datas, data)
			}
			var want, got bytes.Buffer
			if _, err := w.WriteTo(&want); err != nil {
				t.Fatal(err)
			}
			sw, err := NewStreamWriter(&got, w.KVs(), descs)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range datas {
				if sw.Tensor() != i {
					t.Fatalf("Tensor() = %d, want %d", sw.Tensor(), i)
				}
				for off := 0; off < len(d); off += tc.piece {
					if _, err := sw.Write(d[off:min(off+tc.piece, len(d))]); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := sw.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("differs from gguf.Writer (%d vs %d bytes)", got.Len(), want.Len())
			}
			if _, err := gguf.Parse(got.Bytes()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestStreamWriterErrors(t *testing.T) {
	descs := []TensorDesc{{Name: "a", Dims: []uint64{32}, Type: quant.Q8_0}, {Name: "b", Dims: []uint64{4}, Type: quant.F32}}
	sw, err := NewStreamWriter(io.Discard, nil, descs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Write(make([]byte, 35)); err == nil || !strings.Contains(err.Error(), `tensor "a": 35 bytes written, only 34 left`) {
		t.Errorf("overlong write: %v", err)
	}
	sw.Write(make([]byte, 34))
	if err := sw.Close(); err == nil || !strings.Contains(err.Error(), `tensor "b": 16 of its 16 bytes missing`) {
		t.Errorf("early close: %v", err)
	}
	sw.Write(make([]byte, 16))
	if _, err := sw.Write([]byte{1}); err == nil {
		t.Error("write past the end accepted")
	}
	for _, bad := range [][]TensorDesc{
		{{Name: "a", Dims: []uint64{33}, Type: quant.Q8_0}},
		{{Name: "a", Dims: []uint64{0}, Type: quant.F32}},
		{{Name: "", Dims: []uint64{1}, Type: quant.F32}},
		{{Name: "a", Dims: []uint64{1, 1, 1, 1, 1}, Type: quant.F32}},
		{{Name: "a", Dims: []uint64{1}, Type: 99}},
		{{Name: "a", Dims: []uint64{1}, Type: quant.F32}, {Name: "a", Dims: []uint64{1}, Type: quant.F32}},
	} {
		if _, err := NewStreamWriter(io.Discard, nil, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// fullDisk fails with ENOSPC once n bytes were written, like a full file system.
type fullDisk struct {
	w io.Writer
	n int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) > d.n {
		k, _ := d.w.Write(p[:d.n])
		d.n = 0
		return k, &os.PathError{Op: "write", Path: "out", Err: syscall.ENOSPC}
	}
	d.n -= len(p)
	return d.w.Write(p)
}

// TestQuantizeDiskFull: a write error part way leaves no output and no temporary file,
// and the error says why.
func TestQuantizeDiskFull(t *testing.T) {
	defer func(f func(*AtomicFile) io.Writer) { outputWriter = f }(outputWriter)
	outputWriter = func(f *AtomicFile) io.Writer { return &fullDisk{w: f, n: 300 << 10} }
	dir := t.TempDir()
	out := filepath.Join(dir, "out.gguf")
	_, err := QuantizeFile(context.Background(), filepath.Join(goldenDir, "llama-tiny-f32.gguf"), out, Options{Type: mustFT(t, "Q8_0")})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("error %v, want ENOSPC", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestPlanRules covers rules the llama.cpp golden's models do not reach.
func TestPlanRules(t *testing.T) {
	d := func(name string, dims ...uint64) TensorDesc {
		return TensorDesc{Name: name, Dims: dims, Type: quant.F16}
	}
	for _, tc := range []struct {
		name string
		m    Model
		ft   string
		ts   []TensorDesc
		want []quant.Type
	}{
		{"70B llama: attn_v Q4_K (GQA 8) -> Q5_K", Model{Arch: "llama", NLayer: 80, NHead: 64, NHeadKV: 8}, "Q2_K",
			[]TensorDesc{d("blk.1.attn_v.weight", 8192, 1024), d("output.weight", 8192, 10)},
			[]quant.Type{quant.Q5_K, quant.Q6_K}},
		{"65B llama (no GQA) is not 70B", Model{Arch: "llama", NLayer: 80, NHead: 64, NHeadKV: 64}, "Q4_K_S",
			[]TensorDesc{d("blk.9.attn_v.weight", 256, 256), d("blk.8.attn_v.weight", 256, 256), d("blk.7.attn_v.weight", 256, 256),
				d("blk.6.attn_v.weight", 256, 256), d("blk.5.attn_v.weight", 256, 256)},
			[]quant.Type{quant.Q4_K, quant.Q5_K, quant.Q5_K, quant.Q5_K, quant.Q5_K}},
		{"falcon: output Q8_0", Model{Arch: "falcon", NLayer: 2, NHead: 4, NHeadKV: 4}, "Q4_K_M",
			[]TensorDesc{d("output.weight", 256, 10), d("token_embd.weight", 256, 10)},
			[]quant.Type{quant.Q8_0, quant.Q4_K}},
		{"fused attn_qkv counts as attn_v", Model{Arch: "phi3", NLayer: 2, NHead: 4, NHeadKV: 4}, "Q5_K_M",
			[]TensorDesc{d("blk.0.attn_qkv.weight", 256, 768), d("blk.1.attn_qkv.weight", 256, 768)},
			[]quant.Type{quant.Q5_K, quant.Q6_K}},
		{"kept: 1-D, norms, router, bias, trailing-1 dims", Model{Arch: "llama", NLayer: 1, NHead: 1}, "Q4_0",
			[]TensorDesc{d("blk.0.ffn_gate_inp.weight", 256, 8), d("blk.0.attn_norm.weight", 256), d("x_norm.weight", 256, 4),
				d("blk.0.attn_q.bias", 256, 2), d("blk.0.attn_q.weight", 256, 1), d("position_embd.weight", 256, 8)},
			[]quant.Type{quant.F16, quant.F16, quant.F16, quant.F16, quant.F16, quant.F16}},
		{"F16 mix: every weight F16, norms kept", Model{Arch: "llama", NLayer: 1, NHead: 1}, "F16",
			[]TensorDesc{{Name: "blk.0.ffn_up.weight", Dims: []uint64{100, 3}, Type: quant.F32}, {Name: "blk.0.ffn_norm.weight", Dims: []uint64{100}, Type: quant.F32}},
			[]quant.Type{quant.F16, quant.F32}},
		{"fallback to F16 when no 32-block fits", Model{Arch: "llama", NLayer: 1, NHead: 1}, "Q4_K_M",
			[]TensorDesc{d("blk.0.attn_q.weight", 48, 8)},
			[]quant.Type{quant.F16}},
	} {
		types, _, err := Plan(tc.m, mustFT(t, tc.ft), tc.ts)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if fmt.Sprint(types) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, types, tc.want)
		}
	}
	for _, tc := range []struct {
		m    Model
		ts   []TensorDesc
		want string
	}{
		{Model{Arch: "llama", NLayer: 1}, []TensorDesc{d("blk.0.attn_q.weight", 48, 8)}, "no fallback"}, // Q8_0
		{Model{Arch: "mixtral", NLayer: 2, NExpert: 8}, []TensorDesc{d("ffn_down_exps.weight", 256, 8, 8)}, "cannot tell its layer"},
		{Model{Arch: "mixtral", NLayer: 2, NExpert: 8}, []TensorDesc{d("blk.7.ffn_down_exps.weight", 256, 8, 8)}, "outside the model's 2 layers"},
	} {
		ft := mustFT(t, "Q4_K_M")
		if tc.want == "no fallback" {
			ft = mustFT(t, "Q8_0")
		}
		if _, _, err := Plan(tc.m, ft, tc.ts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.ts, err, tc.want)
		}
	}
}

func TestLlamaOrder(t *testing.T) {
	names := []string{"blk.10.a", "output.weight", "blk.2.b", "blk.2.a", "token_embd.weight", "blk.x.c", "blk.-1.z"}
	var got []string
	for _, i := range LlamaOrder(names) {
		got = append(got, names[i])
	}
	want := "blk.-1.z blk.x.c output.weight token_embd.weight blk.2.a blk.2.b blk.10.a"
	if strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}
