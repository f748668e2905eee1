// Package goldentest gives the golden-model tests the GGUF files of testdata/golden,
// synthesizing byte for byte the ones the tree does not keep. It is for tests only.
package goldentest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"ember/inference/synth"
)

// synthGoldens are golden models whose GGUF is not kept in testdata/golden (to keep the
// tree small): inference/synth writes them byte for byte as tools/synth_gguf.py did for
// llama.cpp's run (preset tiny-deepseek2, seed 11, gain 2^4), checked by sha256.
var synthGoldens = map[string]struct{ ft, layout, name, sha256 string }{
	"deepseek2-tiny-f32":     {"f32", "split", "synthetic-deepseek2-tiny", "3a31b687327c242248f5c8accc587a9032ba31f01c08e2fe2aa735f3d35b0efd"},
	"deepseek2-tiny-f16":     {"f16", "split", "synthetic-deepseek2-tiny", "9f8d40232e686a4046e208fecc20f85258805e57681253e75d583e63a5917ea5"},
	"deepseek2-tiny-q8_0":    {"q8_0", "split", "synthetic-deepseek2-tiny", "1e9080fe27eac8a40e8c9993f90d0e6323c0e784b9e921aa831bebae77b8c98e"},
	"deepseek2-tiny-kvb-f16": {"f16", "kv_b", "synthetic-deepseek2-tiny-kvb", "eec4ce3991b490a85325bae17fb69fa212dd66b4d762e36d3e1dad2809c8659e"},
}

// synthesized caches the synthesized files' bytes by name (guarded by synthMu), so each
// is made once per test binary.
var (
	synthMu     sync.Mutex
	synthesized = map[string][]byte{}
)

// GGUF is the path of golden model name's GGUF: its file in dir (testdata/golden), or
// the file synthesized into a temporary folder of t.
func GGUF(t testing.TB, dir, name string) string {
	t.Helper()
	g, ok := synthGoldens[name]
	if !ok {
		return filepath.Join(dir, name+".gguf")
	}
	synthMu.Lock()
	defer synthMu.Unlock()
	path := filepath.Join(t.TempDir(), name+".gguf")
	if b, ok := synthesized[name]; ok {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p, err := synth.Base("tiny-deepseek2", "")
	if err != nil {
		t.Fatal(err)
	}
	p.Name, p.MLALayout = g.name, g.layout
	p.Desc = "SYNTHETIC random weights for benchmarking (tools/synth_gguf.py); not a trained model"
	var buf bytes.Buffer
	if _, err := synth.WriteTo(context.Background(), &buf, p, synth.Options{FileType: g.ft, Seed: "11", GainLog2: 4, Threads: 2}); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(buf.Bytes()); hex.EncodeToString(sum[:]) != g.sha256 {
		t.Fatalf("%s: synthesized file has sha256 %x, the golden's is %s", name, sum, g.sha256)
	}
	synthesized[name] = buf.Bytes()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// NMSE is sum((got - want)^2) / sum(want^2), the goldens' measure of how close logits
// are; with an all-zero want, the plain sum of squares.
func NMSE(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return num
	}
	return num / den
}
