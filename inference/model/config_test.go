package model

import (
	"math"
	"testing"

	"ember/inference/gguf"
)

// TestLLaMA3Factors checks Llama 3.1's published scaling (factor 8, low 1, high 4,
// original context 8192, base 500000, 128 dims): high frequencies keep their
// wavelength, low ones are slowed 8x, and the band between blends smoothly.
func TestLLaMA3Factors(t *testing.T) {
	f := LLaMA3Factors(LLaMA3Scaling{Factor: 8, LowFreqFactor: 1, HighFreqFactor: 4, OrigCtx: 8192}, 500000, 128)
	if len(f) != 64 {
		t.Fatalf("%d factors", len(f))
	}
	if f[0] != 1 || f[63] != 8 {
		t.Fatalf("first %g, last %g", f[0], f[63])
	}
	for i := 1; i < len(f); i++ {
		if f[i] < f[i-1] {
			t.Fatalf("factor %d (%g) below factor %d (%g)", i, f[i], i-1, f[i-1])
		}
	}
	// Dim pair 30: wavelength 2*pi*500000^(60/128) ~ 3070, between 8192/4 and 8192/1,
	// so it is blended.
	wave := 2 * math.Pi * math.Pow(500000, 60.0/128)
	smooth := (8192/wave - 1) / (4 - 1)
	want := float32(1 / ((1-smooth)/8 + smooth))
	if math.Abs(float64(f[30]-want)) > 1e-5 || f[30] <= 1 || f[30] >= 8 {
		t.Fatalf("factor 30 = %g, want %g (wavelength %g)", f[30], want, wave)
	}
}

func TestReadParamsErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		kv   map[string]any
	}{
		{"missing layers", map[string]any{"llama.embedding_length": uint32(64), "llama.attention.head_count": uint32(8), "llama.feed_forward_length": uint32(100)}},
		{"heads not a multiple of kv heads", map[string]any{"llama.embedding_length": uint32(64), "llama.block_count": uint32(1), "llama.attention.head_count": uint32(8), "llama.attention.head_count_kv": uint32(3), "llama.feed_forward_length": uint32(100)}},
		{"odd rope dims", map[string]any{"llama.embedding_length": uint32(64), "llama.block_count": uint32(1), "llama.attention.head_count": uint32(8), "llama.feed_forward_length": uint32(100), "llama.rope.dimension_count": uint32(7)}},
		{"wrong type", map[string]any{"llama.embedding_length": "64", "llama.block_count": uint32(1), "llama.attention.head_count": uint32(8), "llama.feed_forward_length": uint32(100)}},
		{"unknown scaling", map[string]any{"llama.embedding_length": uint32(64), "llama.block_count": uint32(1), "llama.attention.head_count": uint32(8), "llama.feed_forward_length": uint32(100), "llama.rope.scaling.type": "weird"}},
	} {
		w := gguf.NewWriter()
		for k, v := range c.kv {
			if err := w.AddKV(k, v); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytesBuffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(buf.b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadParams(f, "llama"); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
