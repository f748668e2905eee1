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
