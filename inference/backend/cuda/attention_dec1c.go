package cuda

// One row's decode attention past attention_decD_1's positions: attention_decD_1c runs
// its code on dec1cBlocks blocks a KV head, one thread block cluster, each block a chunk
// of the row's positions (kernels/cuda/attention_one.cuh). The blocks copy their older
// keys and values before they wait for the kernel before, as attention_decD_1 does, and
// meet in distributed shared memory; the split kernels (attention_split1) it replaces
// there take ~20 us a layer on the H200 whatever their chunks (NOTES.md, session 37).

// dec1cBlocks is A1_CL (kernels/cuda/attention_dec.cu): the blocks of a KV head's
// cluster, so attention_decD_1c takes up to dec1cBlocks * dec1MaxPositions positions.
const dec1cBlocks = 8

// NoDec1CEnv names an environment variable: when set, one row over more positions than
// attention_decD_1 takes runs on the split kernels, not attention_decD_1c, for timing.
const NoDec1CEnv = "EMBER_CUDA_NO_DEC1C"

// dec1cChunk is the positions a block of attention_decD_1c takes at most, for a row
// bound of n positions: n / dec1cBlocks rounded up to 16, as the kernel cuts the row.
func dec1cChunk(n int) int { return ((n+dec1cBlocks-1)/dec1cBlocks + 15) &^ 15 }

// attentionDec1C launches attention_decD_1c for one row over more positions than
// attention_decD_1 takes and at most dec1cBlocks times that (n1: the rows' bound rounded
// to dec1Step), on the form whose cap holds a block's chunk, and reports whether it did;
// args are the attention kernels' common arguments. Not while the split kernels are
// forced on (their tests).
func (b *Backend) attentionDec1C(args []uint64, rows, nkv, g, hd, vhd, nmax, n1 int) bool {
	if rows != 1 || nmax <= dec1MaxPositions || b.dec.no1 || b.dec.no1c || b.dec.gqa == splitOff ||
		b.split.mode == splitOn || hd != vhd || (hd != 64 && hd != 128) || g > decMaxG {
		return false
	}
	per := dec1cChunk(n1)
	if per > dec1MaxPositions {
		return false
	}
	suf, cap := dec1Form(per, false)
	return b.launchDec1(decName(hd)+"_1c"+suf, args, nkv*dec1cBlocks, hd, cap, g, nkv, vhd)
}
