package cuda

import (
	"os"
	"strconv"
)

// Decode attention on the tensor cores (kernels/cuda/attention_dec.cu): a token's query
// heads that read one KV head as one m16 tile, so that each of its key and value rows is
// read once per pass for all of them.
//
// attention_mla: DeepSeek's MLA attends each (token, head) over the token's latent rows;
// the model hands the heads as head-major rows of one 576-dim KV head
// (Attention.HeadGroups), and the other kernels take each row alone, so a decode step
// of 64 tokens x 16 heads read every token's latent rows 16 times (894 us a layer on the
// H200 at 600 positions).
//
// attention_dec64/128: grouped-query attention of many decode rows (Llama-3.1-8B at 64
// sequences: 512 (row, KV head) pairs, past what the split kernels take), where
// attention_smem took 161 us a layer at 600 positions, latency-bound.
const (
	// mlaDim is the K (and V) row attention_mla takes: 64 rope + 512 latent dims.
	mlaDim = 576
	// decThreads is a block's threads (DEC_THREADS), decK its key tile (DEC_K).
	decThreads, decK = 256, 64
	// decMinTokens is the fewest tokens (rows / HeadGroups) attention_mla is chosen for:
	// one block a token leaves most of the GPU idle for a few tokens (on the H200 at ~600
	// positions attention_mla took ~68 us for 1 to 64 tokens, the split kernels 29 us for
	// one token and 60 for four; attention_mla_split 18 us for one to four, and it takes
	// fewer tokens only over rows past splitMinPositions: mlaSplitLeast). None of them is
	// chosen by itself with $EMBER_CUDA_NO_MMQ, so that a batch's rows attend as one row
	// does.
	decMinTokens = 6
	// decMinPairs is the fewest (row, KV head) pairs attention_decD is chosen for over
	// caches past shortMaxPositions, when the split kernels decline (any number at or
	// below it).
	decMinPairs = 64
	// decMaxG is the most query heads per KV head (one m16 tile).
	decMaxG = 16
	// dec1MaxPositions is A1_N (attention_one.cuh): the most positions attention_decD_1
	// takes; dec1Threads its block size; dec1Step the fewest positions of its forms
	// (attention_decD_1_64; attention_decD_1_128 between).
	dec1MaxPositions, dec1Threads, dec1Step = 256, 128, 64
)

// dec1Smem is the dynamic shared memory of attention_decD_1's form for cap positions
// (a1_smem): the f16 query tile, every position's key and value rows, the 16 rows of
// probabilities (2 cap + 16 bytes each) and the f32 output.
func dec1Smem(d, cap int) int {
	return 2*16*d + 2*(2*cap*d) + 16*(2*cap+16) + 16*d*4
}

// dec1Form is the form of attention_decD_1 for at most n positions (the kernel name's
// suffix) and its cap: 64, 128 or dec1MaxPositions, the last when full
// ($EMBER_CUDA_DEC1_FULL). Session 34, build/micro/att1.cu's chain of 32 layers on the
// H200: at one position 9.46 us a layer with a cap of 64, 9.78 with 128, 10.57 with 256;
// at 33, 9.98, 10.23 and 10.98 (fewer score groups a warp, in registers and loops).
func dec1Form(n int, full bool) (string, int) {
	switch {
	case full || n > 2*dec1Step:
		return "", dec1MaxPositions
	case n > dec1Step:
		return "_128", 2 * dec1Step
	}
	return "_64", dec1Step
}

// Dec1FullEnv names an environment variable: when set, one row's decode attention takes
// attention_decD_1's form for dec1MaxPositions whatever the context, for timing the
// smaller forms.
const Dec1FullEnv = "EMBER_CUDA_DEC1_FULL"

// NoDec1Env names an environment variable: when set, one row's decode attention runs on
// attention_decD (8 warps, a ring of key tiles) instead of attention_decD_1, for timing.
const NoDec1Env = "EMBER_CUDA_NO_DEC1"

// decSmem is a block's dynamic shared memory (dec_smem): the 16-row f16 query tile, a
// ring of ns tiles of decK key rows, one of value rows unless the values are the keys
// (or the scores are kept), the 16 x decK f16 probabilities (rows of 144 bytes), and
// with scap > 0 the scores of nr rows (the block's real query rows: G, or attention_mla's
// heads up to 16) of scap + 8 floats.
func decSmem(d int, shared bool, scap, ns, nr int) int {
	tiles := 2 * ns
	if shared || scap > 0 {
		tiles = ns
	}
	n := 2*16*d + tiles*2*decK*d + 16*144
	if scap > 0 {
		n += nr * (scap + 8) * 4
	}
	return n
}

// DecTwoPassEnv names an environment variable: when set, the tensor-core decode kernels
// never keep their scores in shared memory (decScap), computing them twice.
const DecTwoPassEnv = "EMBER_CUDA_DEC_TWO_PASS"

// NoMLASplitEnv names an environment variable: when set, attention_mla_split never runs
// (for timing against attention_mla and the split kernels).
const NoMLASplitEnv = "EMBER_CUDA_NO_MLA_SPLIT"

// DecOnEnv names an environment variable: when set, attention_dec64/128 takes every
// grouped-query shape it can that the kernels tried before it (attention_short, split)
// decline, however few rows (for timing against them).
const DecOnEnv = "EMBER_CUDA_DEC_ON"

// DecOwnQ8KEnv names an environment variable: when set, the output projection's Q8_K
// rounding of attention_dec64/128's output stays a launch of its own (for timing against
// the fused rounding).
const DecOwnQ8KEnv = "EMBER_CUDA_DEC_OWN_Q8K"

func decGQAMode() splitMode {
	if os.Getenv(DecOnEnv) != "" {
		return splitOn
	}
	return splitAuto
}

func mlaSplitMode() splitMode {
	if os.Getenv(NoMLASplitEnv) != "" {
		return splitOff
	}
	return splitAuto
}

// decScoresMax is the most shared memory a block keeping its scores may have: for the
// grouped-query kernels, blocks (2 or 3) of them an SM (one K read instead of two is
// worth less than half the blocks in flight), and all of it for attention_mla (one
// block an SM anyway: its 576-dim tiles take 168 KiB), where keeping the scores saves
// computing them again.
func (b *Backend) decScoresMax(d, blocks int) int {
	if d == mlaDim {
		return b.mmqSmem() - 1024 // less the kernel's static 1 KiB
	}
	return b.smSmem()/blocks - 2<<10 // less the static 1 KiB and the 1 KiB the SM reserves a block
}

// decSMSmem is the shared memory of a Hopper SM.
const decSMSmem = 228 << 10

// smSmem is the shared memory of an SM: 1 KiB past a block's most on every GPU since
// Ampere (Hopper 228 KiB, A100 164, RTX 30/40 100), so the blocks a kernel sizes itself
// for fit there too; Hopper's without a device (tests).
func (b *Backend) smSmem() int {
	if b.smemLim > 0 {
		return min(decSMSmem, b.smemLim+1<<10)
	}
	return decSMSmem
}

// decBlocks is the blocks an SM attention_dec64/128 sizes its shared memory for, for a
// launch of pairs blocks on sms SMs: as many as make the grid one wave, two to four (its
// registers are bounded for four), or force (2 to 4) where set. Two leave the most room
// for deeper rings.
func decBlocks(pairs, sms, force int) int {
	if force >= 2 && force <= decMaxBlocks {
		return force
	}
	if sms <= 0 {
		return 2
	}
	return min(decMaxBlocks, max(2, (pairs+sms-1)/sms))
}

// decMaxBlocks is the most blocks an SM attention_dec64/128's registers allow
// (__launch_bounds__(256, 4): 64 registers).
const decMaxBlocks = 4

// DecBlocksEnv names an environment variable: the blocks an SM (2 to 4) attention_dec64/128
// sizes its shared memory for, whatever the grid (decBlocks).
const DecBlocksEnv = "EMBER_CUDA_DEC_BLOCKS"

// DecStagesEnv names an environment variable: a number of key (and value) tiles, 2 to
// 4, that attention_dec64/128's rings hold whenever its shared memory can (decStages).
const DecStagesEnv = "EMBER_CUDA_DEC_STAGES"

// decIntEnv is environment variable name as a number, 0 when unset or not one.
func decIntEnv(name string) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return 0
	}
	return n
}

// decMaxStages is the most tiles a ring of attention_dec64/128 holds (dec_wait's cases);
// attention_mla's and attention_mla_split's hold two (their 576-dim tiles take 72 KiB).
const decMaxStages = 4

// decStages is the tiles of attention_dec64/128's rings for rows of d dims keeping scap
// score columns of nr rows: the most, up to decMaxStages, within decScoresMax (blocks
// an SM; at least two), or b.dec.stages where set and the kernel's shared memory allows
// it. With four, one token over at most 128 positions has all its tiles (two of keys,
// two of values) loading at once.
func (b *Backend) decStages(d, scap, nr, blocks int) int {
	if n := b.dec.stages; n >= 2 && n <= decMaxStages && decSmem(d, false, scap, n, nr) <= b.mmqSmem()-1024 {
		return n
	}
	ns := decMaxStages
	for ns > 2 && decSmem(d, false, scap, ns, nr) > b.decScoresMax(d, blocks) {
		ns--
	}
	return ns
}

// decStagesFor is decStages, or two when the values are the keys (attention_mla).
func (b *Backend) decStagesFor(d int, shared bool, scap, nr, blocks int) int {
	if shared {
		return 2
	}
	return b.decStages(d, scap, nr, blocks)
}

// decScap is the score columns a launch keeps for nr rows of at most nmax positions (a
// whole number of key tiles), or 0 when they do not fit with rings of two tiles within
// blocks an SM (the kernel computes the scores twice) or $EMBER_CUDA_DEC_TWO_PASS is set.
func (b *Backend) decScap(d int, shared bool, nmax, nr, blocks int) int {
	if b.dec.twoPass || nmax <= 0 {
		return 0
	}
	scap := (nmax + decK - 1) / decK * decK
	if decSmem(d, shared, scap, 2, nr) > b.decScoresMax(d, blocks) {
		return 0
	}
	return scap
}

// attDec is the decode attention kernels' state on a Backend.
type attDec struct {
	mla, gqa splitMode      // auto: by decMinTokens / decMinPairs; off: never; on: whenever the shapes allow
	twoPass  bool           // $EMBER_CUDA_DEC_TWO_PASS: never keep the scores (decScap)
	ownQ8K   bool           // $EMBER_CUDA_DEC_OWN_Q8K: the output projection's rounding never joins attention_dec
	no1      bool           // $EMBER_CUDA_NO_DEC1: one row takes attention_decD too, not attention_decD_1
	no1c     bool           // $EMBER_CUDA_NO_DEC1C: no attention_decD_1c (the split kernels take its rows)
	no1l     bool           // $EMBER_CUDA_NO_DEC1L: no attention_decD_1l (the split kernels take its rows)
	l1       bool           // $EMBER_CUDA_DEC1L1: attention_decD_1l1 in attention_decD_1c's place
	lThreads int            // $EMBER_CUDA_DEC1L_THREADS: attention_decD_1l's block size, for PTX made with another AL_W
	lTiles   int            // $EMBER_CUDA_DEC1L_TILES: the most tiles a block of attention_decD_1l takes (dec1lTiles)
	noMLA2   bool           // $EMBER_CUDA_NO_MLA2: prompts at depth keep attention_mla (attention_mla2.go)
	full1    bool           // $EMBER_CUDA_DEC1_FULL: one row takes attention_decD_1's form for dec1MaxPositions whatever the context
	stages   int            // $EMBER_CUDA_DEC_STAGES: attention_dec64/128's ring tiles where they fit (decStages)
	blocks   int            // $EMBER_CUDA_DEC_BLOCKS: the blocks an SM attention_dec64/128 is sized for (decBlocks)
	smem     map[string]int // per kernel: the dynamic shared memory its limit is raised to
	// mlaSplit: attention_mla_split (auto: when two or more spans a token fit the SMs, as
	// mlaSplitLeast says; off: never; on: whenever attention_mla may run, one span a token
	// at least), with
	// at most mlaMaxSpans spans a token when positive (tests); work holds its statistics
	// and partial sums (only grows: a recorded graph keeps the buffer it was recorded with).
	mlaSplit    splitMode
	mlaMaxSpans int
	work        scratch
}

// decKernel reports whether kernel name may run with smem bytes of dynamic shared
// memory, raising its limit when smem is past the one raised before.
func (b *Backend) decKernel(name string, smem int) bool {
	if b.dec.smem == nil {
		b.dec.smem = map[string]int{}
	}
	if smem <= b.dec.smem[name] {
		return true
	}
	if b.raiseSmem(b.kernel(name), smem) != nil {
		return false
	}
	b.dec.smem[name] = smem
	return true
}

// decName is attention_decD's name for heads of hd dims (64 or 128).
func decName(hd int) string {
	if hd == 128 {
		return "attention_dec128"
	}
	return "attention_dec64"
}

// launchDec1 launches name, a form of attention_decD_1 (or _1c, _1l) for cap positions,
// on a grid (rows, gy) of blocks of threads (args: the attention kernels' common
// arguments) and marks it for the next product's rounding; false when its shared memory
// could not be had.
func (b *Backend) launchDec1(name string, args []uint64, rows, gy, threads, hd, cap, g, nkv, vhd int) bool {
	smem := dec1Smem(hd, cap)
	if !b.decKernel(name, smem) {
		return false
	}
	args = append(args, 0, 0, 0, 0, 0, 0) // scap and ns (unused), the Q8_K and f16 rows
	b.launch(name, rows, gy, threads, smem, args...)
	if !b.dec.ownQ8K {
		b.markAttention(name, args, rows, gy, smem, threads, g, nkv, vhd, b.decKernel(name+"_q8", smem), true)
	}
	return true
}

// decLaunchSmem is the dynamic shared memory, kept score columns and ring tiles of a
// launch of kernel name over nr query rows a block of d dims and at most nmax positions,
// sized for blocks an SM: the scores kept where they fit, else computed twice; rings of
// two tiles when the values are the keys (attention_mla), else decStages'; ok is false
// when neither can run.
func (b *Backend) decLaunchSmem(name string, d int, shared bool, nmax, nr, blocks int) (smem, scap, ns int, ok bool) {
	// The scores kept within blocks an SM, else within fewer (down to two): keeping
	// them saves reading the keys twice, worth more than a third or fourth block.
	for blk := blocks; blk >= min(blocks, 2); blk-- {
		if scap = b.decScap(d, shared, nmax, nr, blk); scap > 0 {
			ns = b.decStagesFor(d, shared, scap, nr, blk)
			if smem = decSmem(d, shared, scap, ns, nr); b.decKernel(name, smem) {
				return smem, scap, ns, true
			}
			break
		}
	}
	ns = b.decStagesFor(d, shared, 0, nr, blocks)
	smem = decSmem(d, shared, 0, ns, nr)
	return smem, 0, ns, b.decKernel(name, smem)
}

// attentionMLA launches attention_mla when the rows are head-major groups of one
// latent KV head (V the same rows as K) and reports whether it did.
func (b *Backend) attentionMLA(d, qt, kt, vt, pt, table, seq *tensor, tcols, bs, groups int, scale float32,
	nhead, nkv, hd, vhd, nmax int) bool {
	if b.dec.mla == splitOff || groups < 2 || qt.rows%groups != 0 || nhead != 1 || nkv != 1 ||
		hd != mlaDim || vhd != mlaDim || kt.ptr != vt.ptr || kt.stride != vt.stride {
		return false
	}
	n := qt.rows / groups
	if b.noMMQ && b.dec.mla == splitAuto {
		return false
	}
	if b.attentionMLASplit(d, qt, kt, pt, table, seq, tcols, bs, groups, scale, nmax) {
		return true
	}
	if b.dec.mla == splitAuto && n < decMinTokens {
		return false
	}
	smem, scap, _, ok := b.decLaunchSmem("attention_mla", mlaDim, true, nmax, min(16, groups), 1)
	if !ok {
		return false
	}
	if b.attentionMLA2(d, qt, kt, pt, table, seq, tcols, bs, groups, scale, n, scap) {
		return true
	}
	b.launch("attention_mla", n, (groups+15)/16, decThreads, smem, ptr(d), i64(d.cols), ptr(qt), i64(qt.cols),
		ptr(kt), i64(kt.cols), ptr(pt), f32(scale), ptr(table), i64(tcols), ptr(seq), i64(bs), i64(n), i64(groups),
		i64(scap))
	return true
}

// mlaDeclines reports whether attentionMLA surely declines n tokens' latent rows over
// at most nmax positions (so that the kernels after it in Attention choose): its
// kernels off, or in auto mode a few tokens that the split kernel leaves alone
// (mlaSplitLeast).
func (b *Backend) mlaDeclines(n, nmax int) bool {
	switch {
	case b.dec.mla == splitOff:
		return true
	case b.dec.mla == splitOn || b.dec.mlaSplit == splitOn:
		return false
	}
	return n < decMinTokens && (b.dec.mlaSplit == splitOff || nmax <= splitMinPositions)
}

// attentionDec launches attention_decD for rows*nkv (row, KV head) pairs when it applies
// and reports whether it did; args are the attention kernels' common arguments.
func (b *Backend) attentionDec(args []uint64, rows, nkv, g, hd, vhd, nmax, n1 int) bool {
	if b.dec.gqa == splitOff || hd != vhd || (hd != 64 && hd != 128) || g > decMaxG || rows <= 0 {
		return false
	}
	// A few pairs take it over short caches too (where the split kernels decline): one
	// token over at most 256 positions ran tg128 at 410 tok/s on it against 377 on
	// attention_short and ~366 on attention_smem (Llama-3.1-8B on the H200, one call).
	if b.dec.gqa == splitAuto && ((rows*nkv < decMinPairs && nmax > shortMaxPositions) || b.noMMQ) {
		return false
	}
	name := decName(hd)
	if rows == 1 && nmax > 0 && nmax <= dec1MaxPositions && !b.dec.no1 {
		// one row over a short cache: attention_decD_1 (the older positions' keys and
		// values copied before its wait, four barriers after it); its twin rounds to Q8_0
		suf, cap := dec1Form(n1, b.dec.full1)
		if b.launchDec1(name+"_1"+suf, args, 1, nkv, dec1Threads, hd, cap, g, nkv, vhd) {
			return true
		}
	}
	smem, scap, ns, ok := b.decLaunchSmem(name, hd, false, nmax, g, decBlocks(rows*nkv, b.dev.SMs, b.dec.blocks))
	if !ok {
		return false
	}
	args = append(args, i64(scap), i64(ns), 0, 0, 0, 0)
	b.launch(name, rows, nkv, decThreads, smem, args...)
	if !b.dec.ownQ8K {
		// Each block rounds its KV head's outputs; the twin that rounds to Q8_0
		// (name_q8, fuseQ8) takes the same shared memory.
		b.markAttention(name, args, rows, nkv, smem, decThreads, g, nkv, vhd, b.decKernel(name+"_q8", smem), true)
	}
	return true
}

// mlaSplitLeast is the fewest spans a token attention_mla_split runs with for n tokens
// over rows of at most nmax positions in mode m, 0 for none: forced on one, else two,
// but none for a few tokens (fewer than decMinTokens) over short rows (at most
// splitMinPositions), where attention_smem is quicker than the blocks' meeting (tg128
// from an empty context, 16 heads over at most 128 positions: 276 tok/s with the split).
func mlaSplitLeast(m splitMode, n, nmax int) int {
	switch {
	case m == splitOn:
		return 1
	case m == splitOff, n < decMinTokens && nmax <= splitMinPositions:
		return 0
	}
	return 2
}

// mlaSplitPlan sizes attention_mla_split for n tokens of hg head groups over at most
// nmax positions on sms SMs (0: an H200's): spans of tpb key tiles, at most one block an
// SM in all (every block must be resident at once: they wait for each other), at most
// maxSpans a token when positive. spans 0: fewer than least would run.
func mlaSplitPlan(n, hg, nmax, sms, maxSpans, least int) (spans, tpb int) {
	sms = smsOr(sms)
	tiles := (nmax + decK - 1) / decK
	spans = tiles
	if n*hg > 0 {
		spans = min(spans, sms/(n*hg))
	}
	if maxSpans > 0 {
		spans = min(spans, maxSpans)
	}
	if spans < least || spans < 1 {
		return 0, 0
	}
	tpb = (tiles + spans - 1) / spans
	return (tiles + tpb - 1) / tpb, tpb
}

// attentionMLASplit launches attention_mla_split (attention_mla with each token's
// positions split over blocks, so that a few tokens fill the GPU: at one token and ~600
// positions attention_mla runs 1 block and the split kernels score each head alone) when
// the plan has two or more spans a token (one when forced on) and its kept scores fit,
// and reports whether it did; mlaSplitLeast says when in auto mode.
func (b *Backend) attentionMLASplit(d, qt, kt, pt, table, seq *tensor, tcols, bs, groups int, scale float32,
	nmax int) bool {
	if b.dec.mlaSplit == splitOff || b.dec.mla == splitOff {
		return false
	}
	n, hg := qt.rows/groups, (groups+15)/16
	least := mlaSplitLeast(b.dec.mlaSplit, n, nmax)
	if least == 0 {
		return false
	}
	spans, tpb := mlaSplitPlan(n, hg, nmax, b.dev.SMs, b.dec.mlaMaxSpans, least)
	if spans == 0 {
		return false
	}
	scap := tpb * decK
	smem := decSmem(mlaDim, true, scap, 2, 16)
	if smem > b.decScoresMax(mlaDim, 1) || !b.decKernel("attention_mla_split", smem) {
		return false
	}
	work := b.scratchFor(&b.dec.work, 4*n*hg*spans*16*(2+mlaDim))
	count := b.counters(4 * n * hg)
	if work == 0 || count == 0 {
		return true // b.err is set: nothing more runs
	}
	b.launch("attention_mla_split", n, hg*spans, decThreads, smem, ptr(d), i64(d.cols), ptr(qt), i64(qt.cols),
		ptr(kt), i64(kt.cols), ptr(pt), f32(scale), ptr(table), i64(tcols), ptr(seq), i64(bs), i64(n), i64(groups),
		i64(scap), work, count, i64(spans), i64(tpb))
	return true
}
