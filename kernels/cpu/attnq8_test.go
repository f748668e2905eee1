package cpu_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"ember/inference/quant"
	"ember/kernels/cpu"
)

// AttentionQ8 (attnq8*.c): the scalar C path against a plain Go reference with the same
// float32 steps, every SIMD path against the scalar path, and the argument checks.

const aq8QK, aq8Block = 32, 34

// aq8Quantize rounds x (a multiple of 32 floats) to Q8_0 as llama.cpp's
// quantize_row_q8_0_ref: d = amax/127 (stored as f16), quants roundf(x * 1/d).
func aq8Quantize(x []float32) []byte {
	out := make([]byte, len(x)/aq8QK*aq8Block)
	for b := 0; b < len(x)/aq8QK; b++ {
		xb, ob := x[b*aq8QK:(b+1)*aq8QK], out[b*aq8Block:(b+1)*aq8Block]
		var amax float32
		for _, v := range xb {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax = a
			}
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(ob, quant.FP32ToFP16(d))
		for j, v := range xb {
			ob[2+j] = byte(int8(math.Round(float64(float32(v * id)))))
		}
	}
	return out
}

// aq8D is the f16 scale of the block at b, widened.
func aq8D(b []byte) float32 { return quant.FP16ToFP32(binary.LittleEndian.Uint16(b)) }

// aq8Ref is the kernel's contract in Go, step by step in float32 (explicit conversions
// keep Go from fusing a multiply and an add): q rounded to Q8_0, block dots summed in
// order, softmax with the sum in double, out += p * (dV * q).
func aq8Ref(q []float32, kc []byte, ks int, vc []byte, vs int, rows []int32, nkv, hd, vhd int, scale float32) []float32 {
	qq := aq8Quantize(q)
	row := func(t int) int {
		if rows != nil {
			return int(rows[t])
		}
		return t
	}
	s := make([]float32, nkv)
	m := float32(math.Inf(-1))
	for t := range s {
		kr := kc[row(t)*ks:]
		var dot float32
		for b := 0; b < hd/aq8QK; b++ {
			kb, qb := kr[b*aq8Block:], qq[b*aq8Block:]
			var isum int32
			for j := 0; j < aq8QK; j++ {
				isum += int32(int8(kb[2+j])) * int32(int8(qb[2+j]))
			}
			dot += float32(float32(isum) * float32(aq8D(kb)*aq8D(qb)))
		}
		s[t] = scale * dot
		m = max(m, s[t])
	}
	var sum float64
	for t := range s {
		s[t] = float32(math.Exp(float64(s[t] - m)))
		sum += float64(s[t])
	}
	inv := float32(1 / sum)
	out := make([]float32, vhd)
	for t := range s {
		p := s[t] * inv
		vr := vc[row(t)*vs:]
		for b := 0; b < vhd/aq8QK; b++ {
			vb := vr[b*aq8Block:]
			dv := aq8D(vb)
			for j := 0; j < aq8QK; j++ {
				out[b*aq8QK+j] += float32(p * float32(dv*float32(int8(vb[2+j]))))
			}
		}
	}
	return out
}

// aq8Case is one attention over a cache: contiguous (rows nil) or paged.
type aq8Case struct {
	name         string
	q            []float32
	kc, vc       []byte
	ks, vs       int
	rows         []int32
	nkv, hd, vhd int
	scale        float32
	contig       *aq8Case // for a paged case: the same positions in a contiguous cache
}

// aq8Cases builds the test cases: each shape, length and scale once contiguous and once
// paged (the same rows scattered through a row list over a larger cache). Bytes of the
// cache outside the rows read are random, so a kernel that reads them gets garbage
// (f16 scales that may be inf or NaN).
func aq8Cases(seed uint64) []*aq8Case {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	type shape struct{ hd, vhd int }
	shapes := []shape{{32, 32}, {64, 64}, {128, 128}, {576, 512}, {96, 160}, {192, 96}}
	var cases []*aq8Case
	for _, sh := range shapes {
		for _, nkv := range []int{1, 3, 8, 17, 31, 100, 257} {
			for _, scale := range []float32{float32(1 / math.Sqrt(float64(sh.hd))), 0.5} {
				rbK, rbV := sh.hd/aq8QK*aq8Block, sh.vhd/aq8QK*aq8Block
				ks, vs := 3*rbK+7, 2*rbV+5 // a head's rows in a cache of several heads; odd offsets
				kRows, vRows := make([][]byte, nkv), make([][]byte, nkv)
				c := &aq8Case{q: elemRand(rng, sh.hd, 1.5), ks: ks, vs: vs, nkv: nkv, hd: sh.hd, vhd: sh.vhd, scale: scale}
				for t := range kRows {
					kRows[t] = aq8Quantize(elemRand(rng, sh.hd, 1))
					vRows[t] = aq8Quantize(elemRand(rng, sh.vhd, 1))
				}
				build := func(nrows int, rows []int32) ([]byte, []byte) {
					kc, vc := make([]byte, (nrows-1)*ks+rbK), make([]byte, (nrows-1)*vs+rbV)
					for i := range kc {
						kc[i] = byte(rng.Uint32())
					}
					for i := range vc {
						vc[i] = byte(rng.Uint32())
					}
					for t := range kRows {
						r := t
						if rows != nil {
							r = int(rows[t])
						}
						copy(kc[r*ks:], kRows[t])
						copy(vc[r*vs:], vRows[t])
					}
					return kc, vc
				}
				c.kc, c.vc = build(nkv, nil)
				c.name = fmt.Sprintf("hd=%d/vhd=%d/nkv=%d/scale=%g", sh.hd, sh.vhd, nkv, scale)
				p := *c
				p.rows = make([]int32, nkv)
				for t, r := range rng.Perm(nkv + 9)[:nkv] {
					p.rows[t] = int32(r)
				}
				p.kc, p.vc = build(nkv+9, p.rows)
				p.name, p.contig = c.name+"/paged", c
				cases = append(cases, c, &p)
			}
		}
	}
	return cases
}

// aq8Run runs c on k into a guarded output and scratch, checking the guards.
func aq8Run(t *testing.T, k cpu.Kernels, c *aq8Case) []float32 {
	t.Helper()
	out, check := elemGuarded(c.vhd)
	n := cpu.AttentionQ8ScratchLen(c.nkv, c.hd)
	scratch := make([]float32, n+8)
	for i := range scratch {
		scratch[i] = lgGuard
	}
	k.AttentionQ8(c.q, c.kc, c.ks, c.vc, c.vs, c.rows, c.nkv, c.hd, c.vhd, c.scale, out, scratch[:n])
	check(t, fmt.Sprintf("%v %s", k.ISA(), c.name))
	for i := n; i < len(scratch); i++ {
		if scratch[i] != lgGuard {
			t.Fatalf("%v %s: wrote past its scratch", k.ISA(), c.name)
		}
	}
	return append([]float32(nil), out...)
}

// aq8Close reports whether got is within 1e-5 of max|want| (+1e-6) of want everywhere,
// and the ratio of the worst difference to that tolerance.
func aq8Close(got, want []float32) (bool, float64, int) {
	var amax float64
	for _, w := range want {
		amax = math.Max(amax, math.Abs(float64(w)))
	}
	tol := 1e-5*amax + 1e-6
	worst, at := 0.0, 0
	for d := range want {
		diff := math.Abs(float64(got[d]) - float64(want[d]))
		if !(diff <= tol) { // NaN fails
			return false, diff / tol, d
		}
		if diff/tol > worst {
			worst, at = diff/tol, d
		}
	}
	return true, worst, at
}

func TestAttentionQ8Quantize(t *testing.T) {
	// the test's quantizer is package quant's (llama.cpp's reference), byte for byte
	rng := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{32, 128, 576} {
		for _, sc := range []float64{0, 1e-4, 1, 300} {
			x := elemRand(rng, n, sc)
			want := make([]byte, n/aq8QK*aq8Block)
			if err := quant.Quantize(quant.Q8_0, x, want); err != nil {
				t.Fatal(err)
			}
			if got := aq8Quantize(x); string(got) != string(want) {
				t.Fatalf("n=%d scale %g: quantized rows differ", n, sc)
			}
		}
	}
}

func TestAttentionQ8Scalar(t *testing.T) {
	k := cpu.New(cpu.Scalar)
	worst := 0.0
	for _, c := range aq8Cases(63) {
		want := aq8Ref(c.q, c.kc, c.ks, c.vc, c.vs, c.rows, c.nkv, c.hd, c.vhd, c.scale)
		got := aq8Run(t, k, c)
		ok, r, d := aq8Close(got, want)
		if !ok {
			t.Fatalf("scalar %s: out[%d] = %g, want %g (%.3g of the tolerance)", c.name, d, got[d], want[d], r)
		}
		worst = max(worst, r)
		// the reference's scores are package quant's Q8_0 dot (ggml_vec_dot_q8_0_q8_0)
		if c.rows == nil && c.nkv == 3 {
			qq := aq8Quantize(c.q)
			rb := c.hd / aq8QK * aq8Block
			for tt := 0; tt < c.nkv; tt++ {
				dq, err := quant.DotRow(quant.Q8_0, c.kc[tt*c.ks:tt*c.ks+rb], qq, c.hd)
				if err != nil {
					t.Fatal(err)
				}
				var dot float32
				for b := 0; b < c.hd/aq8QK; b++ {
					kb, qb := c.kc[tt*c.ks+b*aq8Block:], qq[b*aq8Block:]
					var isum int32
					for j := 0; j < aq8QK; j++ {
						isum += int32(int8(kb[2+j])) * int32(int8(qb[2+j]))
					}
					dot += float32(float32(isum) * float32(aq8D(kb)*aq8D(qb)))
				}
				if dot != dq {
					t.Fatalf("%s: block dot %g, package quant %g", c.name, dot, dq)
				}
			}
		}
	}
	t.Logf("scalar vs Go reference: worst difference %.3g of the tolerance", worst)
}

// TestAttentionQ8Float checks that the contract is attention at all: against float64
// attention over the dequantized cache with q unrounded, within Q8_0's error of q (at
// scale 1/sqrt(hd); a sharper softmax magnifies the error of the scores).
func TestAttentionQ8Float(t *testing.T) {
	k := cpu.New(cpu.Scalar)
	worst := 0.0
	for _, c := range aq8Cases(65) {
		if c.rows != nil || c.scale == 0.5 {
			continue
		}
		got := aq8Run(t, k, c)
		kr, vr := make([]float32, c.hd), make([]float32, c.vhd)
		s := make([]float64, c.nkv)
		m := math.Inf(-1)
		for tt := range s {
			if err := quant.Dequantize(quant.Q8_0, c.kc[tt*c.ks:tt*c.ks+c.hd/aq8QK*aq8Block], kr); err != nil {
				t.Fatal(err)
			}
			for d := range kr {
				s[tt] += float64(c.q[d]) * float64(kr[d])
			}
			s[tt] *= float64(c.scale)
			m = math.Max(m, s[tt])
		}
		var sum float64
		for tt := range s {
			s[tt] = math.Exp(s[tt] - m)
			sum += s[tt]
		}
		want := make([]float64, c.vhd)
		var amax float64
		for tt := range s {
			if err := quant.Dequantize(quant.Q8_0, c.vc[tt*c.vs:tt*c.vs+c.vhd/aq8QK*aq8Block], vr); err != nil {
				t.Fatal(err)
			}
			for d := range vr {
				want[d] += s[tt] / sum * float64(vr[d])
				amax = math.Max(amax, math.Abs(float64(vr[d])))
			}
		}
		for d := range want {
			r := math.Abs(float64(got[d])-want[d]) / amax
			if !(r <= 0.02) {
				t.Fatalf("%s: out[%d] = %g, float attention %g", c.name, d, got[d], want[d])
			}
			worst = max(worst, r)
		}
	}
	t.Logf("scalar vs float attention: worst difference %.3g of max|v|", worst)
}

func TestAttentionQ8ISA(t *testing.T) {
	cases := aq8Cases(67)
	want := make([][]float32, len(cases))
	for i, c := range cases {
		want[i] = aq8Run(t, cpu.New(cpu.Scalar), c)
	}
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		worst := 0.0
		outs := map[*aq8Case][]float32{}
		for i, c := range cases {
			got := aq8Run(t, k, c)
			outs[c] = got
			ok, r, d := aq8Close(got, want[i])
			if !ok {
				t.Fatalf("%v %s: out[%d] = %g, scalar %g (%.3g of the tolerance)", isa, c.name, d, got[d], want[i][d], r)
			}
			worst = max(worst, r)
			// the same positions through a row list give the same bits
			if c.contig != nil {
				ref := outs[c.contig]
				for d := range got {
					if math.Float32bits(got[d]) != math.Float32bits(ref[d]) {
						t.Fatalf("%v %s: paged out[%d] = %g, contiguous %g", isa, c.name, d, got[d], ref[d])
					}
				}
			}
		}
		if isa != cpu.Scalar { // the scalar path runs for its paged-equals-contiguous check
			t.Logf("%v vs scalar: worst difference %.3g of the tolerance", isa, worst)
		}
	}
}

func TestAttentionQ8Panics(t *testing.T) {
	const nkv, hd, vhd = 5, 64, 32
	rbK, rbV := hd/aq8QK*aq8Block, vhd/aq8QK*aq8Block
	q, out, scratch := make([]float32, hd), make([]float32, vhd), make([]float32, nkv+hd)
	kc, vc := make([]byte, nkv*rbK), make([]byte, nkv*rbV)
	rows := []int32{4, 3, 2, 1, 0}
	k := cpu.New(cpu.Detect())
	call := func(q []float32, kc []byte, ks int, vc []byte, vs int, rows []int32, nkv, hd, vhd int, out, scratch []float32) func() {
		return func() { k.AttentionQ8(q, kc, ks, vc, vs, rows, nkv, hd, vhd, 0.125, out, scratch) }
	}
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"headDim 48", call(q, kc, rbK, vc, rbV, nil, nkv, 48, vhd, out, scratch)},
		{"vHeadDim 40", call(q, kc, rbK, vc, rbV, nil, nkv, hd, 40, out, scratch)},
		{"headDim 0", call(q, kc, rbK, vc, rbV, nil, nkv, 0, vhd, out, scratch)},
		{"vHeadDim -32", call(q, kc, rbK, vc, rbV, nil, nkv, hd, -32, out, scratch)},
		{"nkv 0", call(q, kc, rbK, vc, rbV, nil, 0, hd, vhd, out, scratch)},
		{"short q", call(q[:hd-1], kc, rbK, vc, rbV, nil, nkv, hd, vhd, out, scratch)},
		{"short k", call(q, kc[:len(kc)-1], rbK, vc, rbV, nil, nkv, hd, vhd, out, scratch)},
		{"short v", call(q, kc, rbK, vc[:len(vc)-1], rbV, nil, nkv, hd, vhd, out, scratch)},
		{"k stride", call(q, kc, rbK+1, vc, rbV, nil, nkv, hd, vhd, out, scratch)},
		{"negative stride", call(q, kc, -1, vc, rbV, nil, nkv, hd, vhd, out, scratch)},
		{"short out", call(q, kc, rbK, vc, rbV, nil, nkv, hd, vhd, out[:vhd-1], scratch)},
		{"short scratch", call(q, kc, rbK, vc, rbV, nil, nkv, hd, vhd, out, scratch[:nkv+hd-1])},
		{"short rows", call(q, kc, rbK, vc, rbV, rows[:nkv-1], nkv, hd, vhd, out, scratch)},
		{"row past the cache", call(q, kc, rbK, vc, rbV, []int32{5, 0, 1, 2, 3}, nkv, hd, vhd, out, scratch)},
		{"negative row", call(q, kc, rbK, vc, rbV, []int32{0, -1, 1, 2, 3}, nkv, hd, vhd, out, scratch)},
	} {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, "kernels/cpu: ") {
					t.Errorf("%s: recovered %v, want a kernels/cpu panic", tc.name, r)
				}
			}()
			tc.f()
		}()
	}
	// and the valid calls these variations start from do not panic
	call(q, kc, rbK, vc, rbV, nil, nkv, hd, vhd, out, scratch)()
	call(q, kc, rbK, vc, rbV, rows, nkv, hd, vhd, out, scratch)()
}

// TestAttentionQ8AVX512: the AVX-512 paths (attnq8_avx512.c, with and without VNNI) give
// the bits of the AVX2 path, single-head and grouped (every g up to GQAMax), on random
// inputs of head dims 32 to 192, lengths around the 8- and 16-position blocks of the
// score loops (and past the K prefetch distance), contiguous and paged caches; and stay
// within the tolerance of the Go reference.
func TestAttentionQ8AVX512(t *testing.T) {
	x512 := supportedAmong(cpu.AVX512, cpu.AVX512VNNI)
	if len(x512) == 0 {
		t.Skip("no AVX-512 on this machine")
	}
	avx2 := cpu.New(cpu.AVX2)
	rng := rand.New(rand.NewPCG(79, 80))
	type shape struct{ hd, vhd int }
	shapes := []shape{{32, 32}, {64, 64}, {96, 96}, {128, 128}, {192, 192}, {64, 288}, {192, 32}, {128, 512}}
	lens := []int{1, 5, 8, 9, 15, 16, 23, 24, 33, 47, 71, 100, 1000}
	for n := range 8 * 13 { // every shape with every g, and with every length
		sh, nkv := shapes[n%len(shapes)], lens[n%len(lens)]
		g := 1 + (n+n/8)%cpu.GQAMax
		paged := n%3 != 0
		rbK, rbV := sh.hd/aq8QK*aq8Block, sh.vhd/aq8QK*aq8Block
		ks, vs := 2*rbK+3, 3*rbV+1 // bytes; odd offsets
		kr, vr := make([][]byte, nkv), make([][]byte, nkv)
		for i := range kr {
			kr[i], vr[i] = aq8Quantize(elemRand(rng, sh.hd, 1)), aq8Quantize(elemRand(rng, sh.vhd, 1))
		}
		nrows := nkv
		var rows []int32
		if paged {
			rows, nrows = agPerm(rng, nkv), nkv+9
		}
		garbage := func() byte { return byte(rng.Uint32()) }
		kc, vc := agCache(kr, ks, nrows, rows, garbage), agCache(vr, vs, nrows, rows, garbage)
		q := elemRand(rng, g*sh.hd, 1.5)
		scale := float32(1 / math.Sqrt(float64(sh.hd)))
		if n%4 == 3 {
			scale = 0.5 // a sharp softmax
		}
		at := fmt.Sprintf("hd=%d vhd=%d nkv=%d g=%d paged=%v scale=%g", sh.hd, sh.vhd, nkv, g, paged, scale)
		run := func(k cpu.Kernels, single bool) []float32 {
			out, checkOut := elemGuarded(g * sh.vhd)
			scratch, checkScratch := elemGuarded(cpu.AttentionGroupScratchLen(g, nkv, sh.hd))
			if single {
				for i := 0; i < g; i++ {
					k.AttentionQ8(q[i*sh.hd:(i+1)*sh.hd], kc, ks, vc, vs, rows, nkv, sh.hd, sh.vhd, scale,
						out[i*sh.vhd:(i+1)*sh.vhd], scratch[:cpu.AttentionQ8ScratchLen(nkv, sh.hd)])
				}
			} else {
				k.AttentionQ8Group(q, g, kc, ks, vc, vs, rows, nkv, sh.hd, sh.vhd, scale, out, scratch)
			}
			checkOut(t, fmt.Sprintf("%v %s single=%v out", k.ISA(), at, single))
			checkScratch(t, fmt.Sprintf("%v %s single=%v scratch", k.ISA(), at, single))
			return append([]float32(nil), out...)
		}
		want := run(avx2, true)
		for i := 0; i < g; i++ {
			ref := aq8Ref(q[i*sh.hd:(i+1)*sh.hd], kc, ks, vc, vs, rows, nkv, sh.hd, sh.vhd, scale)
			if ok, r, d := aq8Close(want[i*sh.vhd:(i+1)*sh.vhd], ref); !ok {
				t.Fatalf("avx2 %s: head %d out[%d] = %g, Go reference %g (%.3g of the tolerance)", at, i, d, want[i*sh.vhd+d], ref[d], r)
			}
		}
		for _, isa := range x512 {
			k := cpu.New(isa)
			for _, single := range []bool{true, false} {
				got := run(k, single)
				for d := range want {
					if math.Float32bits(got[d]) != math.Float32bits(want[d]) {
						t.Fatalf("%v %s single=%v: head %d out[%d] = %g (%#x), avx2 %g (%#x)", isa, at, single, d/sh.vhd, d%sh.vhd,
							got[d], math.Float32bits(got[d]), want[d], math.Float32bits(want[d]))
					}
				}
			}
		}
	}
}
