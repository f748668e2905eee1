package cuda

import (
	"os"
	"strconv"
)

// Short-context decode attention (kernels/cuda/attention_short.cu): one block a (query
// row, KV head) that copies the row's whole context into shared memory at once, for a
// few rows over at most shortMaxPositions positions, where batch-1 decode is a chain of
// round trips rather than a stream of bytes. Auto mode takes it for DeepSeek's latent
// rows (a few tokens of 16 head rows): tg128 from an empty context 298 -> 322-339 tok/s
// on the H200 (attention_smem before). Grouped-query heads take it only when forced
// (tests, ShortAttention): for Llama-3.1-8B attention_dec128 was quicker in the decode
// chain (tg128 410 against 377; attentionDec).
const (
	// shortMaxPositions is the longest cache bound (Attention's nmax, a multiple of
	// maxLenStep) the kernel is chosen for by itself; past it the split kernels spread
	// a row's positions over many blocks.
	shortMaxPositions = 256
	// shortSmemMax is the dynamic shared memory a block may take: all of an SM's 227 KiB
	// less the kernel's static part (~2.2 KiB), one block an SM.
	shortSmemMax = 224 << 10
	// shortMaxTile is the most positions a tile takes (a position a thread finds its
	// cache row).
	shortMaxTile = 256
)

// NoShortEnv names an environment variable: when set, attention_short never runs (for
// timing against the other decode kernels).
const NoShortEnv = "EMBER_CUDA_NO_SHORT"

// ShortTileEnv names an environment variable: the most positions an attention_short
// tile takes (at least 32, at most shortMaxTile), for timing smaller tiles (less shared
// memory a block, V read again past one tile).
const ShortTileEnv = "EMBER_CUDA_SHORT_TILE"

// ShortNarrowEnv names an environment variable: when set, MLA's latent rows take
// attention_short576 (256 threads a block) instead of attention_short576w (512), for
// timing. The wide block runs twice the positions a scoring round and 7 position lanes
// in P V against 3: V2-Lite tg128 +0.5% on the H200 (build/wip/s65-call1).
const ShortNarrowEnv = "EMBER_CUDA_SHORT_NARROW"

// ShortGQAEnv names an environment variable: when set, auto mode also gives
// grouped-query heads' decode rows (fewer than decMinTokens over at most
// shortMaxPositions) to attention_short64/128 instead of attention_decD(_1), for timing
// (last compared in session 9, before either kernel took its present form).
const ShortGQAEnv = "EMBER_CUDA_SHORT_GQA"

// shortWideThreads is attention_short576w's block.
const shortWideThreads = 512

// attShort is the short-context kernel's state on a Backend.
type attShort struct {
	read   bool      // $EMBER_CUDA_NO_SHORT, _SHORT_TILE, _SHORT_NARROW and _SHORT_GQA were read
	mode   splitMode // auto: few rows over short rows; off: never; on: whenever the shapes allow
	tile   int       // the most positions a tile takes
	narrow bool      // MLA's latent rows on attention_short576, not attention_short576w
	// noLatent: no kernel for MLA's latent rows (the compatibility PTX has neither
	// attention_short576 nor _576w: their rows come by bulk copies).
	noLatent bool
	gqa      bool // auto mode also takes grouped-query decode rows ($EMBER_CUDA_SHORT_GQA)
}

// shortKernel names the kernel for K heads of hd dims and V heads of vhd dims (kv1: V
// is the K rows themselves, MLA's latent rows; narrow: those on the 256-thread
// attention_short576), "" when none takes them, and its threads a block.
func shortKernel(hd, vhd int, kv1, narrow bool) (string, int) {
	switch {
	case kv1 && hd == mlaDim && vhd == mlaDim && narrow:
		return "attention_short576", smThreads
	case kv1 && hd == mlaDim && vhd == mlaDim:
		return "attention_short576w", shortWideThreads
	case kv1 || hd != vhd:
		return "", 0
	case hd == 64:
		return "attention_short64", smThreads
	case hd == 128:
		return "attention_short128", smThreads
	}
	return "", 0
}

// shortSmem is a block's dynamic shared memory (attention_short.cu) on threads threads:
// the K tile of cap rows, the V tile unless kv1, the group's query (g*hd floats), the
// scores (g*scap floats) and the partial sums (a warp's for narrow V heads, else a
// position lane's).
func shortSmem(threads, hd, vhd int, kv1 bool, g, cap, scap int) int {
	n := cap * 2 * hd
	if !kv1 {
		n += cap * 2 * vhd
	}
	dg := vhd / 8
	ng := threads / 32
	if dg >= 32 {
		ng = threads / dg
	}
	return n + 4*(g*hd+g*scap+ng*g*vhd)
}

// shortPlan is the tile (positions, at most tile) and dynamic shared memory (at most
// smax) of a launch of threads threads over rows of at most nmax positions, cap 0 when
// not even 32 positions fit.
func shortPlan(threads, hd, vhd int, kv1 bool, g, nmax, tile, smax int) (cap, smem int) {
	cap = min(nmax, tile)
	for ; cap >= 32; cap -= 32 {
		if smem = shortSmem(threads, hd, vhd, kv1, g, cap, nmax); smem <= smax {
			return cap, smem
		}
	}
	return 0, 0
}

// shortMode is the kernel's mode, reading $EMBER_CUDA_NO_SHORT, $EMBER_CUDA_SHORT_TILE,
// $EMBER_CUDA_SHORT_NARROW and $EMBER_CUDA_SHORT_GQA once.
func (b *Backend) shortMode() splitMode {
	s := &b.short
	if !s.read {
		s.read, s.tile = true, shortMaxTile
		if os.Getenv(NoShortEnv) != "" {
			s.mode = splitOff
		}
		if n, err := strconv.Atoi(os.Getenv(ShortTileEnv)); err == nil {
			s.tile = max(32, min(n, shortMaxTile))
		}
		s.narrow = os.Getenv(ShortNarrowEnv) != ""
		s.gqa = os.Getenv(ShortGQAEnv) != ""
	}
	return s.mode
}

// attentionShort launches attention_short for rows query rows of nkv KV heads (g query
// heads each) when it applies and reports whether it did: in auto mode for MLA's rows of
// fewer than decMinTokens tokens (groups head rows each) over at most
// shortMaxPositions. args are the attention kernels' common arguments; kv1 says
// V is the K rows themselves (one latent KV head, head-major rows of groups heads);
// each head's output leaves out its first ocol dims (AttentionLatent); oneNew is
// Attention.OneNew.
func (b *Backend) attentionShort(args []uint64, rows, nkv, g, hd, vhd, nmax, groups int, kv1 bool, ocol int, oneNew bool) bool {
	mode := b.shortMode()
	name, threads := shortKernel(hd, vhd, kv1, b.short.narrow)
	if mode == splitOff || name == "" || g > gqaMax || rows <= 0 || nmax <= 0 || (kv1 && (g != 1 || b.short.noLatent)) {
		return false
	}
	// The cache rows are copied 16 bytes at a time: their strides (args 5 and 7, in
	// halves) must keep them aligned.
	if int64(args[5])%8 != 0 || int64(args[7])%8 != 0 {
		return false
	}
	if mode == splitAuto {
		// MLA's latent rows only: grouped-query heads run on attention_dec128, quicker
		// in a decode step's chain (attentionDec).
		few := kv1 && groups >= 2 && rows%groups == 0 && rows/groups < decMinTokens
		few = few || (b.short.gqa && !kv1 && rows < decMinTokens)
		if !few || nmax > shortMaxPositions || b.noMMQ {
			return false
		}
	}
	cap, smem := shortPlan(threads, hd, vhd, kv1, g, nmax, b.short.tile, b.shortSmem())
	if cap == 0 || !b.decKernel(name, smem) {
		return false
	}
	// A row that is its sequence's one new position (one row, one token's head rows, or
	// the host's word) has every older cache row written by earlier steps: the kernel
	// copies them before its wait (pre).
	pre := 0
	if oneNew || rows == 1 || (kv1 && rows == groups) {
		pre = 1
	}
	args = append(args, i64(cap), i64(nmax), i64(pre), i64(ocol), 0, 0)
	b.launch(name, rows, nkv, threads, smem, args...)
	// The next product's Q8_K rounding may join it when a group's outputs are whole
	// 256-element blocks (not MLA's 576-dim rows, but their 512 latent dims).
	b.markAttention(name, args, rows, nkv, smem, threads, g, nkv, vhd-ocol, false, false)
	return true
}
