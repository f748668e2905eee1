package cpu_test

import (
	"fmt"
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"testing"

	"ember/inference/quant"
	"ember/kernels/cpu"
)

// TestGemmVNNI256Bits checks that the AVX-VNNI products (kq_avxvnni.c, lg_avxvnni.c:
// batches, and Q8_0's decode and small batches) give the AVX2 ones' bits for every
// quantized type: the same exact block sums under the same float steps. Weight rows scrambled (every quant and scale value,
// the extremes included), odd row counts and ranges, strided rows, batches past the
// 128-row chunks.
func TestGemmVNNI256Bits(t *testing.T) {
	vnni := cpu.New(cpu.AVX2)
	if !vnni.VNNI256() {
		t.Skip("no AVX-VNNI on this CPU")
	}
	plain := vnni.WithoutVNNI256()
	rng := rand.New(rand.NewPCG(81, 82))
	const maxRows, maxNX = 41, 131
	types := []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0,
		quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K}
	for _, wt := range types {
		vt, _ := wt.VecDotType()
		for _, k := range []int{256, 1280, 4352} {
			wsz, xsz := lgRowBytes(wt, k), lgRowBytes(vt, k)
			wrb, xrb := wsz+7, xsz+5
			var w, xq []byte
			if wt.BlockSize() == 32 {
				wf, xf := make([][]float32, maxRows), make([][]float32, maxNX)
				for r := range wf {
					wf[r] = lgRandRow(rng, k)
				}
				for i := range xf {
					xf[i] = lgRandRow(rng, k)
				}
				w = lgQuantRows(t, wt, wf, k, wrb)
				lgScramble(rng, wt, w, maxRows, wrb, k)
				xq = lgQuantRows(t, vt, xf, k, xrb)
			} else { // the K-quant tests' rows: every scale and quant value
				r1 := mrand.New(mrand.NewSource(int64(k) + int64(wt)))
				w, xq = make([]byte, maxRows*wrb), make([]byte, maxNX*xrb)
				for r := 0; r < maxRows; r++ {
					copy(w[r*wrb:], kqWeightRow(t, r1, wt, k))
				}
				for i := 0; i < maxNX; i++ {
					copy(xq[i*xrb:], kqQuantRow(t, quant.Q8_K, kqFloats(r1, k)))
				}
			}
			for _, nx := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13, 64, 131} {
				for _, rr := range [][2]int{{0, 1}, {0, 8}, {0, 17}, {0, 41}, {3, 38}} {
					name := fmt.Sprintf("%v/k=%d/nx=%d/rows[%d,%d)", wt, k, nx, rr[0], rr[1])
					ldd := rr[1] + 2
					got, want := make([]float32, nx*ldd), make([]float32, nx*ldd)
					if !vnni.Gemm(int(wt), w[:rr[1]*wrb], wrb, xq[:nx*xrb], xrb, nx, k, rr[0], rr[1], got, ldd) ||
						!plain.Gemm(int(wt), w[:rr[1]*wrb], wrb, xq[:nx*xrb], xrb, nx, k, rr[0], rr[1], want, ldd) {
						t.Fatalf("%s: not handled", name)
					}
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: dst[%d] = %g (%#x), AVX2's %g (%#x)", name, i, got[i],
								math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				}
			}
		}
	}
}
