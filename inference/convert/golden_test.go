package convert

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"ember/inference/gguf"
	"ember/inference/quant"
)

// LlamaCppCase is what llama.cpp's own quantizer (llama_model_quantize, no imatrix)
// wrote for one input model and mix: testdata/llamacpp_quantize.json, made by
// TestMakeLlamaCppGolden from llama.cpp's output files (see testdata/README.md).
type LlamaCppCase struct {
	Input      string           `json:"input"` // the model quantized (see README)
	Ftype      string           `json:"ftype"`
	Model      Model            `json:"model"` // the input's hyperparameters, as ModelOf reads them
	FileSHA256 string           `json:"file_sha256"`
	FileSize   int64            `json:"file_size"`
	Tensors    []LlamaCppTensor `json:"tensors"` // in llama.cpp's file order
}

// LlamaCppTensor is one tensor of llama.cpp's output.
type LlamaCppTensor struct {
	Name   string   `json:"name"`
	Dims   []uint64 `json:"dims"`
	From   string   `json:"from"` // its type in the input
	Type   string   `json:"type"` // its type in llama.cpp's output
	SHA256 string   `json:"sha256"`
}

const goldenPath = "testdata/llamacpp_quantize.json"

// LoadLlamaCppGolden reads testdata/llamacpp_quantize.json (path relative to this
// package) .
func LoadLlamaCppGolden(t testing.TB, path string) []LlamaCppCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []LlamaCppCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cases
}

func shortHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

func fileHash(t testing.TB, path string) (string, int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), int64(len(b))
}

// TestMakeLlamaCppGolden rewrites testdata/llamacpp_quantize.json from llama.cpp's output
// files INPUT.FTYPE.gguf in $EMBER_LLAMACPP_QUANT_DIR (and their inputs in
// $EMBER_LLAMACPP_QUANT_DIR/inputs). It is skipped without that variable.
func TestMakeLlamaCppGolden(t *testing.T) {
	dir := os.Getenv("EMBER_LLAMACPP_QUANT_DIR")
	if dir == "" {
		t.Skip("EMBER_LLAMACPP_QUANT_DIR not set")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.gguf"))
	sort.Strings(paths)
	var cases []LlamaCppCase
	for _, p := range paths {
		base := strings.TrimSuffix(filepath.Base(p), ".gguf")
		dot := strings.LastIndexByte(base, '.')
		c := LlamaCppCase{Input: base[:dot], Ftype: strings.ToUpper(base[dot+1:])}
		c.FileSHA256, c.FileSize = fileHash(t, p)
		in, err := gguf.Open(filepath.Join(dir, "inputs", c.Input+".gguf"))
		if err != nil {
			t.Fatal(err)
		}
		if c.Model, err = ModelOf(in); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := range f.Tensors {
			ti := &f.Tensors[i]
			src, ok := in.Tensor(ti.Name)
			if !ok {
				t.Fatalf("%s: %s not in the input", p, ti.Name)
			}
			c.Tensors = append(c.Tensors, LlamaCppTensor{Name: ti.Name, Dims: ti.Dims,
				From: src.Type.String(), Type: ti.Type.String(), SHA256: shortHash(f.TensorData(ti))})
		}
		f.Close()
		in.Close()
		cases = append(cases, c)
	}
	// One line per tensor keeps the file small and its diffs readable.
	var sb strings.Builder
	sb.WriteString("[\n")
	for i, c := range cases {
		mb, err := json.Marshal(c.Model)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sb, "{\"input\": %q, \"ftype\": %q, \"model\": %s, \"file_sha256\": %q, \"file_size\": %d, \"tensors\": [\n",
			c.Input, c.Ftype, mb, c.FileSHA256, c.FileSize)
		for j, tn := range c.Tensors {
			b, err := json.Marshal(tn)
			if err != nil {
				t.Fatal(err)
			}
			sb.Write(b)
			if j < len(c.Tensors)-1 {
				sb.WriteString(",")
			}
			sb.WriteString("\n")
		}
		sb.WriteString("]}")
		if i < len(cases)-1 {
			sb.WriteString(",")
		}
		sb.WriteString("\n")
	}
	sb.WriteString("]\n")
	if err := os.WriteFile(goldenPath, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d cases", len(cases))
}

func parseTypeT(t testing.TB, s string) quant.Type {
	t.Helper()
	typ, err := quant.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}
