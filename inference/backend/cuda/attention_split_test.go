package cuda

import "testing"

// TestSplitCount: the decode shapes that idle the GPU split, full batches and short
// caches do not, and a split never has more blocks than sub-chunks of the cache.
func TestSplitCount(t *testing.T) {
	for _, c := range []struct {
		pairs, nmax, sms int
		force            bool
		want             int
	}{
		{8, 4096, 132, false, 33},    // Llama-3.1-8B decode, one sequence
		{16, 8192, 132, false, 17},   // two sequences
		{16, 3000, 0, false, 17},     // no SM count: an H200's
		{1, 131072, 132, false, 264}, // MLA: one KV head
		{1, 300, 132, false, 5},      // capped by the cache's sub-chunks
		{8, 256, 132, false, 0},      // short cache
		{264, 4096, 132, false, 0},   // the pairs fill the SMs
		{132, 4096, 132, false, 2},
		{264, 40, 132, true, 1},
		{8, 40, 132, true, 1},
		{2, 300, 132, true, 5},
	} {
		if got := splitCount(c.pairs, c.nmax, c.sms, c.force); got != c.want {
			t.Errorf("splitCount(%d pairs, %d positions, %d SMs, force %v) = %d, want %d",
				c.pairs, c.nmax, c.sms, c.force, got, c.want)
		}
	}
}
