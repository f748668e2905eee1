package cuda

import "testing"

// TestShortKernel: the grouped-query heads of 64 and 128 dims and MLA's latent rows (V
// the K rows) have a kernel, the latent rows' on 512 threads unless narrow; other
// shapes none.
func TestShortKernel(t *testing.T) {
	for _, c := range []struct {
		hd, vhd     int
		kv1, narrow bool
		want        string
		threads     int
	}{
		{128, 128, false, false, "attention_short128", smThreads}, {64, 64, false, false, "attention_short64", smThreads},
		{576, 576, true, false, "attention_short576w", shortWideThreads},
		{576, 576, true, true, "attention_short576", smThreads},
		{128, 128, false, true, "attention_short128", smThreads},
		{576, 576, false, false, "", 0}, {128, 128, true, false, "", 0},
		{128, 64, false, false, "", 0}, {96, 96, false, false, "", 0}, {192, 128, false, false, "", 0},
	} {
		if got, threads := shortKernel(c.hd, c.vhd, c.kv1, c.narrow); got != c.want || threads != c.threads {
			t.Errorf("shortKernel(%d, %d, %v, narrow %v) = %q on %d threads, want %q on %d", c.hd, c.vhd, c.kv1, c.narrow,
				got, threads, c.want, c.threads)
		}
	}
}

// TestShortPlan: the whole row in one tile where it fits (Llama-3.1-8B's 4 heads of 128
// at 256 positions: 128 KiB of rows), smaller tiles for MLA's 1,152-byte rows and for
// long bounds, every plan within shortSmemMax, none when not 32 positions fit.
func TestShortPlan(t *testing.T) {
	for _, c := range []struct {
		hd, vhd int
		kv1     bool
		g, nmax int
		cap     int
		tile    int // 0: shortMaxTile
		threads int // 0: smThreads
	}{
		{128, 128, false, 4, 256, 256, 0, 0},
		{128, 128, false, 8, 256, 256, 0, 0},
		{64, 64, false, 7, 256, 256, 0, 0},
		{128, 128, false, 4, 100, 100, 0, 0},
		{576, 576, true, 1, 256, 160, 0, 0},
		{576, 576, true, 1, 128, 128, 0, 0},
		{128, 128, false, 4, 4096, 256, 0, 0}, // scores of 4,096 positions take 64 KiB
		{128, 128, false, 8, 2048, 224, 0, 0}, // eight heads' scores: a smaller tile
		{128, 128, false, 8, 1 << 15, 0, 0, 0},
		{128, 128, false, 4, 256, 64, 64, 0}, // $EMBER_CUDA_SHORT_TILE
		{576, 576, true, 1, 256, 160, 0, shortWideThreads},
		{576, 576, true, 1, 128, 128, 0, shortWideThreads},
	} {
		threads := c.threads
		if threads == 0 {
			threads = smThreads
		}
		tile := c.tile
		if tile == 0 {
			tile = shortMaxTile
		}
		cap, smem := shortPlan(threads, c.hd, c.vhd, c.kv1, c.g, c.nmax, tile, shortSmemMax)
		if cap != c.cap {
			t.Errorf("shortPlan(%d, %d, %v, G %d, %d positions) = tile %d, want %d", c.hd, c.vhd, c.kv1, c.g, c.nmax, cap, c.cap)
		}
		if cap > 0 && (smem > shortSmemMax || smem != shortSmem(threads, c.hd, c.vhd, c.kv1, c.g, cap, c.nmax)) {
			t.Errorf("shortPlan(%+v): %d bytes", c, smem)
		}
	}
}
