package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ember/inference/gguf"
	"ember/inference/quant"
)

const goldenDir = "../../testdata/golden"

// TestPlanMatchesLlamaCpp checks the type of every tensor of every llama.cpp output in
// the golden file (5 models x up to 14 mixes: GQA, tied embeddings, 16 layers, MoE,
// row-length fallbacks) against Plan, and the tensor order against LlamaOrder.
func TestPlanMatchesLlamaCpp(t *testing.T) {
	for _, c := range LoadLlamaCppGolden(t, goldenPath) {
		t.Run(c.Input+"/"+c.Ftype, func(t *testing.T) {
			ft, err := ParseFileType(c.Ftype)
			if err != nil {
				t.Fatal(err)
			}
			// Feed the tensors in a scrambled order: Plan must not depend on it.
			descs := make([]TensorDesc, len(c.Tensors))
			for i, tn := range c.Tensors {
				j := (i*7 + 3) % len(c.Tensors)
				for descs[j].Name != "" {
					j = (j + 1) % len(c.Tensors)
				}
				descs[j] = TensorDesc{Name: tn.Name, Dims: tn.Dims, Type: parseTypeT(t, tn.From)}
			}
			types, order, err := Plan(c.Model, ft, descs)
			if err != nil {
				t.Fatal(err)
			}
			for k, i := range order {
				want := c.Tensors[k]
				if descs[i].Name != want.Name {
					t.Fatalf("tensor %d is %s, llama.cpp writes %s", k, descs[i].Name, want.Name)
				}
				if got := types[i].String(); got != want.Type {
					t.Errorf("%s: %s, llama.cpp gives %s", want.Name, got, want.Type)
				}
			}
		})
	}
}

// TestQuantizeMatchesLlamaCpp quantizes the golden models of testdata/golden and compares
// the whole output file, and each tensor's bytes, with what llama.cpp's quantizer wrote.
func TestQuantizeMatchesLlamaCpp(t *testing.T) {
	n := 0
	for _, c := range LoadLlamaCppGolden(t, goldenPath) {
		in := filepath.Join(goldenDir, c.Input+".gguf")
		if _, err := os.Stat(in); err != nil {
			continue // a synthetic input: inference/synth's tests cover it
		}
		n++
		t.Run(c.Input+"/"+c.Ftype, func(t *testing.T) {
			ft, err := ParseFileType(c.Ftype)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out.gguf")
			var log bytes.Buffer
			res, err := QuantizeFile(context.Background(), in, out, Options{Type: ft, Threads: 3, Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			if res.Tensors != len(c.Tensors) {
				t.Errorf("%d tensors, want %d", res.Tensors, len(c.Tensors))
			}
			CheckAgainstLlamaCpp(t, out, c)
			if strings.HasSuffix(c.Input, "q8_0") && !strings.Contains(log.String(), "warning: tensor output.weight and any others in Q8_0 are dequantized") {
				t.Errorf("no requantization warning in the log:\n%s", log.String())
			}
		})
	}
	if n < 15 {
		t.Errorf("only %d cases ran", n)
	}
}

// CheckAgainstLlamaCpp compares the file at path with llama.cpp's output for case c:
// tensor by tensor, then the whole file.
func CheckAgainstLlamaCpp(t *testing.T, path string, c LlamaCppCase) {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Tensors) != len(c.Tensors) {
		t.Fatalf("%d tensors, llama.cpp wrote %d", len(f.Tensors), len(c.Tensors))
	}
	bad := 0
	for i, want := range c.Tensors {
		ti := &f.Tensors[i]
		switch {
		case ti.Name != want.Name:
			t.Errorf("tensor %d: %s, llama.cpp has %s", i, ti.Name, want.Name)
		case ti.Type.String() != want.Type:
			t.Errorf("%s: type %v, llama.cpp has %s", ti.Name, ti.Type, want.Type)
		case shortHash(f.TensorData(ti)) != want.SHA256:
			t.Errorf("%s (%v): bytes differ from llama.cpp's", ti.Name, ti.Type)
		default:
			continue
		}
		if bad++; bad > 5 {
			t.Fatal("too many differences")
		}
	}
	if h, size := fileHash(t, path); h != c.FileSHA256 || size != c.FileSize {
		t.Errorf("file differs from llama.cpp's (%d bytes, llama.cpp %d)", size, c.FileSize)
	}
}

// TestQuantizeKeepsMetadata checks that every KV of the input survives unchanged except
// the two quantization keys, and that split keys are dropped.
func TestQuantizeKeepsMetadata(t *testing.T) {
	src, err := gguf.Open(filepath.Join(goldenDir, "llama-tiny-f32.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// Add split keys, which must go.
	w := gguf.NewWriter()
	if err := w.CopyKVsFrom(src); err != nil {
		t.Fatal(err)
	}
	for _, k := range splitKeys {
		if err := w.AddKV(k, uint16(1)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range src.Tensors {
		ti := &src.Tensors[i]
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, src.TensorData(ti)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.gguf"), filepath.Join(dir, "out.gguf")
	writeFile(t, in, w)
	if _, err := QuantizeFile(context.Background(), in, out, Options{Type: mustFT(t, "q5_k_m"), Threads: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var keys []string
	for _, kv := range f.KVs {
		keys = append(keys, kv.Key)
		if v, ok := src.Lookup(kv.Key); ok && kv.Key != "general.file_type" && !v.Equal(kv.Value) {
			t.Errorf("%s changed", kv.Key)
		}
	}
	for _, kv := range src.KVs {
		if !f.Has(kv.Key) {
			t.Errorf("%s lost", kv.Key)
		}
	}
	if tail := strings.Join(keys[len(keys)-2:], ","); tail != "general.quantization_version,general.file_type" {
		t.Errorf("last keys %s", tail)
	}
	if ft, _ := f.Uint("general.file_type"); ft != FtypeQ5_K_M {
		t.Errorf("file_type %d, want %d", ft, FtypeQ5_K_M)
	}
	if qv, _ := f.Uint("general.quantization_version"); qv != 2 {
		t.Errorf("quantization_version %d", qv)
	}
	for _, k := range splitKeys {
		if f.Has(k) {
			t.Errorf("%s kept", k)
		}
	}
}

func mustFT(t testing.TB, s string) FileType {
	t.Helper()
	ft, err := ParseFileType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ft
}

func writeFile(t testing.TB, path string, w *gguf.Writer) {
	t.Helper()
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestQuantizeErrors: bad inputs and outputs give clear errors and leave no file behind.
func TestQuantizeErrors(t *testing.T) {
	in := filepath.Join(goldenDir, "llama-tiny-f32.gguf")
	dir := t.TempDir()
	roDir := filepath.Join(dir, "ro")
	if err := os.Mkdir(roDir, 0o555); err != nil {
		t.Fatal(err)
	}
	notGGUF := filepath.Join(dir, "junk.gguf")
	os.WriteFile(notGGUF, []byte("not a gguf file at all, sorry"), 0o644)
	existing := filepath.Join(dir, "existing.gguf")
	os.WriteFile(existing, []byte("keep me"), 0o644)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	q4 := mustFT(t, "Q4_K_M")
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		in, out string
		ft      FileType
		want    string
	}{
		{"missing input", context.Background(), filepath.Join(dir, "nope.gguf"), filepath.Join(dir, "o1.gguf"), q4, "no such file"},
		{"not gguf", context.Background(), notGGUF, filepath.Join(dir, "o2.gguf"), q4, "junk.gguf"},
		{"output dir missing", context.Background(), in, filepath.Join(dir, "no", "dir", "o.gguf"), q4, "create output in"},
		{"output is a dir", context.Background(), in, dir, q4, "is a directory"},
		{"output is input", context.Background(), in, in, q4, "is the input"},
		{"no type", context.Background(), in, filepath.Join(dir, "o3.gguf"), FileType{}, "no target type"},
		{"canceled", canceled, in, existing, q4, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := QuantizeFile(tc.ctx, tc.in, tc.out, Options{Type: tc.ft})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			if tc.out != in && tc.out != dir && tc.out != existing {
				if _, err := os.Stat(tc.out); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("output exists after the error")
				}
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("a failed run changed the existing output: %q", b)
	}
	if os.Geteuid() != 0 { // root writes anywhere
		if _, err := QuantizeFile(context.Background(), in, filepath.Join(roDir, "o.gguf"), Options{Type: q4}); err == nil ||
			!strings.Contains(err.Error(), "permission denied") {
			t.Errorf("unwritable dir: %v", err)
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestParseFileType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		id   uint32
		def  quant.Type
		fail bool
	}{
		{"Q4_K_M", 15, quant.Q4_K, false}, {"q4_k_m", 15, quant.Q4_K, false}, {"q4_k", 15, quant.Q4_K, false},
		{"Q8_0", 7, quant.Q8_0, false}, {"Q4_0", 2, quant.Q4_0, false}, {"Q5_K_M", 17, quant.Q5_K, false},
		{"Q6_K", 18, quant.Q6_K, false}, {"q5_k_s", 16, quant.Q5_K, false}, {"Q3_K_M", 12, quant.Q3_K, false},
		{"Q2_K", 10, quant.Q2_K, false}, {"Q4_1", 3, quant.Q4_1, false}, {"Q5_1", 9, quant.Q5_1, false},
		{"f16", 1, quant.F16, false}, {"bf16", 32, quant.BF16, false}, {"F32", 0, quant.F32, false},
		{"Q4_K_X", 0, 0, true}, {"IQ2_XXS", 0, 0, true}, {"", 0, 0, true},
	} {
		ft, err := ParseFileType(tc.in)
		if (err != nil) != tc.fail {
			t.Errorf("%q: error %v", tc.in, err)
			continue
		}
		if !tc.fail && (ft.ID != tc.id || ft.Default != tc.def) {
			t.Errorf("%q: %+v, want id %d default %v", tc.in, ft, tc.id, tc.def)
		}
	}
	if _, err := ParseFileType("q9"); err == nil || !strings.Contains(err.Error(), "Q4_K_M") {
		t.Errorf("the error should list the types: %v", err)
	}
}

// TestTypesMatchGoldenFiles: our mixes of llama-tiny-f32 have the shapes and types of
// testdata/golden's files of the same mix. Those were written by tools/synth_gguf.py
// from their own random stream, not by quantizing llama-tiny-f32, so only the tensors
// both keep in F32 (the norms, all 1.0) can be equal byte for byte; the quantized bytes
// are checked against llama.cpp's own quantizer in TestQuantizeMatchesLlamaCpp.
func TestTypesMatchGoldenFiles(t *testing.T) {
	in := filepath.Join(goldenDir, "llama-tiny-f32.gguf")
	for _, mix := range []string{"q4_k_m", "q8_0", "q6_k", "q4_0"} {
		t.Run(mix, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.gguf")
			if _, err := QuantizeFile(context.Background(), in, out, Options{Type: mustFT(t, mix)}); err != nil {
				t.Fatal(err)
			}
			ours, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer ours.Close()
			golden, err := gguf.Open(filepath.Join(goldenDir, "llama-tiny-"+mix+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			defer golden.Close()
			if len(ours.Tensors) != len(golden.Tensors) {
				t.Fatalf("%d tensors, golden %d", len(ours.Tensors), len(golden.Tensors))
			}
			same := 0
			for _, g := range golden.Tensors {
				o, ok := ours.Tensor(g.Name)
				if !ok {
					t.Errorf("%s missing", g.Name)
					continue
				}
				if o.Type != g.Type || fmt.Sprint(o.Dims) != fmt.Sprint(g.Dims) {
					t.Errorf("%s: %v %v, golden %v %v", g.Name, o.Dims, o.Type, g.Dims, g.Type)
				}
				if g.Type == quant.F32 {
					if !bytes.Equal(ours.TensorData(o), golden.TensorData(&g)) {
						t.Errorf("%s: F32 data differs", g.Name)
					}
					same++
				}
			}
			if same != 5 {
				t.Errorf("%d F32 tensors compared, want 5", same)
			}
			ft, _ := golden.Uint("general.file_type")
			if got, _ := ours.Uint("general.file_type"); got != ft {
				t.Errorf("file_type %d, golden %d", got, ft)
			}
		})
	}
}
