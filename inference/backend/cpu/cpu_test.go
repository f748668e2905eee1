package cpu_test

import (
	"fmt"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cpu"
	kern "ember/kernels/cpu"
)

// TestConformance runs the backend suite on every instruction-set path this machine
// can run, single- and multi-threaded.
func TestConformance(t *testing.T) {
	for _, isa := range kern.Names() {
		for _, threads := range []int{1, 3} {
			t.Run(fmt.Sprintf("%v/t%d", isa, threads), func(t *testing.T) {
				backendtest.Run(t, func(t *testing.T) backend.Backend {
					b, err := cpu.New(cpu.Options{Threads: threads, ISA: isa})
					if err != nil {
						t.Fatal(err)
					}
					return b
				})
			})
		}
	}
}

// TestArgMax runs the ArgMax conformance test single- and multi-threaded.
func TestArgMax(t *testing.T) {
	for _, threads := range []int{1, 3} {
		t.Run(fmt.Sprintf("t%d", threads), func(t *testing.T) { backendtest.RunArgMax(t, withThreads(threads)) })
	}
}

func TestUnknownISA(t *testing.T) {
	if _, err := cpu.New(cpu.Options{ISA: "mmx"}); err == nil {
		t.Fatal("an unknown instruction set was accepted")
	}
}

// TestLongAttention runs the long-context attention cases (with and without the host's
// bound on the lengths) on the best instruction set here.
func TestLongAttention(t *testing.T) {
	backendtest.RunAttention(t, withThreads(2))
}

// TestPrefillAttention runs the prefill-shaped attention cases (many rows of few
// sequences) on the best instruction set here.
func TestPrefillAttention(t *testing.T) {
	backendtest.RunPrefillAttention(t, withThreads(2))
}

// TestLatentAttention runs DeepSeek's latent attention (head-major rows of one
// 576-dim KV head, Attention.HeadGroups) on the best instruction set here.
func TestLatentAttention(t *testing.T) {
	backendtest.RunLatentAttention(t, withThreads(2))
}

// TestMatVec runs the one-row product cases (odd row counts, one-block and very long
// rows, fused and per-head products) on the best instruction set here.
func TestMatVec(t *testing.T) {
	backendtest.RunMatVec(t, withThreads(2))
}

// withThreads makes CPU backends of the best instruction set here with that many threads.
func withThreads(threads int) func(t *testing.T) backend.Backend {
	return func(t *testing.T) backend.Backend {
		b, err := cpu.New(cpu.Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}
