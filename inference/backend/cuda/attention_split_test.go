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

// TestSplit1Plan: the one-launch split keeps every block resident (at most two an SM) and
// its chunk's scores within split1SmemMax; larger grids or caches decline (the two-launch
// kernels take them).
func TestSplit1Plan(t *testing.T) {
	const st = splitChunk * 2 * 128 // a ring stage at head dim 128
	for _, c := range []struct {
		pairs, g, hd, nmax, splits, sms int
		want                            [4]int
	}{
		{8, 4, 128, 768, 12, 132, [4]int{12, 64, 4 * (512 + 256 + smPart), 0}},                // Llama-3.1-8B decode at 512-640: one sub-chunk, no ring
		{8, 4, 128, 4096, 33, 132, [4]int{33, 128, 4*(512+512+smPart) + 2*st, 2}},             // 4k context: two sub-chunks
		{16, 4, 128, 8192, 17, 132, [4]int{16, 512, 4*(512+2048+smPart) + 4*st, 4}},           // two rows: 2*132/16 = 16 splits
		{8, 4, 128, 16384, 33, 132, [4]int{33, 512, 4*(512+2048+smPart) + 4*st, 4}},           // 16k
		{8, 4, 128, 65536, 33, 132, [4]int{33, 2048, 4*(512+4*2048+smPart) + 4*st, 4}},        // 64k
		{8, 4, 128, 131072, 33, 132, [4]int{33, 4032, 4*(512+4*4032+smPart) + 2*st, 2}},       // 128k: room for two stages
		{8, 4, 128, 262144, 33, 132, [4]int{0, 0, 0, 0}},                                      // 256k: 8,000 positions a chunk
		{300, 4, 128, 4096, 1, 132, [4]int{0, 0, 0, 0}},                                       // more pairs than blocks
		{8, 4, 128, 768, 12, 0, [4]int{12, 64, 4 * (512 + 256 + smPart), 0}},                  // no SM count
		{4, 2, 64, 700, 11, 132, [4]int{11, 64, 4 * (128 + 128 + smPart), 0}},                 // odd shapes
		{4, 2, 64, 7000, 33, 132, [4]int{33, 256, 4*(128+512+smPart) + 4*splitChunk*2*64, 4}}, // head dim 64
		{8, 5, 80, 16384, 33, 132, [4]int{33, 512, 4 * (400 + 5*512 + smPart), 0}},            // head dim 80: no ring
	} {
		if c.want[0] > 0 { // the table's bytes are the rows of scores without their pads
			c.want[2] += 4 * c.g * splitPad
		}
		s, cm, sm, r := split1Plan(c.pairs, c.g, c.hd, c.nmax, c.splits, c.sms, split1SmemMax, true)
		if got := [4]int{s, cm, sm, r}; got != c.want {
			t.Errorf("split1Plan(%d pairs, G %d, hd %d, %d positions, %d splits, %d SMs) = %v, want %v",
				c.pairs, c.g, c.hd, c.nmax, c.splits, c.sms, got, c.want)
		}
		if s > 0 && (c.pairs*s > 2*max(c.sms, 1) && c.sms > 0 || cm*s < c.nmax || sm > split1SmemMax || r > cm/splitChunk) {
			t.Errorf("%v: %d blocks on %d SMs, or %d x %d positions < %d, or %d bytes, or %d stages", c, c.pairs*s, c.sms,
				s, cm, c.nmax, sm, r)
		}
		if s2, cm2, sm2, r2 := split1Plan(c.pairs, c.g, c.hd, c.nmax, c.splits, c.sms, split1SmemMax, false); s2 != s || cm2 != cm || r2 != 0 ||
			sm2 != sm-r*splitChunk*2*c.hd {
			t.Errorf("%v without rings: %d, %d, %d, %d", c, s2, cm2, sm2, r2)
		}
	}
}

// TestDec1LTiles: heads leave attention_decD_1l past four tiles a block (the split
// kernel takes the row); a forced count in range wins.
func TestDec1LTiles(t *testing.T) {
	for _, c := range []struct{ hd, force, want int }{
		{128, 0, 4}, {64, 0, 4}, {128, 8, 8}, {64, 2, 2}, {128, 9, 4}, {64, -1, 4}, {64, 8, 8},
	} {
		if got := dec1lTiles(c.hd, c.force); got != c.want {
			t.Errorf("dec1lTiles(%d, %d) = %d, want %d", c.hd, c.force, got, c.want)
		}
	}
}

// TestMLASplitPlan: attention_mla_split keeps every block resident (at most one an SM),
// spans whole key tiles covering the bound, and declines below the fewest spans asked.
func TestMLASplitPlan(t *testing.T) {
	for _, c := range []struct {
		n, hg, nmax, sms, maxSpans, least int
		spans, tpb                        int
	}{
		{1, 1, 768, 132, 0, 2, 12, 1},    // one decode token after a 512-token prompt
		{64, 1, 768, 132, 0, 2, 2, 6},    // 64 streams: two spans of six tiles
		{66, 1, 768, 132, 0, 2, 2, 6},    // still two blocks a token fit
		{67, 1, 768, 132, 0, 2, 0, 0},    // one span a token: attention_mla's case
		{1, 1, 64, 132, 0, 2, 0, 0},      // a single tile
		{1, 1, 64, 132, 0, 1, 1, 1},      // ... taken when forced
		{1, 1, 32768, 132, 0, 2, 128, 4}, // 512 tiles over 132 SMs: spans of 4
		{1, 1, 704, 132, 3, 1, 3, 4},     // at most three spans (tests)
		{3, 2, 768, 132, 0, 2, 12, 1},    // 20 heads: two head groups
		{3, 2, 32768, 0, 0, 2, 22, 24},   // no SM count: an H200's 132
		{5, 1, 32768, 132, 0, 2, 26, 20}, // 26 blocks a token
	} {
		spans, tpb := mlaSplitPlan(c.n, c.hg, c.nmax, c.sms, c.maxSpans, c.least)
		if spans != c.spans || tpb != c.tpb {
			t.Errorf("mlaSplitPlan(%d tokens, %d groups, %d positions, %d SMs, max %d, least %d) = %d, %d; want %d, %d",
				c.n, c.hg, c.nmax, c.sms, c.maxSpans, c.least, spans, tpb, c.spans, c.tpb)
		}
		if spans > 0 && (c.n*c.hg*spans > max(c.sms, 132) || spans*tpb*decK < c.nmax || (spans-1)*tpb*decK >= c.nmax) {
			t.Errorf("mlaSplitPlan(%+v) = %d spans of %d tiles: not resident or not covering", c, spans, tpb)
		}
	}
}

// TestMLASplitLeast: auto takes the split for a few tokens over long rows and for many
// tokens, not for a few over short rows; on takes one span; off none.
func TestMLASplitLeast(t *testing.T) {
	for _, c := range []struct {
		m       splitMode
		n, nmax int
		want    int
	}{
		{splitAuto, 1, 768, 2}, {splitAuto, 1, 256, 0}, {splitAuto, 5, 256, 0}, {splitAuto, 6, 256, 2},
		{splitAuto, 64, 768, 2}, {splitOn, 1, 64, 1}, {splitOff, 1, 768, 0},
	} {
		if got := mlaSplitLeast(c.m, c.n, c.nmax); got != c.want {
			t.Errorf("mlaSplitLeast(%v, %d tokens, %d positions) = %d, want %d", c.m, c.n, c.nmax, got, c.want)
		}
	}
}

// TestDecStages: attention_dec64/128's rings take as many tiles as keep the blocks an SM
// asked for (at most four, at least two), fewer as the kept scores (nr rows) grow, and a
// forced count only where the kernel's shared memory allows it.
func TestDecStages(t *testing.T) {
	for _, c := range []struct {
		force, d, scap, nr, blocks, want int
	}{
		{0, 128, 640, 4, 3, 3}, // Llama-3.1-8B, 64 sequences at ~600 positions: scores kept, three blocks an SM
		{0, 128, 640, 4, 2, 4},
		{0, 128, 640, 16, 2, 4}, // sixteen rows kept (attention_mla's heads)
		{0, 128, 704, 16, 2, 3},
		{0, 128, 256, 4, 2, 4}, // one token over a short cache
		{0, 128, 0, 4, 2, 3},   // scores not kept: K and V rings
		{0, 128, 0, 4, 3, 2},
		{0, 64, 0, 4, 3, 4},
		{0, 128, 1600, 4, 2, 4},
		{0, 128, 1600, 4, 3, 2},
		{2, 128, 640, 4, 3, 2},
		{3, 128, 0, 4, 3, 3},
		{4, 128, 0, 4, 3, 4},
		{4, 128, 2560, 4, 2, 4},
		{4, 128, 2560, 16, 2, 2}, // past the kernel's shared memory: its own choice
		{9, 128, 640, 4, 2, 4},   // not a ring size
	} {
		b := &Backend{}
		b.dec.stages = c.force
		got := b.decStages(c.d, c.scap, c.nr, c.blocks)
		if got != c.want {
			t.Errorf("forced %d, d %d, scap %d, %d rows, %d blocks: %d tiles, want %d", c.force, c.d, c.scap, c.nr,
				c.blocks, got, c.want)
		}
		if n := decSmem(c.d, false, c.scap, got, c.nr); got > 2 && c.force == 0 && n > (&Backend{}).decScoresMax(c.d, c.blocks) {
			t.Errorf("d %d, scap %d: %d tiles take %d bytes, past %d blocks an SM", c.d, c.scap, got, n, c.blocks)
		}
	}
}

// TestDecBlocks: as many blocks an SM as make the grid one wave, two to four, or the
// number forced.
func TestDecBlocks(t *testing.T) {
	for _, c := range []struct{ pairs, sms, force, want int }{
		{512, 132, 0, 4}, {396, 132, 0, 3}, {265, 132, 0, 3}, {264, 132, 0, 2}, {8, 132, 0, 2}, {2000, 132, 0, 4},
		{512, 0, 0, 2}, {512, 132, 3, 3}, {8, 132, 4, 4}, {512, 132, 5, 4}, {8, 132, 1, 2},
	} {
		if got := decBlocks(c.pairs, c.sms, c.force); got != c.want {
			t.Errorf("decBlocks(%d, %d, %d) = %d, want %d", c.pairs, c.sms, c.force, got, c.want)
		}
	}
	// Blocks of the most shared memory sized for them fit an SM with their static and
	// reserved kilobytes.
	for blocks := 2; blocks <= decMaxBlocks; blocks++ {
		if n := blocks * ((&Backend{}).decScoresMax(128, blocks) + 2<<10); n > decSMSmem {
			t.Errorf("%d blocks take %d bytes of an SM's %d", blocks, n, decSMSmem)
		}
	}
}

// TestDecLaunchSmem: Llama-3.1-8B's 64 sequences at ~600 positions keep their scores at
// four blocks an SM (rings of two); at 2,000 positions the scores fit only three blocks,
// which they then take; past that, two passes.
func TestDecLaunchSmem(t *testing.T) {
	for _, c := range []struct {
		nmax, blocks, scap, ns, smem int
	}{
		{768, 4, 768, 2, 51584},
		{768, 3, 768, 3, 67968},
		{2048, 4, 2048, 2, 72064}, // three blocks
		{8192, 4, 0, 2, 71936},
	} {
		b := &Backend{}
		b.dec.smem = map[string]int{"attention_dec128": mmqSmemMax} // no driver: every size allowed
		smem, scap, ns, ok := b.decLaunchSmem("attention_dec128", 128, false, c.nmax, 4, c.blocks)
		if !ok || smem != c.smem || scap != c.scap || ns != c.ns {
			t.Errorf("%d positions, %d blocks: smem %d, scap %d, ns %d, ok %v; want %d, %d, %d", c.nmax, c.blocks, smem,
				scap, ns, ok, c.smem, c.scap, c.ns)
		}
	}
}
