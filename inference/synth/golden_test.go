package synth

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// scriptDescription is tools/synth_gguf.py's general.description: with it, our files are
// the script's byte for byte.
const scriptDescription = "SYNTHETIC random weights for benchmarking (tools/synth_gguf.py); not a trained model"

// TestGoldensByteIdentical rewrites the synthetic models of testdata/golden (made by
// tools/synth_gguf.py with seed 11 and gain 2^4) and compares them byte for byte.
func TestGoldensByteIdentical(t *testing.T) {
	for _, tc := range []struct {
		file, preset, arch, name, ftype string
	}{
		{"llama-tiny-f32", "tiny", "", "synthetic-llama-tiny", "f32"},
		{"llama-tiny-f16", "tiny", "", "synthetic-llama-tiny", "f16"},
		{"llama-tiny-q8_0", "tiny", "", "synthetic-llama-tiny", "q8_0"},
		{"llama-tiny-q4_0", "tiny", "", "synthetic-llama-tiny", "q4_0"},
		{"llama-tiny-q4_k", "tiny", "", "synthetic-llama-tiny", "q4_k"},
		{"llama-tiny-q6_k", "tiny", "", "synthetic-llama-tiny", "q6_k"},
		{"llama-tiny-q4_k_m", "tiny", "", "synthetic-llama-tiny", "q4_k_m"},
		{"qwen2-tiny-f16", "tiny", "qwen2", "synthetic-qwen2-tiny", "f16"},
		{"qwen2-tiny-q4_k_m", "tiny", "qwen2", "synthetic-qwen2-tiny", "q4_k_m"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("../../testdata/golden", tc.file+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Base(tc.preset, tc.arch)
			if err != nil {
				t.Fatal(err)
			}
			p.Name, p.Desc = tc.name, scriptDescription
			var got bytes.Buffer
			if _, err := WriteTo(context.Background(), &got, p, Options{FileType: tc.ftype, Seed: "11", GainLog2: 4, Threads: 3}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				i := 0
				for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
					i++
				}
				t.Fatalf("differs from the golden at byte %d (sizes %d, %d)", i, got.Len(), len(want))
			}
		})
	}
}
