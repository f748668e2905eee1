package cuda

import (
	"os"
	"unsafe"
)

// Split attention (flash decoding). attention_smem runs one block per (query row, KV
// head): a decode step of Llama-3.1-8B (8 KV heads) is 8 blocks on 132 SMs, so its cost
// grows with the context while the GPU idles. When the pairs would leave SMs idle and the
// cache is long enough for it to matter, each row's positions are spread over `splits`
// blocks instead (attention_split_stats, then attention_split_pv; see attention.cu). The
// row's length lives on the device, so splits is sized from the pairs and the cache bound,
// and the device cuts each row into ceil(n/splits) positions (whole sub-chunks of
// splitChunk), leaving the blocks past a short row's end idle.
const (
	// splitChunk is the positions a split block scores at a time (SPLIT_CHUNK in
	// attention.cu); a block's chunk is a whole number of them.
	splitChunk = smThreads / 4
	// splitPad is the floats past cmax in each of attention_split1's rows of scores
	// (SPLIT_PAD in attention_split1.cu), so that its tensor-core B loads of several
	// heads fall on other banks.
	splitPad = 8
	// splitBlocksPerSM is the blocks a split launch aims at per SM: the split kernels use
	// 125 registers a thread, so two blocks of 256 threads fit an SM.
	splitBlocksPerSM = 2
	// splitMinPositions: a cache bound (positions) at or below which the split is not
	// worth its two launches; attention_smem is quick on rows this short.
	splitMinPositions = 256
	// splitDefaultSMs stands in for a device that reports no SM count (an H200's 132).
	splitDefaultSMs = 132
)

// smsOr is sms, the device's SM count, or splitDefaultSMs where it reports none.
func smsOr(sms int) int {
	if sms <= 0 {
		return splitDefaultSMs
	}
	return sms
}

// splitMode is the choice between the split and the one-block-per-pair kernels.
type splitMode int

const (
	splitAuto splitMode = iota // by splitCount; off when attnSmem is 0 (NoSharedAttention)
	splitOff                   // never
	splitOn                    // whenever the shapes allow it (tests)
)

// attSplit is the split attention's state on a Backend.
type attSplit struct {
	mode splitMode
	// two keeps the two-launch kernels where the one-launch one would do
	// ($EMBER_CUDA_SPLIT2, tests).
	two bool
	// one is 1 once attention_split1 is loaded with its shared memory limit raised, -1
	// when it may not run, 0 before the first split.
	one int
	// noRing keeps attention_split1's K loads out of its shared-memory ring
	// ($EMBER_CUDA_NO_SPLIT_RING, for timing), noVRing its V loads
	// ($EMBER_CUDA_NO_SPLIT_VRING).
	noRing, noVRing bool
	// noTC keeps attention_split1's scores and p * V off the tensor cores
	// ($EMBER_CUDA_NO_SPLIT_TC, for timing; SplitTC in tests).
	noTC bool
	// work holds F32 chunk statistics [rows*nhead*splits][2] and partial sums
	// [rows*nhead*splits][vhd]; count I32 [rows*nkv] the blocks of each (row, KV head)
	// done, zero between launches (the last block zeroes it again). Both only grow: a
	// recorded graph keeps the buffers it was recorded with, freed at Close.
	work, count scratch
}

// splitCount is the blocks per (query row, KV head) of a split launch for pairs (rows
// times KV heads) over a cache of nmax positions on sms SMs, 0 where one block per pair
// does: the pairs already fill the SMs (splitBlocksPerSM each), or nmax is short. With
// force it is at least 1 whenever it would be 0.
func splitCount(pairs, nmax, sms int, force bool) int {
	sms = smsOr(sms)
	target := splitBlocksPerSM * sms
	if !force && (pairs >= target || nmax <= splitMinPositions) {
		return 0
	}
	return max(1, min((target+pairs-1)/pairs, (nmax+splitChunk-1)/splitChunk))
}

// attentionSplit launches the split kernels when they apply and reports whether it did;
// args are the attention kernels' common arguments and g the query heads per KV head.
func (b *Backend) attentionSplit(args []uint64, rows, nkv, g, hd, vhd, nmax int) bool {
	if b.split.mode == splitOff || (b.split.mode == splitAuto && b.attnSmem == 0) ||
		g > gqaMax || hd%8 != 0 || vhd%8 != 0 {
		return false
	}
	splits := splitCount(rows*nkv, nmax, b.dev.SMs, b.split.mode == splitOn)
	if splits == 0 {
		return false
	}
	if b.attentionSplit1(args, rows, nkv, g, hd, vhd, nmax, splits) {
		return true
	}
	work := b.scratchFor(&b.split.work, 4*rows*nkv*g*splits*(2+vhd))
	count := b.counters(4 * rows * nkv)
	if work == 0 || count == 0 {
		return false // b.err is set: nothing more runs
	}
	args = append(args, work, count, i64(splits))
	smem := 4 * g * (hd + splitChunk)
	b.launch("attention_split_stats", rows, nkv*splits, smThreads, smem, args...)
	b.launch("attention_split_pv", rows, nkv*splits, smThreads, smem+4*smPart, args...)
	return true
}

// counters returns the split's block counters, at least n bytes of zeros (a new buffer
// is zeroed here; nothing queued uses it yet).
func (b *Backend) counters(n int) uint64 {
	s := &b.split.count
	old := s.ptr
	p := b.scratchFor(s, n)
	if p == 0 || p == old {
		return p
	}
	zero := make([]byte, s.size)
	if err := b.h.htod(p, unsafe.Pointer(&zero[0]), len(zero)); err != nil {
		b.fail(err)
		return 0
	}
	return p
}

// split1SmemMax is the dynamic shared memory attention_split1 may take: two blocks an SM
// (227 KiB on Hopper, less each block's static part).
const split1SmemMax = 110 << 10

// split1Smem is the dynamic shared memory an attention_split1 block may take on this GPU:
// split1SmemMax on Hopper; on a GPU with less, half an SM's less 3 KiB for each block's
// static part (1,168 bytes) and the KiB the driver reserves, so that two blocks fit an SM
// as the grid's wait for all its blocks needs (an A100: 79 KiB; an RTX card: 47 KiB).
func (b *Backend) split1Smem() int { return min(split1SmemMax, b.smSmem()/2-3<<10) }

// attentionSplit1 launches the one-launch split kernel (attention_split1) when every
// block of the grid can be resident at once, which its blocks' wait for each other
// needs: at most two blocks an SM (its registers and split1Smem) and no more blocks
// than that; splits shrinks to fit. It reports whether it launched.
func (b *Backend) attentionSplit1(args []uint64, rows, nkv, g, hd, vhd, nmax, splits int) bool {
	if b.split.two || b.split1Off() {
		return false
	}
	splits, cmax, smem, ring := split1Plan(rows*nkv, g, hd, nmax, splits, b.dev.SMs, b.split1Smem(), !b.split.noRing)
	if splits == 0 {
		return false
	}
	work := b.scratchFor(&b.split.work, 4*rows*nkv*g*splits*(2+vhd))
	count := b.counters(4 * rows * nkv)
	if work == 0 || count == 0 {
		return true // b.err is set: nothing more runs
	}
	if ring > 1 && vhd == hd && !b.split.noVRing {
		ring |= split1VRing
		if g <= 8 && !b.split.noTC {
			ring |= split1TC
		}
	}
	args = append(args, work, count, i64(splits), i64(cmax), i64(ring), 0, 0)
	b.launch("attention_split1", rows, nkv*splits, smThreads, smem, args...)
	b.markAttention("attention_split1", args, rows, nkv*splits, smem, smThreads, g, nkv, vhd, false, false)
	return true
}

// split1Plan sizes attention_split1 for pairs (rows x KV heads) of g query heads of hd
// dims over a cache of nmax positions, from the split count the two-launch kernels would
// use, on sms SMs (0: an H200's): at most two blocks an SM in all (splits shrinks to fit),
// cmax the longest chunk a row can get, ring the stages of its K rows' shared-memory ring
// (4 or 2 where there is room and a chunk has more sub-chunks than one, for head dims 64
// and 128 when rings is true; else 0), smem its dynamic shared memory, at most maxSmem.
// splits 0: the grid or the chunk's scores do not fit.
func split1Plan(pairs, g, hd, nmax, splits, sms, maxSmem int, rings bool) (int, int, int, int) {
	sms = smsOr(sms)
	splits = min(splits, 2*sms/pairs)
	if splits < 1 {
		return 0, 0, 0, 0
	}
	per := (nmax + splits - 1) / splits
	cmax := (per + splitChunk - 1) / splitChunk * splitChunk
	smem := 4 * (g*hd + g*(cmax+splitPad) + smPart)
	if smem > maxSmem {
		return 0, 0, 0, 0
	}
	stage := splitChunk * 2 * hd // bytes of a ring stage
	if rings && (hd == 64 || hd == 128) {
		for _, r := range []int{4, 2} {
			if r <= cmax/splitChunk && smem+r*stage <= maxSmem {
				return splits, cmax, smem + r*stage, r
			}
		}
	}
	return splits, cmax, smem, 0
}

// split1Off reports whether attention_split1 cannot run: $EMBER_CUDA_SPLIT2 is set, two
// useful blocks do not fit an SM's shared memory (split1Fits: its blocks wait for each
// other, so a grid sized for two an SM that held one would never finish), or its
// shared memory limit could not be raised (read once, when the kernel is loaded, with
// $EMBER_CUDA_NO_SPLIT_RING).
func (b *Backend) split1Off() bool {
	if b.split.one == 0 {
		b.split.one = 1
		b.split.noRing = os.Getenv(NoSplitRingEnv) != ""
		b.split.noVRing = os.Getenv(NoSplitVRingEnv) != ""
		b.split.noTC = b.split.noTC || os.Getenv(NoSplitTCEnv) != ""
		if os.Getenv(Split2Env) != "" || !b.split1Fits() || b.raiseSmem(b.kernel("attention_split1"), b.split1Smem()) != nil {
			b.split.one = -1
		}
	}
	return b.split.one < 0
}

// NoSplitRingEnv names an environment variable: when set, attention_split1 loads its K
// rows straight into registers, a sub-chunk at a time, not through its shared-memory
// ring (for timing).
const NoSplitRingEnv = "EMBER_CUDA_NO_SPLIT_RING"

// NoSplitVRingEnv names an environment variable: when set, attention_split1's V rows
// are loaded into registers, four a thread in flight, not through the ring its K rows
// used (for timing).
const NoSplitVRingEnv = "EMBER_CUDA_NO_SPLIT_VRING"

// split1VRing is attention_split1's flag beside the ring's stages (SPLIT_VRING): its V
// rows come through the ring too (head dims equal).
const split1VRing = 16

// split1TC is attention_split1's flag beside split1VRing (SPLIT_TC): its scores and
// p * V run on the tensor cores (at most eight query heads a KV head), their sums in
// the tensor cores' order, so within f16 rounding of the probabilities of the other
// form's (TestSplit1TC), not its bits.
const split1TC = 32

// NoSplitTCEnv names an environment variable: when set, attention_split1 computes its
// scores and p * V with the SIMT code (the bits of attention_smem), not on the tensor
// cores (for timing).
const NoSplitTCEnv = "EMBER_CUDA_NO_SPLIT_TC"

// Split2Env names an environment variable: when set, split decode attention always runs
// as two launches (attention_split_stats, attention_split_pv), for timing against the
// one-launch kernel (attention_split1).
const Split2Env = "EMBER_CUDA_SPLIT2"
