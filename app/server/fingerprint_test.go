package server_test

import (
	"bytes"
	"testing"

	"ember/app/server"
	"ember/inference/gguf"
	"ember/inference/quant"
)

// TestFingerprintSamples: files that differ in one byte of a tensor's data get
// different fingerprints wherever the byte is among the sampled windows (a tensor's
// first, middle and last 4 KiB, all of a small tensor), and the same one when
// nothing differs.
func TestFingerprintSamples(t *testing.T) {
	const big, small = 64 << 10, 1000 // bytes of F32 data
	file := func(bigAt, smallAt int) string {
		w := gguf.NewWriter()
		if err := w.AddKV("general.architecture", "llama"); err != nil {
			t.Fatal(err)
		}
		b, s := make([]byte, big), make([]byte, small)
		for i := range b {
			b[i] = byte(i * 7)
		}
		if bigAt >= 0 {
			b[bigAt] ^= 1
		}
		if smallAt >= 0 {
			s[smallAt] ^= 1
		}
		if err := w.AddTensor("big", quant.F32, []uint64{big / 4}, b); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor("small", quant.F32, []uint64{small / 4}, s); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return server.Fingerprint(f)
	}
	base := file(-1, -1)
	if again := file(-1, -1); again != base {
		t.Fatalf("same file, fingerprints %s and %s", base, again)
	}
	for _, c := range []struct {
		big, small int
		differs    bool
	}{{0, -1, true}, {4095, -1, true}, {big/2 - 100, -1, true}, {big - 1, -1, true}, {-1, small - 1, true},
		{8192, -1, false}, {big - 8192, -1, false}} {
		if got := file(c.big, c.small) != base; got != c.differs {
			t.Errorf("byte %d of big, %d of small flipped: fingerprint differs %v, want %v", c.big, c.small, got, c.differs)
		}
	}
}
