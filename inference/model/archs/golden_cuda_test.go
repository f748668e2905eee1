package archs

import (
	"errors"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
)

// skipNoCUDA skips t where there is no CUDA driver or GPU (CI).
func skipNoCUDA(t *testing.T) {
	t.Helper()
	if _, err := cuda.Devices(); errors.Is(err, cuda.ErrNoDriver) {
		t.Skipf("skipping the CUDA test: %v", err)
	}
}

// TestGoldensCUDA runs the llama.cpp goldens on the GPU; it skips where there is no
// CUDA driver or GPU (CI).
func TestGoldensCUDA(t *testing.T) {
	skipNoCUDA(t)
	CheckGoldens(t, func() backend.Backend {
		b, err := cuda.New(cuda.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

// TestGoldensCUDACublas runs the goldens with every product of two or more rows on
// cuBLASLt; it skips where there is no GPU or no libcublasLt. cuBLASLt multiplies f16
// copies of the dequantized weights and of the activations as llama.cpp rounds them
// (2^-11 relative each): on these random models, built to amplify small differences
// from layer to layer, that moves a few prompt positions just past the 5e-3 bound of
// rounding like llama.cpp (6.2e-3 on the H200, one position of deepseek2-tiny-q8_0 at
// 5.5e-2), within what the golden README measured for an exact-float forward pass (up
// to 6e-2). So the quantized bound here is 6e-2; it still fails the f16-rounded
// activations this path first had (1e-1 to 1 at some positions). The f16 and f32
// goldens keep their bound, and the greedy check its near-tie rule. The default
// threshold (256 rows) leaves the goldens' 33-token prompts on our own kernels.
func TestGoldensCUDACublas(t *testing.T) {
	skipNoCUDA(t)
	probe, err := cuda.New(cuda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lib := probe.CublasLibrary()
	probe.Close()
	if lib == "" {
		t.Skip("skipping: no libcublasLt")
	}
	CheckGoldensWithin(t, func() backend.Backend {
		b, err := cuda.New(cuda.Options{CublasMinRows: 2})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}, 6e-2)
}
