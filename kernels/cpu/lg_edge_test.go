package cpu_test

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"ember/kernels/cpu"
)

// Inputs that end right at an inaccessible page: a kernel reading past its rows crashes.

// lgEdgeCopy places b at the very end of a guarded region.
func lgEdgeCopy(b []byte) ([]byte, func()) {
	e, free := lgEdgeBytes(len(b))
	copy(e, b)
	return e, free
}

func lgEdgeFloats(x []float32) ([]float32, func()) {
	e, free := lgEdgeBytes(4 * len(x))
	f := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(e))), len(x))
	copy(f, x)
	return f, free
}

func lgEdgeHalves(x []uint16) ([]uint16, func()) {
	e, free := lgEdgeBytes(2 * len(x))
	h := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(e))), len(x))
	copy(h, x)
	return h, free
}

func TestLGEdgeReads(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for _, isa := range cpu.Supported() {
		kern := cpu.New(isa)
		for _, wt := range lgWeightTypes {
			vt, _ := wt.VecDotType()
			ks := []int{32, 96, 128, 4128} // 128: lg_avx512_dec.c's groups of four blocks
			if wt.BlockSize() == 1 {
				ks = append(ks, 1, 7, 33)
			}
			for _, k := range ks {
				for _, nx := range []int{1, 3, 4, 8, 33} {
					rows := 7
					wf := make([][]float32, rows)
					for r := range wf {
						wf[r] = lgRandRow(rng, k)
					}
					xf := make([][]float32, nx)
					for i := range xf {
						xf[i] = lgRandRow(rng, k)
					}
					wrb, xrb := lgRowBytes(wt, k), lgRowBytes(vt, k)
					w, fw := lgEdgeCopy(lgQuantRows(t, wt, wf, k, wrb))
					x, fx := lgEdgeCopy(lgQuantRows(t, vt, xf, k, xrb))
					dst := make([]float32, nx*rows)
					if !kern.Gemm(int(wt), w, wrb, x, xrb, nx, k, 0, rows, dst, rows) {
						t.Fatalf("%v %v: not handled", isa, wt)
					}
					row := make([]float32, k)
					kern.DequantizeRow(int(wt), w[len(w)-wrb:], row)
					fw()
					fx()
				}
				// quantize: the float input ends at the guard
				src, fs := lgEdgeFloats(lgRandRow(rng, 3*k))
				out := make([]byte, 3*lgRowBytes(vt, k))
				kern.QuantizeRows(int(vt), src, out, 3, k)
				fs()
			}
		}
		// row ops
		for _, n := range []int{1, 7, 33, 4095} {
			a, fa := lgEdgeFloats(elemRand(rng, n, 3))
			b, fb := lgEdgeFloats(elemRand(rng, n, 3))
			y := make([]float32, n)
			kern.RMSNorm(a, b, y, 1e-5)
			kern.Add(a, b, y)
			kern.Mul(a, b, y)
			kern.SwiGLU(a, b, y)
			h := make([]uint16, n)
			kern.F32ToF16(a, h)
			he, fh := lgEdgeHalves(h)
			kern.F16ToF32(he, y)
			fa()
			fb()
			fh()
		}
		for _, sh := range [][2]int{{64, 64}, {80, 80}, {7, 20}} {
			for _, nkv := range []int{1, 7, 33} {
				hd, vhd := sh[0], sh[1]
				kc := elemRandF16(rng, (nkv-1)*hd+hd)
				vc := elemRandF16(rng, (nkv-1)*vhd+vhd)
				ke, fk := lgEdgeHalves(kc)
				ve, fv := lgEdgeHalves(vc)
				q, fq := lgEdgeFloats(elemRand(rng, hd, 1))
				out := make([]float32, vhd)
				scratch := make([]float32, nkv+hd)
				kern.Attention(q, ke, hd, ve, vhd, nil, nkv, hd, vhd, 0.1, out, scratch)
				fk()
				fv()
				fq()
			}
		}
		for _, neox := range []bool{false, true} {
			x := elemRand(rng, 3*80, 1)
			cs, fc := lgEdgeFloats(elemRand(rng, 78, 1))
			kern.RoPE(x, 80, 78, neox, cs)
			fc()
		}
	}
}
