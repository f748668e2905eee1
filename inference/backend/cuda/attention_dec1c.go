package cuda

import "fmt"

// One row's decode attention past attention_decD_1's positions: attention_decD_1c runs
// its code on dec1cBlocks blocks a KV head, one thread block cluster, each block a chunk
// of the row's positions (kernels/cuda/attention_one.cuh). The blocks copy their older
// keys and values before they wait for the kernel before, as attention_decD_1 does, and
// meet in distributed shared memory; the split kernels (attention_split1) it replaces
// there take ~20 us a layer on the H200 whatever their chunks (NOTES.md, session 37).

// dec1cBlocks is A1_CL (kernels/cuda/attention_dec.cu): the blocks of a KV head's
// cluster, so attention_decD_1c takes up to dec1cBlocks * dec1MaxPositions positions.
const dec1cBlocks = 8

// dec1cMaxBlocks bounds attention_decD_1c's grid: past it (many rows) the batched decode
// kernels take the rows (a guess, for the first device call to measure: 16 rows of 8
// KV heads).
const dec1cMaxBlocks = 1024

// dec1lMaxTiles is the most tiles of dec1MaxPositions a block of attention_decD_1l
// takes (its forms _1l2 and _1l4; their scores stay in registers): one row of up to
// dec1cBlocks * dec1lMaxTiles * dec1MaxPositions positions (4,096); past that the split
// kernels take it. Session 38's call 2: _1l2 at 3,000 positions 359 tok/s against
// split1's 350, _1l4 at 5,000 274 against 326 (its four warps issue too slowly).
const dec1lMaxTiles = 2

// NoDec1LEnv names an environment variable: when set, one row over more positions than
// attention_decD_1c takes runs on the split kernels, not attention_decD_1l, for timing.
const NoDec1LEnv = "EMBER_CUDA_NO_DEC1L"

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
	if per > dec1MaxPositions {
		// Past the cluster's chunks of dec1MaxPositions: attention_decD_1l2 or _1l4,
		// each block's chunk in tiles of dec1MaxPositions (kernels/cuda/attention_long.cu).
		tiles := (per + dec1MaxPositions - 1) / dec1MaxPositions
		if tiles > dec1lMaxTiles || b.dec.no1l {
			return false
		}
		nt := 2
		if tiles > 2 {
			nt = 4
		}
		return b.launchDec1(fmt.Sprintf("%s_1l%d", decName(hd), nt), args, rows, nkv*dec1cBlocks, hd, dec1MaxPositions, g, nkv, vhd)
	}
	suf, cap := dec1Form(per, false)
	return b.launchDec1(decName(hd)+"_1c"+suf, args, rows, nkv*dec1cBlocks, hd, cap, g, nkv, vhd)
}
