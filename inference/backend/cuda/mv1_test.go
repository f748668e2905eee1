package cuda_test

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
)

// TestMatVecBatch1 checks the batch-1 products of Q4_K, Q6_K, Q8_0, Q4_0 and Q5_0 (mv1 in
// kernels/cuda/mv1.cuh) against ref at the shapes where those kernels change how they
// split the work (backendtest.RunMatVec).
func TestMatVecBatch1(t *testing.T) {
	backendtest.RunMatVec(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
}
