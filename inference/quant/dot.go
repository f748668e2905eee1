package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DotFunc returns the dot product of one row of weights of type t (n elements, raw
// blocks in w) with one activation row already quantized to t.VecDotType() (raw blocks in
// x). n must be a multiple of the block size, and w and x exactly the bytes of n elements
// of their types; otherwise the result is NaN (use DotRow for an error instead). The
// result is what llama.cpp's scalar (generic) ggml_vec_dot_<t>_<partner> returns: the
// same integer sums and the same float32 (or, for F32/F16/BF16, float64) accumulation
// order.
type DotFunc func(w, x []byte, n int) float32

// dotters hold the kernels; they may assume the lengths were checked.
var dotters = map[Type]func(w, x []byte, n int) float32{
	F32:  dotF32,
	F16:  dotF16,
	BF16: dotBF16,
	Q4_0: dotQ4_0,
	Q4_1: dotQ4_1,
	Q5_0: dotQ5_0,
	Q5_1: dotQ5_1,
	Q8_0: dotQ8_0,
	Q2_K: dotQ2_K,
	Q3_K: dotQ3_K,
	Q4_K: dotQ4_K,
	Q5_K: dotQ5_K,
	Q6_K: dotQ6_K,
}

// Dot returns the DotFunc for weights of type t: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, Q2_K, Q3_K, Q4_K, Q5_K or Q6_K.
func Dot(t Type) (DotFunc, error) {
	f, ok := dotters[t]
	if !ok {
		return nil, fmt.Errorf("quant: no dot product for %v", t)
	}
	vt, _ := t.VecDotType()
	return func(w, x []byte, n int) float32 {
		if !rowFits(t, n, len(w)) || !rowFits(vt, n, len(x)) {
			return float32(math.NaN())
		}
		return f(w, x, n)
	}, nil
}

// DotRow is Dot(t) applied once, with an error for unsupported types or wrong lengths.
func DotRow(t Type, w, x []byte, n int) (float32, error) {
	f, ok := dotters[t]
	if !ok {
		return 0, fmt.Errorf("quant: no dot product for %v", t)
	}
	vt, _ := t.VecDotType()
	if err := checkRow("dot weights", t, n, len(w)); err != nil {
		return 0, err
	}
	if err := checkRow("dot activations", vt, n, len(x)); err != nil {
		return 0, err
	}
	return f(w, x, n), nil
}

// rowFits is checkRow without building an error.
func rowFits(t Type, n, nbytes int) bool {
	if n < 0 {
		return false
	}
	want, err := RowBytes(t, uint64(n))
	return err == nil && want == uint64(nbytes)
}

// i8 reads b[off] as a signed byte, widened.
func i8(b []byte, off int) int32 { return int32(int8(b[off])) }

// q8KBsum reads bsums[j] of a Q8_K block.
func q8KBsum(b []byte, j int) int32 { return int32(int16(binary.LittleEndian.Uint16(b[260+2*j:]))) }

// ---- float types: ggml_vec_dot_f32/f16/bf16 scalar paths, a float64 sum of float32 products ----

func dotF32(w, x []byte, n int) float32 {
	var sum float64
	for i := 0; i < n; i++ {
		sum += float64(f32At(w, 4*i) * f32At(x, 4*i))
	}
	return float32(sum)
}

func dotF16(w, x []byte, n int) float32 {
	var sum float64
	for i := 0; i < n; i++ {
		sum += float64(f16At(w, 2*i) * f16At(x, 2*i))
	}
	return float32(sum)
}

func dotBF16(w, x []byte, n int) float32 {
	var sum float64
	for i := 0; i < n; i++ {
		a := BF16ToFP32(binary.LittleEndian.Uint16(w[2*i:]))
		b := BF16ToFP32(binary.LittleEndian.Uint16(x[2*i:]))
		sum += float64(a * b)
	}
	return float32(sum)
}

// ---- 32-element blocks against Q8_0 / Q8_1 ----

// dotQ4_0 is ggml_vec_dot_q4_0_q8_0: sum over blocks of sumi*d_w*d_x, sumi = sum (q4-8)*q8.
func dotQ4_0(w, x []byte, n int) float32 {
	var sumf float32
	for ib := 0; ib < n/qk; ib++ {
		bw, bx := w[ib*18:ib*18+18], x[ib*34:ib*34+34]
		var sumi int32
		for j := 0; j < qk/2; j++ {
			v0 := int32(bw[2+j]&0x0f) - 8
			v1 := int32(bw[2+j]>>4) - 8
			sumi += v0*i8(bx, 2+j) + v1*i8(bx, 2+j+qk/2)
		}
		sumf += float32(float32(float32(sumi)*f16At(bw, 0)) * f16At(bx, 0))
	}
	return sumf
}

// dotQ4_1 is ggml_vec_dot_q4_1_q8_1: sum of d_w*d_x*sumi + m_w*s_x (s_x = d_x*sum q8).
func dotQ4_1(w, x []byte, n int) float32 {
	var sumf float32
	for ib := 0; ib < n/qk; ib++ {
		bw, bx := w[ib*20:ib*20+20], x[ib*36:ib*36+36]
		var sumi int32
		for j := 0; j < qk/2; j++ {
			sumi += int32(bw[4+j]&0x0f)*i8(bx, 4+j) + int32(bw[4+j]>>4)*i8(bx, 4+j+qk/2)
		}
		dd := f16At(bw, 0) * f16At(bx, 0)
		sumf += float32(dd*float32(sumi)) + float32(f16At(bw, 2)*f16At(bx, 2))
	}
	return sumf
}

// dotQ5_0 is ggml_vec_dot_q5_0_q8_0.
func dotQ5_0(w, x []byte, n int) float32 {
	var sumf float32
	for ib := 0; ib < n/qk; ib++ {
		bw, bx := w[ib*22:ib*22+22], x[ib*34:ib*34+34]
		qh := binary.LittleEndian.Uint32(bw[2:])
		var sumi int32
		for j := 0; j < qk/2; j++ {
			h0, h1 := q5High(qh, j)
			x0 := int32(bw[6+j]&0x0f|h0) - 16
			x1 := int32(bw[6+j]>>4|h1) - 16
			sumi += x0*i8(bx, 2+j) + x1*i8(bx, 2+j+qk/2)
		}
		dd := f16At(bw, 0) * f16At(bx, 0)
		sumf += float32(dd * float32(sumi))
	}
	return sumf
}

// dotQ5_1 is ggml_vec_dot_q5_1_q8_1.
func dotQ5_1(w, x []byte, n int) float32 {
	var sumf float32
	for ib := 0; ib < n/qk; ib++ {
		bw, bx := w[ib*24:ib*24+24], x[ib*36:ib*36+36]
		qh := binary.LittleEndian.Uint32(bw[4:])
		var sumi int32
		for j := 0; j < qk/2; j++ {
			h0, h1 := q5High(qh, j)
			sumi += int32(bw[8+j]&0x0f|h0)*i8(bx, 4+j) + int32(bw[8+j]>>4|h1)*i8(bx, 4+j+qk/2)
		}
		dd := f16At(bw, 0) * f16At(bx, 0)
		sumf += float32(dd*float32(sumi)) + float32(f16At(bw, 2)*f16At(bx, 2))
	}
	return sumf
}

// dotQ8_0 is ggml_vec_dot_q8_0_q8_0: sum of sumi*(d_w*d_x).
func dotQ8_0(w, x []byte, n int) float32 {
	var sumf float32
	for ib := 0; ib < n/qk; ib++ {
		bw, bx := w[ib*34:ib*34+34], x[ib*34:ib*34+34]
		var sumi int32
		for j := 0; j < qk; j++ {
			sumi += i8(bw, 2+j) * i8(bx, 2+j)
		}
		sumf += float32(float32(sumi) * float32(f16At(bw, 0)*f16At(bx, 0)))
	}
	return sumf
}

// ---- K-quants against Q8_K (d f32 at 0, qs at 4, bsums at 260) ----

// dotQ2_K is ggml_vec_dot_q2_K_q8_K: per block dall*isum - dmin*summs with
// isum = sum of scale*q2*q8 and summs = sum of min*bsum over the 16 sub-blocks.
func dotQ2_K(w, x []byte, n int) float32 {
	var sumf float32
	for ib := 0; ib < n/QK_K; ib++ {
		bw, bx := w[ib*84:ib*84+84], x[ib*292:ib*292+292]
		sc, qs := bw[0:16], bw[16:80]
		var summs int32
		for j := 0; j < 16; j++ {
			summs += q8KBsum(bx, j) * int32(sc[j]>>4)
		}
		yd := f32At(bx, 0)
		dall := yd * f16At(bw, 80)
		dmin := yd * f16At(bw, 82)
		var isum int32
		for g := 0; g < 16; g++ {
			var isuml int32
			for i := 16 * g; i < 16*g+16; i++ {
				isuml += i8(bx, 4+i) * int32(q2At(qs, i))
			}
			isum += int32(sc[g]&0x0f) * isuml
		}
		sumf += float32(dall*float32(isum)) - float32(dmin*float32(summs))
	}
	return sumf
}

// kSums is the accumulation shared by the Q3_K..Q6_K generic dots: eight float32 lanes,
// lane l summing d * aux32[l] over blocks, where aux32[l] is the integer sum of
// scale*q*q8 over the elements p of the block with p%8 == l. The lanes are added last.
type kSums [8]float32

func (s *kSums) add(d float32, aux32 *[8]int32) {
	for l := range s {
		s[l] += float32(d * float32(aux32[l]))
	}
}

func (s *kSums) total(sumf float32) float32 {
	for _, v := range s {
		sumf += v
	}
	return sumf
}

// dotQ3_K is ggml_vec_dot_q3_K_q8_K.
func dotQ3_K(w, x []byte, n int) float32 {
	var sums kSums
	for ib := 0; ib < n/QK_K; ib++ {
		bw, bx := w[ib*110:ib*110+110], x[ib*292:ib*292+292]
		hmask, qs := bw[0:32], bw[32:96]
		scales := q3Scales(bw[96:108])
		var aux32 [8]int32
		for p := 0; p < QK_K; p++ {
			aux32[p%8] += int32(scales[p/16]) * (i8(bx, 4+p) * q3At(hmask, qs, p))
		}
		sums.add(f16At(bw, 108)*f32At(bx, 0), &aux32)
	}
	return sums.total(0)
}

// dotQ4_K is ggml_vec_dot_q4_K_q8_K: the lanes of scale*q4*q8, minus per block
// dmin*sum(min[j/2]*bsum[j]).
func dotQ4_K(w, x []byte, n int) float32 {
	var sums kSums
	var sumf float32
	for ib := 0; ib < n/QK_K; ib++ {
		bw, bx := w[ib*144:ib*144+144], x[ib*292:ib*292+292]
		scales, qs := bw[4:16], bw[16:144]
		sc, m := scalesK4(scales)
		var aux32 [8]int32
		for p := 0; p < QK_K; p++ {
			aux32[p%8] += int32(sc[p/32]) * (i8(bx, 4+p) * int32(q4KAt(qs, p)))
		}
		var sumi int32
		for j := 0; j < QK_K/16; j++ {
			sumi += q8KBsum(bx, j) * int32(m[j/2])
		}
		yd := f32At(bx, 0)
		sums.add(f16At(bw, 0)*yd, &aux32)
		dmin := f16At(bw, 2) * yd
		sumf -= float32(dmin * float32(sumi))
	}
	return sums.total(sumf)
}

// dotQ5_K is ggml_vec_dot_q5_K_q8_K, as Q4_K with 5-bit quants.
func dotQ5_K(w, x []byte, n int) float32 {
	var sums kSums
	var sumf float32
	for ib := 0; ib < n/QK_K; ib++ {
		bw, bx := w[ib*176:ib*176+176], x[ib*292:ib*292+292]
		scales, qh, qs := bw[4:16], bw[16:48], bw[48:176]
		sc, m := scalesK4(scales)
		var aux32 [8]int32
		for p := 0; p < QK_K; p++ {
			aux32[p%8] += int32(sc[p/32]) * (i8(bx, 4+p) * int32(q5KAt(qh, qs, p)))
		}
		var sumi int32
		for j := 0; j < QK_K/16; j++ {
			sumi += q8KBsum(bx, j) * int32(m[j/2])
		}
		yd := f32At(bx, 0)
		sums.add(f16At(bw, 0)*yd, &aux32)
		dmin := f16At(bw, 2) * yd
		sumf -= float32(dmin * float32(sumi))
	}
	return sums.total(sumf)
}

// dotQ6_K is ggml_vec_dot_q6_K_q8_K.
func dotQ6_K(w, x []byte, n int) float32 {
	var sums kSums
	for ib := 0; ib < n/QK_K; ib++ {
		bw, bx := w[ib*210:ib*210+210], x[ib*292:ib*292+292]
		ql, qh, scales := bw[0:128], bw[128:192], bw[192:208]
		var aux32 [8]int32
		for p := 0; p < QK_K; p++ {
			q := int32(q6At(ql, qh, p)) - 32
			aux32[p%8] += int32(int8(scales[p/16])) * (i8(bx, 4+p) * q)
		}
		sums.add(f16At(bw, 208)*f32At(bx, 0), &aux32)
	}
	return sums.total(0)
}
