package cuda

import "fmt"

// One row's decode attention past attention_decD_1's positions (or rows that are each
// their sequence's one new position, Attention.OneNew): attention_decD_1c runs its code
// on dec1cBlocks blocks a KV head, one thread block cluster, each block a chunk of the
// row's positions (kernels/cuda/attention_one.cuh). The blocks copy their older keys and
// values before they wait for the kernel before, as attention_decD_1 does, and meet in
// distributed shared memory; the split kernels (attention_split1) it replaces there take
// ~20 us a layer on the H200 whatever their chunks (NOTES.md, session 37). Past 2,048
// positions attention_decD_1lN (kernels/cuda/attention_long.cu) does the same with each
// block's chunk in N tiles on 16 warps (session 38: +11-18% for one stream at 3,000 to
// 8,000 positions).

// dec1cBlocks is A1_CL (kernels/cuda/attention_one.cuh): the blocks of a KV head's
// cluster, so attention_decD_1c takes up to dec1cBlocks * dec1MaxPositions positions.
const dec1cBlocks = 8

// dec1cMaxBlocks bounds attention_decD_1c's grid: past it (many rows) the batched decode
// kernels take the rows (16 rows of 8 KV heads; session 38: 8 rows at 1,500 positions
// 676 tok/s against split1's 675, 4 rows 659 against 646, 2 rows 485 against 462).
const dec1cMaxBlocks = 1024

// dec1lMaxTiles is the most tiles of dec1MaxPositions a block of attention_decD_1l
// takes (its forms _1l1, _1l2, _1l4 and _1l8; their scores stay in registers): one row
// of up to dec1cBlocks * dec1lMaxTiles * dec1MaxPositions positions (16,384); past that
// the split kernels take it. dec1lThreads is its block size (AL_W warps).
const dec1lMaxTiles, dec1lThreads = 8, 512

// dec1lTiles is the most tiles a block of attention_decD_1l takes for head dim hd, or
// force (1 to dec1lMaxTiles) where set: four, past which attention_split1 (its K and V
// rows through its ring, on the tensor cores) is ahead of _1l8: for 128-dim heads
// (session 84, 8B tg128 after 8,192 tokens on two H100s: 281.7 against 276.0 and 273.6
// against 256.5; _1l4 after 4,096 ahead of it, 351.3 against 311.5 and 328.1 against
// 309.9) and for 64-dim heads (session 86, 1B after 8,192: 1,023.4 against 865.6;
// session 88 on an H100 with the tensor-core split1: 1,058.8 against 875.6).
func dec1lTiles(hd, force int) int {
	if force >= 1 && force <= dec1lMaxTiles {
		return force
	}
	return 4
}

// NoDec1LEnv names an environment variable: when set, one row over more positions than
// attention_decD_1c takes runs on the split kernels, not attention_decD_1l, for timing.
const NoDec1LEnv = "EMBER_CUDA_NO_DEC1L"

// Dec1L1Env names an environment variable: when set, attention_decD_1l1 (a chunk a
// block in one tile, on 16 warps) runs where attention_decD_1c (4 warps) would, for
// timing.
const Dec1L1Env = "EMBER_CUDA_DEC1L1"

// Dec1LThreadsEnv names an environment variable: attention_decD_1l's block size in
// place of dec1lThreads, for timing PTX made with another AL_W (32 threads a warp).
const Dec1LThreadsEnv = "EMBER_CUDA_DEC1L_THREADS"

// Dec1LTilesEnv names an environment variable: the most tiles (1, 2, 4 or 8) a block of
// attention_decD_1l takes before the split kernels take the row, in place of
// dec1lTiles's choice, for timing.
const Dec1LTilesEnv = "EMBER_CUDA_DEC1L_TILES"

// NoDec1CEnv names an environment variable: when set, one row over more positions than
// attention_decD_1 takes runs on the split kernels, not attention_decD_1c, for timing.
const NoDec1CEnv = "EMBER_CUDA_NO_DEC1C"

// dec1cChunk is the positions a block of attention_decD_1c takes at most, for a row
// bound of n positions: n / dec1cBlocks rounded up to 16, as the kernel cuts the row.
func dec1cChunk(n int) int { return ((n+dec1cBlocks-1)/dec1cBlocks + 15) &^ 15 }

// attentionDec1C launches attention_decD_1c for one row, or rows that are each their
// sequence's one new position (oneNew), over more positions than attention_decD_1
// takes and at most dec1cBlocks times that (n1: the rows' bound rounded to dec1Step), on
// the form whose cap holds a block's chunk, while the rows' blocks are at most
// dec1cMaxBlocks; it reports whether it launched. args are the attention kernels' common
// arguments. Not while the split kernels are forced on (their tests).
func (b *Backend) attentionDec1C(args []uint64, rows, nkv, g, hd, vhd, nmax, n1 int, oneNew bool) bool {
	if (rows != 1 && !oneNew) || rows*nkv*dec1cBlocks > dec1cMaxBlocks || nmax <= dec1MaxPositions || b.dec.no1 || b.dec.no1c || b.dec.gqa == splitOff ||
		b.split.mode == splitOn || hd != vhd || (hd != 64 && hd != 128) || g > decMaxG {
		return false
	}
	per := dec1cChunk(n1)
	if per > dec1MaxPositions || b.dec.l1 {
		// Past the cluster's chunks of dec1MaxPositions: attention_decD_1lN, each block's
		// chunk in N tiles of dec1MaxPositions (kernels/cuda/attention_long.cu).
		tiles := (per + dec1MaxPositions - 1) / dec1MaxPositions
		if tiles > dec1lTiles(hd, b.dec.lTiles) || b.dec.no1l {
			return false
		}
		nt := 1
		for nt < tiles {
			nt *= 2
		}
		threads := dec1lThreads
		if b.dec.lThreads > 0 {
			threads = b.dec.lThreads
		}
		return b.launchDec1(fmt.Sprintf("%s_1l%d", decName(hd), nt), args, rows, nkv*dec1cBlocks, threads, hd,
			dec1MaxPositions, g, nkv, vhd)
	}
	suf, cap := dec1Form(per, false)
	return b.launchDec1(decName(hd)+"_1c"+suf, args, rows, nkv*dec1cBlocks, dec1Threads, hd, cap, g, nkv, vhd)
}
