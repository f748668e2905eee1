package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/quant"
	"ember/kernels/cpu"
)

// The row ops (elem*.c) against plain Go references in float64, on every path.

var elemLens = []int{1, 7, 8, 15, 16, 17, 33, 100, 4095, 4096}

func elemRand(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
	}
	return x
}

// elemRandF16 is n normal values rounded to f16, as a cache holds them.
func elemRandF16(rng *rand.Rand, n int) []uint16 {
	x := make([]uint16, n)
	for i := range x {
		x[i] = quant.FP32ToFP16(float32(rng.NormFloat64()))
	}
	return x
}

// elemGuarded returns a slice of n floats inside a larger one filled with lgGuard, and a
// check that the guard values around it are intact.
func elemGuarded(n int) ([]float32, func(t *testing.T, what string)) {
	buf := make([]float32, n+16)
	for i := range buf {
		buf[i] = lgGuard
	}
	s := buf[8 : 8+n]
	return s, func(t *testing.T, what string) {
		t.Helper()
		for i := 0; i < 8; i++ {
			if buf[i] != lgGuard || buf[8+n+i] != lgGuard {
				t.Fatalf("%s: wrote outside the output", what)
			}
		}
	}
}

func elemRel(got, want float32, base float64) float64 {
	return math.Abs(float64(got)-float64(want)) / base
}

func TestElemRMSNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		for _, n := range elemLens {
			for _, sc := range []float64{1e-3, 1, 300} {
				x, w := elemRand(rng, n, sc), elemRand(rng, n, 1)
				const eps = 1e-5
				var ss float64
				for _, v := range x {
					ss += float64(v) * float64(v)
				}
				scale := 1 / math.Sqrt(ss/float64(n)+eps)
				y, check := elemGuarded(n)
				k.RMSNorm(x, w, y, eps)
				check(t, "rmsnorm")
				for i := range y {
					want := float64(x[i]) * scale * float64(w[i])
					if d := math.Abs(float64(y[i]) - want); d > 1e-6*math.Abs(want)+1e-37 {
						t.Fatalf("%v n=%d scale %g: y[%d] = %g, want %g", isa, n, sc, i, y[i], want)
					}
				}
				// in place
				yy := append([]float32(nil), x...)
				k.RMSNorm(yy, w, yy, eps)
				for i := range yy {
					if yy[i] != y[i] {
						t.Fatalf("%v n=%d: in place differs at %d", isa, n, i)
					}
				}
			}
		}
	}
}

func TestElemAddMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		for _, n := range elemLens {
			a, b := elemRand(rng, n, 10), elemRand(rng, n, 10)
			y, check := elemGuarded(n)
			k.Add(a, b, y)
			check(t, "add")
			for i := range y {
				if y[i] != a[i]+b[i] {
					t.Fatalf("%v add n=%d: y[%d] = %g, want %g", isa, n, i, y[i], a[i]+b[i])
				}
			}
			k.Mul(a, b, y)
			check(t, "mul")
			for i := range y {
				if y[i] != a[i]*b[i] {
					t.Fatalf("%v mul n=%d: y[%d] = %g, want %g", isa, n, i, y[i], a[i]*b[i])
				}
			}
			aa := append([]float32(nil), a...)
			k.Add(aa, b, aa)
			for i := range aa {
				if aa[i] != a[i]+b[i] {
					t.Fatalf("%v add in place n=%d: %d", isa, n, i)
				}
			}
		}
	}
}

func elemSwiGLURef(g, u float32) float64 {
	gg := float64(g)
	return gg / (1 + math.Exp(-gg)) * float64(u)
}

func TestElemSwiGLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e-3, -1e-3, 0.5, -0.5, 5, -5, 15, -15, 20, -20,
		30, -30, 50, -50, 80, -80, 87, -87, 88, -88, 88.7, -88.7, 89, -89, 90, -90, 100, -100, 103, -103, 104, -104, 120, -120,
		1e10, -1e10, float32(math.MaxFloat32), -float32(math.MaxFloat32), float32(math.Inf(1))}
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		for _, n := range append(elemLens, len(special)) {
			g := elemRand(rng, n, 6)
			u := elemRand(rng, n, 2)
			if n == len(special) {
				copy(g, special)
				for i := range u {
					u[i] = 1
				}
			}
			y, check := elemGuarded(n)
			k.SwiGLU(g, u, y)
			check(t, "swiglu")
			for i := range y {
				want := elemSwiGLURef(g[i], u[i])
				if math.IsInf(float64(g[i]), 1) {
					want = math.Inf(1) * float64(u[i])
				}
				if math.IsNaN(float64(y[i])) {
					t.Fatalf("%v n=%d: swiglu(%g, %g) = NaN", isa, n, g[i], u[i])
				}
				// relative 1e-6, with a floor far below any value that matters (the tiny
				// results of silu(x < -87) are subnormal or underflow to -0)
				if d := math.Abs(float64(y[i]) - want); d > 1e-6*math.Abs(want)+1e-36 && !(math.IsInf(want, 0) && float64(y[i]) == want) {
					t.Fatalf("%v n=%d: swiglu(%g, %g) = %g, want %g (rel %g)", isa, n, g[i], u[i], y[i], want, d/math.Abs(want))
				}
			}
		}
		// the documented extremes
		y := make([]float32, 2)
		k.SwiGLU([]float32{-100, 100}, []float32{1, 1}, y)
		if y[0] != 0 || !math.Signbit(float64(y[0])) || y[1] != 100 {
			t.Errorf("%v: silu(-100), silu(100) = %g, %g; want -0, 100", isa, y[0], y[1])
		}
		// NaN in, NaN out
		k.SwiGLU([]float32{float32(math.NaN())}, []float32{1}, y[:1])
		if !math.IsNaN(float64(y[0])) {
			t.Errorf("%v: silu(NaN) = %g", isa, y[0])
		}
	}
}

func TestElemF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	all := make([]uint16, 65536)
	for i := range all {
		all[i] = uint16(i)
	}
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		// every half to float
		got := make([]float32, len(all))
		k.F16ToF32(all, got)
		for i, h := range all {
			if w := quant.FP16ToFP32(h); math.Float32bits(got[i]) != math.Float32bits(w) {
				t.Fatalf("%v: f16 %#04x -> %#08x, want %#08x", isa, h, math.Float32bits(got[i]), math.Float32bits(w))
			}
		}
		// every half back (exact round trip, NaNs canonical)
		back := make([]uint16, len(all))
		k.F32ToF16(got, back)
		for i := range all {
			if w := quant.FP32ToFP16(got[i]); back[i] != w {
				t.Fatalf("%v: f32 %#08x -> %#04x, want %#04x", isa, math.Float32bits(got[i]), back[i], w)
			}
		}
		// random floats, ties, subnormals, overflow; odd lengths
		for _, n := range elemLens {
			x := make([]float32, n)
			for i := range x {
				switch rng.IntN(4) {
				case 0:
					x[i] = lgF16Tie(rng)
				case 1:
					x[i] = math.Float32frombits(rng.Uint32())
				case 2:
					x[i] = float32(rng.NormFloat64() * math.Exp(rng.Float64()*40-25))
				default:
					x[i] = float32(rng.NormFloat64() * 1e5)
				}
			}
			h := make([]uint16, n+2)
			h[n], h[n+1] = 0xbeef, 0xbeef
			k.F32ToF16(x, h[:n])
			for i := range x {
				if w := quant.FP32ToFP16(x[i]); h[i] != w {
					t.Fatalf("%v n=%d: f32 %g (%#08x) -> %#04x, want %#04x", isa, n, x[i], math.Float32bits(x[i]), h[i], w)
				}
			}
			if h[n] != 0xbeef || h[n+1] != 0xbeef {
				t.Fatalf("%v: F32ToF16 wrote past the end", isa)
			}
			f, check := elemGuarded(n)
			k.F16ToF32(h[:n], f)
			check(t, "f16tof32")
		}
	}
}

func elemRoPERef(x []float64, headDim, dims int, neox bool, cs []float32) {
	half := dims / 2
	for h := 0; h < len(x)/headDim; h++ {
		xh := x[h*headDim : (h+1)*headDim]
		for i := 0; i < half; i++ {
			i0, i1 := 2*i, 2*i+1
			if neox {
				i0, i1 = i, i+half
			}
			c, s := float64(cs[2*i]), float64(cs[2*i+1])
			x0, x1 := xh[i0], xh[i1]
			xh[i0] = x0*c - x1*s
			xh[i1] = x0*s + x1*c
		}
	}
}

func TestElemRoPE(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		for _, hd := range []int{2, 6, 16, 64, 80, 128} {
			for _, dims := range []int{2, hd / 2, hd - 2, hd} {
				if dims%2 != 0 || dims <= 0 || dims > hd {
					continue
				}
				for _, neox := range []bool{false, true} {
					for _, nh := range []int{1, 3} {
						x := elemRand(rng, nh*hd, 3)
						cs := make([]float32, dims)
						for i := 0; i < dims/2; i++ {
							a := rng.Float64() * 100
							cs[2*i], cs[2*i+1] = float32(math.Cos(a)), float32(math.Sin(a))
						}
						ref := make([]float64, len(x))
						for i := range x {
							ref[i] = float64(x[i])
						}
						elemRoPERef(ref, hd, dims, neox, cs)
						got := append([]float32(nil), x...)
						k.RoPE(got, hd, dims, neox, cs)
						for i := range got {
							tol := 1e-6 * (math.Abs(float64(x[i])) + 4)
							if d := math.Abs(float64(got[i]) - ref[i]); d > tol {
								t.Fatalf("%v hd=%d dims=%d neox=%v nh=%d: x[%d] = %g, want %g", isa, hd, dims, neox, nh, i, got[i], ref[i])
							}
						}
					}
				}
			}
		}
	}
}

// elemAttnRef follows the kernel's rounding steps in float64: q rounded to f16, scores,
// max-subtracted softmax, p rounded to f16. A p that lies within the kernels' float
// error of an f16 rounding boundary may round either way; tol holds, per output, the
// effect of those choices plus 1e-5 of the sum of |terms|.
func elemAttnRef(q []float32, kc []uint16, ks int, vc []uint16, vs int, nkv, hd, vhd int, scale float32) (out, tol []float64) {
	q16 := make([]float64, hd)
	for d := range q16 {
		q16[d] = float64(quant.FP16ToFP32(quant.FP32ToFP16(q[d])))
	}
	s := make([]float64, nkv)
	sabs := make([]float64, nkv)
	m := math.Inf(-1)
	for t := 0; t < nkv; t++ {
		var dot, ad float64
		for d := 0; d < hd; d++ {
			p := q16[d] * float64(quant.FP16ToFP32(kc[t*ks+d]))
			dot += p
			ad += math.Abs(p)
		}
		s[t] = float64(scale) * dot
		sabs[t] = math.Abs(float64(scale)) * ad
		m = math.Max(m, s[t])
	}
	var sum float64
	e := make([]float64, nkv)
	for t := range e {
		e[t] = math.Exp(s[t] - m)
		sum += e[t]
	}
	out = make([]float64, vhd)
	tol = make([]float64, vhd)
	for t := 0; t < nkv; t++ {
		p := e[t] / sum
		// the kernel's p may be off by its float rounding: the score's (about 1e-7 of the
		// sum of |q k| terms and of the max) plus a few ulp of exp, the product and 1/sum
		delta := 2e-7*(sabs[t]+math.Abs(m)) + 1e-6
		lo := float64(quant.FP16ToFP32(quant.FP32ToFP16(float32(p * (1 - delta)))))
		hi := float64(quant.FP16ToFP32(quant.FP32ToFP16(float32(p * (1 + delta)))))
		mid := float64(quant.FP16ToFP32(quant.FP32ToFP16(float32(p))))
		for d := 0; d < vhd; d++ {
			v := float64(quant.FP16ToFP32(vc[t*vs+d]))
			out[d] += mid * v
			tol[d] += 1e-5*math.Abs(mid*v) + (hi-lo)*math.Abs(v)
		}
	}
	for d := range tol {
		tol[d] += 1e-30
	}
	return out, tol
}

func TestElemAttention(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	type shape struct{ hd, vhd int }
	shapes := []shape{{64, 64}, {128, 128}, {80, 80}, {7, 7}, {96, 64}, {20, 36}}
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		for _, sh := range shapes {
			for _, nkv := range []int{1, 2, 7, 33, 300} {
				for _, scale := range []float32{float32(1 / math.Sqrt(float64(sh.hd))), 1} {
					ks, vs := sh.hd*3+5, sh.vhd*2+3 // positions of a head in a paged cache are strided
					kc := elemRandF16(rng, (nkv-1)*ks+sh.hd)
					vc := elemRandF16(rng, (nkv-1)*vs+sh.vhd)
					q := elemRand(rng, sh.hd, 1.5)
					want, tol := elemAttnRef(q, kc, ks, vc, vs, nkv, sh.hd, sh.vhd, scale)
					out, check := elemGuarded(sh.vhd)
					scratchBuf := make([]float32, nkv+sh.hd+8)
					for i := range scratchBuf {
						scratchBuf[i] = lgGuard
					}
					k.Attention(q, kc, ks, vc, vs, nil, nkv, sh.hd, sh.vhd, scale, out, scratchBuf[:nkv+sh.hd])
					check(t, "attention")
					// The same positions scattered over a larger cache through a row list
					// (a paged cache) give bit-identical output.
					rows := rng.Perm(nkv + 9)[:nkv]
					rows32 := make([]int32, nkv)
					pk := make([]uint16, (nkv+8)*ks+sh.hd)
					pv := make([]uint16, (nkv+8)*vs+sh.vhd)
					for t, r := range rows {
						rows32[t] = int32(r)
						copy(pk[r*ks:r*ks+sh.hd], kc[t*ks:t*ks+sh.hd])
						copy(pv[r*vs:r*vs+sh.vhd], vc[t*vs:t*vs+sh.vhd])
					}
					paged := make([]float32, sh.vhd)
					k.Attention(q, pk, ks, pv, vs, rows32, nkv, sh.hd, sh.vhd, scale, paged, make([]float32, nkv+sh.hd))
					for d := range paged {
						if math.Float32bits(paged[d]) != math.Float32bits(out[d]) {
							t.Fatalf("%v hd=%d nkv=%d: paged out[%d] = %g, contiguous %g", isa, sh.hd, nkv, d, paged[d], out[d])
						}
					}
					for i := nkv + sh.hd; i < len(scratchBuf); i++ {
						if scratchBuf[i] != lgGuard {
							t.Fatalf("%v: attention wrote past its scratch", isa)
						}
					}
					for d := range out {
						if diff := math.Abs(float64(out[d]) - want[d]); !(diff <= tol[d]) {
							t.Fatalf("%v hd=%d vhd=%d nkv=%d scale=%g: out[%d] = %g, want %g (diff %g, tol %g)",
								isa, sh.hd, sh.vhd, nkv, scale, d, out[d], want[d], diff, tol[d])
						}
					}
				}
			}
		}
	}
}

// TestElemAttentionAVX512: the AVX-512 single-head attention (elem_avx512.c) gives the
// AVX2 path's bits on random inputs: head dims 16 to 256 (odd multiples of 8, and not
// multiples of 8), lengths around the blocks of four and eight positions and past the K
// prefetch distance, contiguous and paged caches (garbage between the rows), scores with
// a large common bias (so that another order of summation shows through p's rounding to
// f16) and sharp softmaxes.
func TestElemAttentionAVX512(t *testing.T) {
	x512 := supportedAmong(cpu.AVX512, cpu.AVX512VNNI)
	if len(x512) == 0 {
		t.Skip("no AVX-512 on this machine")
	}
	avx2 := cpu.New(cpu.AVX2)
	rng := rand.New(rand.NewPCG(33, 34))
	type shape struct{ hd, vhd int }
	shapes := []shape{{16, 16}, {24, 24}, {64, 64}, {128, 128}, {256, 256}, {40, 72}, {136, 120}, {200, 8},
		{248, 256}, {37, 21}, {100, 100}, {7, 143}, {80, 80}, {96, 160}, {192, 192}}
	lens := []int{1, 3, 4, 5, 8, 12, 15, 17, 31, 36, 44, 63, 100, 257, 1001}
	garbage := func() uint16 { return uint16(rng.Uint32()) } // some are NaN or inf
	for n := range len(shapes) * len(lens) {                 // every shape with every length
		sh, nkv := shapes[n%len(shapes)], lens[n/len(shapes)]
		paged, bias := n%3 != 0, n%4 == 1
		ks, vs := 3*sh.hd+5, 2*sh.vhd+3
		kr, vr := make([][]uint16, nkv), make([][]uint16, nkv)
		for i := range kr {
			kr[i], vr[i] = elemRandF16(rng, sh.hd), elemRandF16(rng, sh.vhd)
			if bias {
				kr[i][0] = quant.FP32ToFP16(32)
			}
		}
		nrows := nkv
		var rows []int32
		if paged {
			rows, nrows = agPerm(rng, nkv), nkv+9
		}
		kc, vc := agCache(kr, ks, nrows, rows, garbage), agCache(vr, vs, nrows, rows, garbage)
		q := elemRand(rng, sh.hd, 1.5)
		if bias {
			q[0] = 32
		}
		scale := float32(1 / math.Sqrt(float64(sh.hd)))
		if n%5 == 2 {
			scale = 0.5 // a sharp softmax
		}
		at := fmt.Sprintf("hd=%d vhd=%d nkv=%d paged=%v bias=%v scale=%g", sh.hd, sh.vhd, nkv, paged, bias, scale)
		run := func(k cpu.Kernels) []float32 {
			out, checkOut := elemGuarded(sh.vhd)
			scratch, checkScratch := elemGuarded(nkv + sh.hd)
			k.Attention(q, kc, ks, vc, vs, rows, nkv, sh.hd, sh.vhd, scale, out, scratch)
			checkOut(t, fmt.Sprintf("%v %s out", k.ISA(), at))
			checkScratch(t, fmt.Sprintf("%v %s scratch", k.ISA(), at))
			return append([]float32(nil), out...)
		}
		want := run(avx2)
		for _, isa := range x512 {
			got := run(cpu.New(isa))
			for d := range want {
				if math.Float32bits(got[d]) != math.Float32bits(want[d]) {
					t.Fatalf("%v %s: out[%d] = %g (%#x), avx2 %g (%#x)", isa, at, d, got[d], math.Float32bits(got[d]),
						want[d], math.Float32bits(want[d]))
				}
			}
		}
	}
}
