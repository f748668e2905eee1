package archs

import (
	"errors"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
)

// TestGoldensCUDA runs the llama.cpp goldens on the GPU; it skips where there is no
// CUDA driver or GPU (CI).
func TestGoldensCUDA(t *testing.T) {
	if _, err := cuda.Devices(); errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("skipping the CUDA goldens: %v", err)
	}
	CheckGoldens(t, func() backend.Backend {
		b, err := cuda.New(cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

// TestGoldensCUDACublas runs the goldens with every product of two or more rows on
// cuBLASLt (f16 activations instead of the reference's 8-bit blocks: the golden bounds
// must still hold); it skips where there is no GPU or no libcublasLt.
func TestGoldensCUDACublas(t *testing.T) {
	if _, err := cuda.Devices(); errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("skipping the CUDA goldens: %v", err)
	}
	probe, err := cuda.New(cuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lib := probe.CublasLibrary()
	probe.Close()
	if lib == "" {
		t.Skip("skipping: no libcublasLt")
	}
	CheckGoldens(t, func() backend.Backend {
		b, err := cuda.New(cuda.Options{CublasMinRows: 2})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}
