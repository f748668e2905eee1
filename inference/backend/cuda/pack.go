package cuda

import (
	"encoding/binary"
	"runtime"
	"sync"

	"ember/inference/quant"
)

// Weights are rewritten on the host before they are copied to the device: Q8_0 and Q6_K
// rows into the layout of kernels/cuda/common.cuh (pack), Q5_0 rows into Q8_0's
// (packWidenQ5, widen.go). Rows are split over the host's cores: a model's largest
// tensors are hundreds of MB (DeepSeek-V2-Lite's experts, an 8B's Q8_0 output head).
// Measured on a 2-core x86 host (session 45): pack of a 196 MB Q8_0 tensor 216 MB/s on
// one core, 407 on two; Q5_0 widening 74 MB/s as a byte loop (1.7 s for one of
// V2-Lite's 127 MB expert stacks, about 13 of them), 1,710 MB/s eight values a word on
// two cores.

// packMinBytes is the least output a goroutine takes: smaller tensors are rewritten on
// the calling one.
const packMinBytes = 4 << 20

// overRows runs f on [0, rows) in contiguous parts, one a goroutine, up to GOMAXPROCS of
// them and none smaller than packMinBytes of output (size bytes in all).
func overRows(rows, size int, f func(r0, r1 int)) {
	n := min(runtime.GOMAXPROCS(0), rows, size/packMinBytes+1)
	if n <= 1 {
		f(0, rows)
		return
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(rows*i/n, rows*(i+1)/n)
		}()
	}
	wg.Wait()
}

// pack rewrites Q8_0 and Q6_K rows (rb bytes each in GGUF order) into the device layout
// of kernels/cuda/common.cuh, rows of stride bytes (the padding zero).
func pack(typ quant.Type, rows, cols, rb, stride int, src []byte) []byte {
	out := make([]byte, rows*stride)
	overRows(rows, len(out), func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			in, o := src[r*rb:(r+1)*rb], out[r*stride:(r+1)*stride]
			switch typ {
			case quant.Q8_0:
				nb := cols / 32
				for ib := 0; ib < nb; ib++ {
					blk := in[34*ib : 34*ib+34]
					copy(o[32*ib:32*ib+32], blk[2:34])
					o[32*nb+2*ib], o[32*nb+2*ib+1] = blk[0], blk[1]
				}
			case quant.Q6_K:
				nb := cols / 256
				for ib := 0; ib < nb; ib++ {
					blk := in[210*ib : 210*ib+210]
					copy(o[128*ib:], blk[0:128])
					copy(o[128*nb+64*ib:], blk[128:192])
					copy(o[192*nb+16*ib:], blk[192:208])
					copy(o[208*nb+2*ib:], blk[208:210])
				}
			}
		}
	})
	return out
}

// packWidenQ5 rewrites Q5_0 rows (22 bytes a block, GGUF order) as Q8_0 rows of the same
// values in pack's device layout (each block's 32 int8 values, then the row's scales),
// rows of stride bytes: what pack(Q8_0) of widenQ5's rows gives, in one pass.
func packWidenQ5(rows, cols, stride int, src []byte) []byte {
	out := make([]byte, rows*stride)
	nb, rb := cols/32, 22*cols/32
	overRows(rows, len(out), func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			in, o := src[r*rb:(r+1)*rb], out[r*stride:(r+1)*stride]
			for ib := 0; ib < nb; ib++ {
				widenQ5Block(o[32*ib:32*ib+32], in[22*ib:22*ib+22])
				o[32*nb+2*ib], o[32*nb+2*ib+1] = in[22*ib], in[22*ib+1]
			}
		}
	})
	return out
}

// q5Fill[b]: byte i is 0 when bit i of b is set, else 0xF0. OR-ed onto eight low nibbles
// it gives (nibble | bit << 4) - 16 as int8 bytes: the nibble itself when the bit is set,
// nibble - 16 (nibble | 0xF0) when not.
var q5Fill = func() (t [256]uint64) {
	for b := range t {
		for i := range 8 {
			if b>>i&1 == 0 {
				t[b] |= 0xF0 << (8 * i)
			}
		}
	}
	return t
}()

// widenQ5Block writes the 32 int8 values of the Q5_0 block in (22 bytes: the scale, qh,
// 16 bytes of nibbles) to o, eight at a time: value j < 16 is qs[j]'s low nibble with
// bit j of qh, value j + 16 its high nibble with bit j + 16.
func widenQ5Block(o, in []byte) {
	const lo = 0x0F0F0F0F0F0F0F0F
	_, _ = o[31], in[21]
	qh := binary.LittleEndian.Uint32(in[2:6])
	a, b := binary.LittleEndian.Uint64(in[6:14]), binary.LittleEndian.Uint64(in[14:22])
	binary.LittleEndian.PutUint64(o[0:8], a&lo|q5Fill[qh&0xFF])
	binary.LittleEndian.PutUint64(o[8:16], b&lo|q5Fill[qh>>8&0xFF])
	binary.LittleEndian.PutUint64(o[16:24], a>>4&lo|q5Fill[qh>>16&0xFF])
	binary.LittleEndian.PutUint64(o[24:32], b>>4&lo|q5Fill[qh>>24])
}
