package cuda

// SplitAttention makes b split every attention whose shapes the split kernels take
// (attention_split.go), however few positions or many rows, so that tests cover them;
// with on false, b never splits.
func SplitAttention(b *Backend, on bool) {
	b.split.mode = splitOff
	if on {
		b.split.mode = splitOn
	}
}

// SplitAttentionTwo makes b's split attention run as two launches (attention_split_stats
// and attention_split_pv) instead of attention_split1.
func SplitAttentionTwo(b *Backend) { b.split.two = true }

// MLAAttention makes b run attention_mla whenever the shapes allow it (on) or never.
func MLAAttention(b *Backend, on bool) {
	b.dec.mla = splitOff
	if on {
		b.dec.mla = splitOn
	}
}

// MLASplit makes b run attention_mla_split whenever attention_mla may run (on, with at
// most maxSpans spans a token when positive) or never.
func MLASplit(b *Backend, on bool, maxSpans int) {
	b.dec.mlaSplit, b.dec.mlaMaxSpans = splitOff, maxSpans
	if on {
		b.dec.mlaSplit = splitOn
	}
}

// DecodeAttention makes b run attention_dec64/128 whenever the shapes allow it (on) or
// never.
func DecodeAttention(b *Backend, on bool) {
	b.dec.gqa = splitOff
	if on {
		b.dec.gqa = splitOn
	}
}

// DecTwoPass makes b's tensor-core decode kernels compute the scores twice (on) instead
// of keeping them when they fit.
func DecTwoPass(b *Backend, on bool) { b.dec.twoPass = on }

// DecScap is the score columns a decode attention launch of pairs blocks of nr query
// rows of d dims (shared: the values are the keys, one block an SM) over at most nmax
// positions keeps.
func DecScap(b *Backend, d int, shared bool, nmax, nr, pairs int) int {
	blocks := 1
	if !shared {
		blocks = decBlocks(pairs, b.dev.SMs, b.dec.blocks)
	}
	return b.decScap(d, shared, (nmax+maxLenStep-1)/maxLenStep*maxLenStep, nr, blocks)
}

// ShortAttention makes b run attention_short whenever the shapes allow it (on), however
// many rows or long the cache, or never.
func ShortAttention(b *Backend, on bool) {
	b.short.read, b.short.mode, b.short.tile = true, splitOff, shortMaxTile
	if on {
		b.short.mode = splitOn
	}
}

// DecStages makes b's attention_dec64/128 rings hold n tiles where they fit (0: its own
// choice, decStages) and reports the tiles a launch keeping scap score columns of nr
// d-dim rows, sized for two blocks an SM, gets.
func DecStages(b *Backend, n, d, scap, nr int) int {
	b.dec.stages = n
	return b.decStages(d, scap, nr, 2)
}

// Dec1Cluster makes b run one row's decode attention past attention_decD_1's positions
// on attention_decD_1c or _1l (on, the default) or on the split kernels.
func Dec1Cluster(b *Backend, on bool) { b.dec.no1c, b.dec.no1l = !on, !on }

// Dec1LTiles sets the most tiles a block of attention_decD_1l takes on b (0: dec1lTiles's
// choice), as $EMBER_CUDA_DEC1L_TILES does.
func Dec1LTiles(b *Backend, n int) { b.dec.lTiles = n }

// Dec1L1 makes b run attention_decD_1l1 where attention_decD_1c would run (on), or not.
func Dec1L1(b *Backend, on bool) { b.dec.l1 = on }

// MLA2 makes b run prompts at depth on attention_mla2 (on, the default) or attention_mla.
func MLA2(b *Backend, on bool) { b.dec.noMLA2 = !on }

// SplitTC makes b's attention_split1 compute its scores and p * V on the tensor cores
// where it may (on, the default) or always with the SIMT code.
func SplitTC(b *Backend, on bool) { b.split.noTC = !on }

// SmemLimited reports whether b's shared memory a block is below Hopper's (an RTX card's
// 99 KiB, an A100's 163, or $EMBER_CUDA_SMEM_LIMIT): kernels and plans sized for Hopper
// may then not run, and tests that force them skip.
func SmemLimited(b *Backend) bool { return b.smemLim > 0 && b.smemLim < mmqSmemMax }

// Split1Fits reports whether attention_split1 may run on b (two of its blocks fit an SM).
func Split1Fits(b *Backend) bool { return b.split1Fits() }
