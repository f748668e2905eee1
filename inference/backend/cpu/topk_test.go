package cpu_test

import (
	"fmt"
	"testing"

	"ember/inference/backend/backendtest"
)

// TestTopK runs the TopK conformance test single- and multi-threaded.
func TestTopK(t *testing.T) {
	for _, threads := range []int{1, 3} {
		t.Run(fmt.Sprintf("t%d", threads), func(t *testing.T) { backendtest.RunTopK(t, withThreads(threads)) })
	}
}
