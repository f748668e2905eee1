package cpu_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/quant"
	"ember/kernels/cpu"
)

// The legacy-quant and float kernels (lg*.c) against package quant, on every path this
// machine runs.

var lgWeightTypes = []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.F16, quant.BF16, quant.F32}

// lgRandRow fills n floats with Gaussian values whose scale changes every 32 elements, so
// blocks see very different magnitudes; a few blocks are all zero or constant.
func lgRandRow(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for b := 0; b < n; b += 32 {
		scale := float32(math.Exp(rng.Float64()*8 - 4))
		kind := rng.IntN(20)
		for j := b; j < b+32 && j < n; j++ {
			switch kind {
			case 0:
				x[j] = 0
			case 1:
				x[j] = scale
			default:
				x[j] = float32(rng.NormFloat64()) * scale
			}
		}
	}
	return x
}

func lgRowBytes(t quant.Type, n int) int {
	b, err := quant.RowBytes(t, uint64(n))
	if err != nil {
		panic(err)
	}
	return int(b)
}

// lgQuantRows quantizes rows of n floats to t, each row rb bytes apart (rb >= row size).
func lgQuantRows(tb testing.TB, t quant.Type, x [][]float32, n, rb int) []byte {
	out := make([]byte, len(x)*rb)
	sz := lgRowBytes(t, n)
	for i, row := range x {
		if err := quant.Quantize(t, row, out[i*rb:i*rb+sz]); err != nil {
			tb.Fatal(err)
		}
		for j := i*rb + sz; j < (i+1)*rb; j++ {
			out[j] = 0xA5 // padding between rows must not be read as data
		}
	}
	return out
}

// lgScramble replaces the quants of quantized weights with random bytes (keeping the
// scales), so every bit pattern a file may hold is exercised (Q8_0 gets -128 too).
func lgScramble(rng *rand.Rand, t quant.Type, w []byte, rows, rb, n int) {
	var skip int
	switch t {
	case quant.Q4_0, quant.Q5_0, quant.Q8_0:
		skip = 2
	case quant.Q4_1, quant.Q5_1:
		skip = 4
	default:
		return
	}
	bs := t.TypeSize()
	for r := 0; r < rows; r++ {
		for b := 0; b < n/32; b++ {
			blk := w[r*rb+b*bs : r*rb+(b+1)*bs]
			for j := skip; j < bs; j++ {
				blk[j] = byte(rng.Uint32())
			}
		}
	}
}

// lgDequantRows decodes rows of weights (or activations) of type t, and for the _1
// types adds 2|m| of each block to the magnitude, so that lgAbsBase bounds the terms the
// kernels sum.
func lgDequantRows(t quant.Type, b []byte, rows, rb, n int) (vals, mags [][]float64) {
	vals = make([][]float64, rows)
	mags = make([][]float64, rows)
	f := make([]float32, n)
	for r := 0; r < rows; r++ {
		row := b[r*rb : r*rb+lgRowBytes(t, n)]
		if err := quant.Dequantize(t, row, f); err != nil {
			panic(err)
		}
		vals[r] = make([]float64, n)
		mags[r] = make([]float64, n)
		for j := range f {
			vals[r][j] = float64(f[j])
			mags[r][j] = math.Abs(float64(f[j]))
			if t == quant.Q4_1 || t == quant.Q5_1 {
				m := quant.FP16ToFP32(binary.LittleEndian.Uint16(row[(j/32)*t.TypeSize()+2:]))
				mags[r][j] += 2 * math.Abs(float64(m))
			}
		}
	}
	return vals, mags
}

// lgAbsBase is the sum of |terms| the tolerance of one dot is relative to.
func lgAbsBase(wmag, xmag []float64) float64 {
	var s float64
	for j := range wmag {
		s += wmag[j] * xmag[j]
	}
	return s
}

const lgGuard = float32(-7.25e11)

// pathKernels is every path this machine can run, for the legacy-quant and K-quant tests
// and benchmarks: each ISA, the AVX-512 ones also without AVX512_BF16 and the AVX2 one
// also without AVX-VNNI where the CPU has them.
func pathKernels() []cpu.Kernels {
	var ks []cpu.Kernels
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		ks = append(ks, k)
		if k.BF16() {
			ks = append(ks, k.WithoutBF16())
		}
		if k.VNNI256() {
			ks = append(ks, k.WithoutVNNI256())
		}
	}
	return ks
}

func TestLGGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const maxRows, maxNX = 64, 131
	ks := []int{32, 96, 128, 4096, 4128, 16416} // 16416: past LGA_PREP_NB blocks (lg_avx2.c), prepared inline
	rowsList := []int{1, 3, 7, 33, 64}
	nxList := []int{1, 2, 3, 4, 5, 7, 8, 13, 33, 131} // 131: past lg_vnni16.h's 128-row chunk
	if testing.Short() {
		ks = []int{32, 96, 4128}
	}
	for _, wt := range lgWeightTypes {
		vt, _ := wt.VecDotType()
		dot, err := quant.Dot(wt)
		if err != nil {
			t.Fatal(err)
		}
		tks := ks
		if wt.BlockSize() == 1 {
			tks = append(append([]int(nil), ks...), 1, 7, 33, 4095) // vector tails
		}
		for _, k := range tks {
			for _, scrambled := range []bool{false, true} {
				if scrambled && wt.BlockSize() == 1 {
					continue
				}
				wsz, xsz := lgRowBytes(wt, k), lgRowBytes(vt, k)
				wrb, xrb := wsz, xsz
				if k == 96 || k == 128 {
					wrb, xrb = wsz+5*wt.TypeSize()+3, xsz+3*vt.TypeSize()+5 // strided rows, odd byte strides
				}
				wf := make([][]float32, maxRows)
				for r := range wf {
					wf[r] = lgRandRow(rng, k)
				}
				xf := make([][]float32, maxNX)
				for i := range xf {
					xf[i] = lgRandRow(rng, k)
				}
				w := lgQuantRows(t, wt, wf, k, wrb)
				if scrambled {
					lgScramble(rng, wt, w, maxRows, wrb, k)
				}
				xq := lgQuantRows(t, vt, xf, k, xrb)
				_, wmag := lgDequantRows(wt, w, maxRows, wrb, k)
				_, xmag := lgDequantRows(vt, xq, maxNX, xrb, k)
				want := make([][]float32, maxNX)
				tol := make([][]float64, maxNX)
				for i := range want {
					want[i] = make([]float32, maxRows)
					tol[i] = make([]float64, maxRows)
					for r := 0; r < maxRows; r++ {
						wr, xr := w[r*wrb:r*wrb+wsz], xq[i*xrb:i*xrb+xsz]
						want[i][r] = dot(wr, xr, k)
						tol[i][r] = 1e-5*lgAbsBase(wmag[r], xmag[i]) + 1e-30
					}
				}
				for _, kern := range pathKernels() {
					isa := kern.Name()
					for _, rows := range rowsList {
						for _, nx := range nxList {
							ranges := [][2]int{{0, rows}}
							if rows >= 3 {
								ranges = append(ranges, [2]int{1, rows - 1})
							}
							for _, rg := range ranges {
								r0, r1 := rg[0], rg[1]
								ldd := rows + 3
								dst := make([]float32, nx*ldd+7)
								for i := range dst {
									dst[i] = lgGuard
								}
								name := fmt.Sprintf("%v/%v/k=%d/scr=%v/rows=%d[%d,%d)/nx=%d", isa, wt, k, scrambled, rows, r0, r1, nx)
								if !kern.Gemm(int(wt), w[:rows*wrb], wrb, xq[:nx*xrb], xrb, nx, k, r0, r1, dst, ldd) {
									t.Fatalf("%s: not handled", name)
								}
								bad := 0
								for i := 0; i < len(dst); i++ {
									row, col := i/ldd, i%ldd
									inside := row < nx && col >= r0 && col < r1
									if !inside {
										if math.Float32bits(dst[i]) != math.Float32bits(lgGuard) {
											t.Errorf("%s: wrote dst[%d] (row %d col %d) = %g outside the range", name, i, row, col, dst[i])
											bad++
										}
										continue
									}
									got, exp := dst[i], want[row][col]
									if d := math.Abs(float64(got) - float64(exp)); !(d <= tol[row][col]) {
										t.Errorf("%s: x row %d w row %d: got %g want %g (diff %g, tol %g)", name, row, col, got, exp, d, tol[row][col])
										bad++
									}
									if bad > 5 {
										t.FailNow()
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

func TestLGGemmUnhandled(t *testing.T) {
	for _, isa := range cpu.Supported() {
		kern := cpu.New(isa)
		w := make([]byte, 1024)
		dst := make([]float32, 4)
		for _, typ := range []int{cpu.TypeQ8_1, 5, 20} {
			if cpu.RowBytes(typ, 32) < 0 {
				continue
			}
			if kern.Gemm(typ, w, cpu.RowBytes(typ, 32), w, 36, 1, 32, 0, 1, dst, 1) {
				t.Errorf("%v: type %d handled", isa, typ)
			}
		}
	}
}

// lgQ8Rows builds activation rows with the awkward cases of the Q8 quantizers: exact
// .5 ties after scaling (amax 127 gives d = 1, amax 63.5 gives id = 2), zeros, one huge
// value, tiny values whose 1/d overflows, and random blocks.
func lgQ8Rows(rng *rand.Rand, n int) []float32 {
	x := make([]float32, 0, 16*n)
	row := func(f func(j int) float32) {
		for j := 0; j < n; j++ {
			x = append(x, f(j))
		}
	}
	row(func(j int) float32 { // ties with d = 1
		if j%32 == 0 {
			return 127
		}
		return float32(j%32-16) + 0.5
	})
	row(func(j int) float32 { // ties with d = 0.5
		if j%32 == 0 {
			return -63.5
		}
		return (float32(j%32-16) + 0.5) / 2
	})
	row(func(j int) float32 { return 0 })
	row(func(j int) float32 {
		if j == 5 {
			return 1e30
		}
		return float32(rng.NormFloat64())
	})
	row(func(j int) float32 { return float32(rng.NormFloat64()) * 1e-38 })
	row(func(j int) float32 {
		if j%32 == 3 {
			return -65504
		}
		return float32(rng.NormFloat64()) * 100
	})
	row(func(j int) float32 { // non-finite values (the results are meaningless, but equal)
		switch j % 32 {
		case 7:
			return float32(math.Inf(1))
		case 9:
			if j/32%2 == 0 {
				return float32(math.NaN())
			}
		case 11:
			return float32(math.Inf(-1))
		}
		return float32(rng.NormFloat64())
	})
	for len(x) < 16*n {
		row(func(j int) float32 { return float32(rng.NormFloat64()) * float32(math.Exp(rng.Float64()*20-10)) })
	}
	return x
}

func TestLGQuantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, isa := range cpu.Supported() {
		kern := cpu.New(isa)
		for _, vt := range []quant.Type{quant.Q8_0, quant.Q8_1, quant.F16, quant.BF16, quant.F32} {
			ns := []int{32, 64, 96, 4096, 4128}
			if vt.BlockSize() == 1 {
				ns = append(ns, 1, 7, 33, 4095)
			}
			for _, n := range ns {
				x := lgQ8Rows(rng, n)
				if vt.BlockSize() == 1 {
					// ties to even between halves, subnormals, overflow, NaN and infinities
					for i := 0; i < 64 && i < len(x); i++ {
						x[i] = lgF16Tie(rng)
					}
					x[len(x)-1] = float32(math.NaN())
					x[len(x)-2] = float32(math.Inf(-1))
					x[len(x)-3] = 65520
					x[len(x)-4] = 65519.996
					x[len(x)-5] = math.Float32frombits(0xffc12345) // NaN with payload
				}
				nrows := len(x) / n
				want := make([]byte, nrows*lgRowBytes(vt, n))
				if err := quant.Quantize(vt, x, want); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(want)+16)
				for i := range got {
					got[i] = 0xCD
				}
				if !kern.QuantizeRows(int(vt), x, got, nrows, n) {
					t.Fatalf("%v %v: not handled", isa, vt)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%v %v n=%d: byte %d (row %d) = %#x, want %#x", isa, vt, n, i, i/lgRowBytes(vt, n), got[i], want[i])
					}
				}
				for i := len(want); i < len(got); i++ {
					if got[i] != 0xCD {
						t.Fatalf("%v %v n=%d: wrote past the rows at %d", isa, vt, n, i)
					}
				}
			}
		}
		if kern.QuantizeRows(cpu.TypeQ4_0, make([]float32, 32), make([]byte, 18), 1, 32) {
			t.Errorf("%v: quantize to Q4_0 handled", isa)
		}
	}
}

func TestLGDequantize(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	types := append([]quant.Type{quant.Q8_1}, lgWeightTypes...)
	for _, isa := range cpu.Supported() {
		kern := cpu.New(isa)
		for _, typ := range types {
			ns := []int{32, 96, 4128}
			if typ.BlockSize() == 1 {
				ns = append(ns, 1, 7, 33, 4095)
			}
			for _, n := range ns {
				src := make([]byte, lgRowBytes(typ, n))
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				if bs := typ.BlockSize(); bs > 1 {
					// finite scales (a NaN's payload after arithmetic is not specified)
					for b := 0; b < n/bs; b++ {
						o := b * typ.TypeSize()
						binary.LittleEndian.PutUint16(src[o:], uint16(rng.Uint32())&0x7bff|uint16(rng.Uint32())&0x8000)
						if typ == quant.Q4_1 || typ == quant.Q5_1 || typ == quant.Q8_1 {
							binary.LittleEndian.PutUint16(src[o+2:], uint16(rng.Uint32())&0x7bff|uint16(rng.Uint32())&0x8000)
						}
					}
				}
				want := make([]float32, n)
				if err := quant.Dequantize(typ, src, want); err != nil {
					t.Fatal(err)
				}
				got := make([]float32, n+3)
				got[n], got[n+1], got[n+2] = lgGuard, lgGuard, lgGuard
				if !kern.DequantizeRow(int(typ), src, got[:n]) {
					t.Fatalf("%v %v: not handled", isa, typ)
				}
				for i := 0; i < n; i++ {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v %v n=%d: element %d = %g (%#x), want %g (%#x)", isa, typ, n, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
				if got[n] != lgGuard || got[n+2] != lgGuard {
					t.Fatalf("%v %v: wrote past the row", isa, typ)
				}
			}
		}
	}
}

// lgF16Tie returns a float32 exactly halfway between two adjacent finite halves.
func lgF16Tie(rng *rand.Rand) float32 {
	h := uint16(rng.IntN(0x7bff))
	mid := (float64(quant.FP16ToFP32(h)) + float64(quant.FP16ToFP32(h+1))) / 2
	if rng.IntN(2) == 0 {
		mid = -mid
	}
	return float32(mid)
}
