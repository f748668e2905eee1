package synth

import (
	"crypto/sha3"
	"fmt"
	"strconv"

	"ember/inference/quant"
)

// Random weights that are valid blocks of every type, made directly rather than by
// quantizing random floats (which would be ~100x slower):
//
// The payload bytes (nibbles, int8 quants, 6-bit scales) are a SHAKE-256 stream keyed by
// the seed, chunk by chunk: chunk c is SHAKE-256(seed + "/" + c), c = 1, 2, ... over the
// whole file, so chunks can be made in parallel and the file is reproducible. Then the
// fp16 scale fields of every block are overwritten through 256-entry tables (the high
// byte: a fixed exponent, random sign/mantissa bits) with positive normal values from one
// binade chosen so the dequantized weights have an RMS near 0.02, the size of trained LLM
// weights (about 1/sqrt(n_embd)): with RMSNorm before every matmul, activations stay O(1)
// through all layers, with no inf/NaN and no float denormals.
//
// For F32, F16, Q8_0, Q4_0, Q5_0, Q4_K and Q6_K this is exactly tools/synth_gguf.py's
// scheme, so the files are byte-identical with its own (same seed, same chunking):
//
//	type  weight formula                 scale binade           ~RMS
//	F16   raw fp16                       |w| in [2^-7, 2^-5)    0.02
//	F32   raw fp32                       |w| in [2^-7, 2^-5)    0.02
//	Q8_0  d*q, q int8                    d in [2^-12, 2^-11)    0.027
//	Q4_0  d*(q-8)                        d in [2^-8, 2^-7)      0.027
//	Q5_0  d*(q-16)                       d in [2^-9, 2^-8)      0.027
//	Q4_K  d*sc*q - dmin*m                d in [2^-14, 2^-13), dmin [2^-11, 2^-10)  0.024
//	Q6_K  d*sc*(q-32), sc -16..15        d in [2^-14, 2^-13)    0.016
//
// The other types of llama.cpp's mixes follow the same idea (ours; the script has none):
//
//	BF16  raw bf16                       |w| in [2^-7, 2^-5)
//	Q4_1  d*q + m, m = -8d               d in [2^-8, 2^-7)
//	Q5_1  d*q + m, m = -16d              d in [2^-9, 2^-8)
//	Q5_K  d*sc*q - dmin*m, sc,m 0..31    d in [2^-14, 2^-13), dmin [2^-10, 2^-9)
//	Q3_K  d*sc*q, sc -32..31, q -4..3    d in [2^-12, 2^-11)
//	Q2_K  d*sc*q - dmin*m, sc,m 0..15    d in [2^-9, 2^-8), dmin [2^-9, 2^-8)
//
// GainLog2 k multiplies every random weight by 2^k (shifts the binades). Norm weights are
// 1.0, as in trained checkpoints at init.

// chunkBytes is the most random bytes drawn at once (one counter value): 32 MiB rounded
// down to whole blocks, as the script does.
const chunkBytes = 32 << 20

// filler turns random bytes into valid blocks; its tables depend only on the gain.
type filler struct {
	seed                                     []byte
	f16, q8d, q40d, q50d, q4kd, q4kdmin, q6d []byte // fp16 high-byte tables
	q41d, q51d, q5kd, q5kdmin, q3kd, q2kd    []byte
	q6sc, f32hi, clear6                      []byte
}

// hiTable maps a random byte to the high byte of an fp16 (s eeeee mm) whose exponent
// field is one of fields (picked by the byte's bits 2..), keeping the two top mantissa
// bits random, and the sign random or clear.
func hiTable(fields []int, signRandom bool) []byte {
	tab := make([]byte, 256)
	for x := range 256 {
		e := fields[(x>>2)%len(fields)]
		s := 0
		if signRandom {
			s = x & 0x80
		}
		tab[x] = byte(s | e<<2 | x&3)
	}
	return tab
}

func newFiller(seed string, gain int) (*filler, error) {
	var err error
	// ef gives the fp16 exponent fields of values in [2^lo, 2^(lo+n)), shifted by the gain.
	ef := func(lo, n int) []int {
		f := make([]int, n)
		for i := range f {
			f[i] = lo + 15 + i + gain
			if f[i] < 1 || f[i] > 30 {
				err = fmt.Errorf("synth: gain 2^%d pushes an fp16 scale out of the normal range", gain)
			}
		}
		return f
	}
	fl := &filler{
		seed:    []byte(seed),
		f16:     hiTable(ef(-7, 2), true),
		q8d:     hiTable(ef(-12, 1), false),
		q40d:    hiTable(ef(-8, 1), false),
		q50d:    hiTable(ef(-9, 1), false),
		q4kd:    hiTable(ef(-14, 1), false),
		q4kdmin: hiTable(ef(-11, 1), false),
		q6d:     hiTable(ef(-14, 1), false),
		q41d:    hiTable(ef(-8, 1), false),
		q51d:    hiTable(ef(-9, 1), false),
		q5kd:    hiTable(ef(-14, 1), false),
		q5kdmin: hiTable(ef(-10, 1), false),
		q3kd:    hiTable(ef(-12, 1), false),
		q2kd:    hiTable(ef(-9, 1), false),
	}
	if err != nil {
		return nil, err
	}
	fl.q6sc = make([]byte, 256)
	fl.f32hi = make([]byte, 256)
	fl.clear6 = make([]byte, 256)
	// fp32 (and bf16) high byte = s eeeeeee: the top 7 exponent bits; the exponent's
	// last bit stays random. Biased exponents 120/121: |w| in [2^-7, 2^-5).
	e32 := 120 + gain
	if e32 < 2 || e32 > 252 {
		return nil, fmt.Errorf("synth: gain 2^%d pushes an fp32 weight out of range", gain)
	}
	for x := range 256 {
		fl.q6sc[x] = byte(int8(x&31 - 16))
		fl.f32hi[x] = byte(x&0x80 | (e32>>1)&0x7f)
		fl.clear6[x] = byte(x & 0x5f) // bits 5 and 7: the top bits of K-quant 6-bit scales
	}
	return fl, nil
}

// canFill reports whether blocks of t can be made.
func canFill(t quant.Type) bool {
	switch t {
	case quant.F32, quant.F16, quant.BF16, quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0,
		quant.Q5_1, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K:
		return true
	}
	return false
}

// random fills buf with the SHAKE-256 stream of chunk counter.
func (fl *filler) random(counter uint64, buf []byte) {
	key := append(append(append([]byte(nil), fl.seed...), '/'), strconv.FormatUint(counter, 10)...)
	h := sha3.NewSHAKE256()
	h.Write(key)
	h.Read(buf)
}

// translate replaces every stride-th byte of b from off on by tab[byte].
func translate(b []byte, off, stride int, tab []byte) {
	for i := off; i < len(b); i += stride {
		b[i] = tab[b[i]]
	}
}

// blocks makes buf (whole blocks of type t) valid blocks from the random chunk counter.
func (fl *filler) blocks(t quant.Type, counter uint64, buf []byte) {
	fl.random(counter, buf)
	switch t {
	case quant.F16:
		translate(buf, 1, 2, fl.f16)
	case quant.BF16:
		translate(buf, 1, 2, fl.f32hi)
	case quant.F32:
		translate(buf, 3, 4, fl.f32hi)
	case quant.Q8_0: // d qs[32]
		translate(buf, 1, 34, fl.q8d)
	case quant.Q4_0: // d qs[16]
		translate(buf, 1, 18, fl.q40d)
	case quant.Q5_0: // d qh[4] qs[16]
		translate(buf, 1, 22, fl.q50d)
	case quant.Q4_1: // d m qs[16]
		minFromD(buf, 20, fl.q41d, 8)
	case quant.Q5_1: // d m qh[4] qs[16]
		minFromD(buf, 24, fl.q51d, 16)
	case quant.Q4_K: // d dmin scales[12] qs[128]
		translate(buf, 1, 144, fl.q4kd)
		translate(buf, 3, 144, fl.q4kdmin)
	case quant.Q5_K: // d dmin scales[12] qh[32] qs[128]
		translate(buf, 1, 176, fl.q5kd)
		translate(buf, 3, 176, fl.q5kdmin)
		for k := 4; k < 12; k++ { // the 6-bit scales and mins' top bits: 0..31
			translate(buf, k, 176, fl.clear6)
		}
	case quant.Q6_K: // ql[128] qh[64] scales[16] (int8) d
		for k := range 16 {
			translate(buf, 192+k, 210, fl.q6sc)
		}
		translate(buf, 209, 210, fl.q6d)
	case quant.Q3_K: // hmask[32] qs[64] scales[12] d
		translate(buf, 109, 110, fl.q3kd)
	case quant.Q2_K: // scales[16] qs[64] d dmin
		translate(buf, 81, 84, fl.q2kd)
		translate(buf, 83, 84, fl.q2kd)
	default:
		panic(fmt.Sprintf("synth: no filler for %v", t)) // canFill is checked first
	}
}

// minFromD sets the d of each block (size bytes) from tab and its min m to -k*d (exact:
// k is a power of two), so the weights d*q + m center on zero.
func minFromD(buf []byte, size int, tab []byte, k float32) {
	for off := 0; off+size <= len(buf); off += size {
		buf[off+1] = tab[buf[off+1]]
		d := quant.FP16ToFP32(uint16(buf[off]) | uint16(buf[off+1])<<8)
		m := quant.FP32ToFP16(-k * d)
		buf[off+2], buf[off+3] = byte(m), byte(m>>8)
	}
}
