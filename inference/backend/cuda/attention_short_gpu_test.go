package cuda_test

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
)

// TestShortAttention runs the attention cases (decode rows, long contexts over several
// tiles, prompts, paged, DeepSeek's latent rows) with attention_short taking every shape
// it can: the kernels tried before it (MLA, prefill) off.
func TestShortAttention(t *testing.T) {
	newOrSkip(t).Close()
	newBackend := func(t *testing.T) backend.Backend {
		b := newOrSkip(t)
		cuda.ShortAttention(b, true)
		cuda.MLAAttention(b, false)
		cuda.PrefillAttention(b, false)
		return b
	}
	backendtest.RunAttention(t, newBackend)
	backendtest.RunPrefillAttention(t, newBackend)
	backendtest.RunLatentAttention(t, newBackend)
	be := newBackend(t).(*cuda.Backend)
	pagedAttention(t, be)
	be.Close()
}
