package cuda_test

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
)

// TestTopK: the top-k kernel (kernels/cuda/sample.cu, topk_f32) against sample.TopK.
func TestTopK(t *testing.T) {
	backendtest.RunTopK(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
}
