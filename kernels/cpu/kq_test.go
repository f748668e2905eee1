package cpu_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"ember/inference/quant"
	"ember/kernels/cpu"
)

// The K-quant kernels (kq*.c) against package quant, on every path this machine runs.

var kqTypes = []quant.Type{quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K}

// kqHalves lists the byte offsets of the f16 scale fields (d, dmin) of a block of t.
func kqHalves(t quant.Type) []int {
	switch t {
	case quant.Q2_K:
		return []int{80, 82}
	case quant.Q3_K:
		return []int{108}
	case quant.Q4_K, quant.Q5_K:
		return []int{0, 2}
	case quant.Q6_K:
		return []int{208}
	}
	panic(t)
}

// kqFloats fills a row of n floats; each 256-block gets its own flavour so that one row
// mixes scales, all-zero blocks, single outliers, constant blocks and sign patterns.
func kqFloats(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for b := 0; b < n/256; b++ {
		y := x[256*b : 256*b+256]
		scale := float32(math.Pow(10, float64(rng.Intn(7)-5))) // 1e-5 .. 10
		switch rng.Intn(8) {
		case 0: // all zero
		case 1: // one extreme value among small ones
			for i := range y {
				y[i] = scale * 1e-3 * float32(rng.NormFloat64())
			}
			y[rng.Intn(256)] = scale * 1e3 * float32(2*rng.Intn(2)-1) // <= 1e4: f16 d stays finite
		case 2: // constant
			v := scale * float32(rng.NormFloat64())
			for i := range y {
				y[i] = v
			}
		case 3: // all positive
			for i := range y {
				y[i] = scale * float32(rng.Float64())
			}
		case 4: // all negative
			for i := range y {
				y[i] = -scale * float32(rng.Float64())
			}
		default:
			for i := range y {
				y[i] = scale * float32(rng.NormFloat64())
			}
		}
	}
	return x
}

func kqQuantRow(tb testing.TB, t quant.Type, x []float32) []byte {
	rb, err := quant.RowBytes(t, uint64(len(x)))
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]byte, rb)
	if err := quant.Quantize(t, x, out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// kqWeightRow is a row of k elements of t: quantized floats, or (1 in 4 rows) random
// bytes with finite, modest f16 scales, so every bit pattern of quants and sub-block
// scales occurs (Q6_K scale -128, Q3_K scale -32, Q5_K high bits, ...).
func kqWeightRow(tb testing.TB, rng *rand.Rand, t quant.Type, k int) []byte {
	if rng.Intn(4) != 0 {
		return kqQuantRow(tb, t, kqFloats(rng, k))
	}
	row := make([]byte, k/256*t.TypeSize())
	rng.Read(row)
	for b := 0; b < k/256; b++ {
		for _, off := range kqHalves(t) {
			h := quant.FP32ToFP16(float32(rng.NormFloat64()) * float32(math.Pow(10, float64(rng.Intn(7)-4))))
			binary.LittleEndian.PutUint16(row[b*t.TypeSize()+off:], h)
		}
	}
	return row
}

// kqMagnitude is the scale of a dot's rounding error: sum_i |w_i x_i| over the
// dequantized values plus, for the types with mins, sum_i |m_i x_i| of the min part
// alone (the block with its quants zeroed), since d*I and dmin*M are rounded apart.
func kqMagnitude(t quant.Type, w, x []byte, k int) float64 {
	wf, xf := make([]float32, k), make([]float32, k)
	if err := quant.Dequantize(t, w, wf); err != nil {
		panic(err)
	}
	if err := quant.Dequantize(quant.Q8_K, x, xf); err != nil {
		panic(err)
	}
	var mag float64
	for i := range wf {
		mag += math.Abs(float64(wf[i]) * float64(xf[i]))
	}
	var zlo, zhi int // quant bytes of a block, zeroed to leave -dmin*m
	switch t {
	case quant.Q2_K:
		zlo, zhi = 16, 80
	case quant.Q4_K:
		zlo, zhi = 16, 144
	case quant.Q5_K:
		zlo, zhi = 16, 176
	default:
		return mag
	}
	z := append([]byte(nil), w...)
	for b := 0; b < k/256; b++ {
		clear(z[b*t.TypeSize()+zlo : b*t.TypeSize()+zhi])
	}
	if err := quant.Dequantize(t, z, wf); err != nil {
		panic(err)
	}
	for i := range wf {
		mag += math.Abs(float64(wf[i]) * float64(xf[i]))
	}
	return mag
}

type kqCase struct {
	t      quant.Type
	k      int
	w, x   [][]byte    // weight rows, activation rows (Q8_K, from quant.Quantize)
	want   [][]float64 // want[i][r] = quant.Dot(w[r], x[i])
	tol    [][]float64
	wbytes int
}

func newKQCase(tb testing.TB, rng *rand.Rand, t quant.Type, k, rows, nx int) *kqCase {
	c := &kqCase{t: t, k: k, wbytes: k / 256 * t.TypeSize()}
	for r := 0; r < rows; r++ {
		c.w = append(c.w, kqWeightRow(tb, rng, t, k))
	}
	for i := 0; i < nx; i++ {
		c.x = append(c.x, kqQuantRow(tb, quant.Q8_K, kqFloats(rng, k)))
	}
	dot, err := quant.Dot(t)
	if err != nil {
		tb.Fatal(err)
	}
	c.want, c.tol = make([][]float64, nx), make([][]float64, nx)
	for i := range c.x {
		c.want[i], c.tol[i] = make([]float64, rows), make([]float64, rows)
		for r := range c.w {
			c.want[i][r] = float64(dot(c.w[r], c.x[i], k))
			c.tol[i][r] = 1e-5*kqMagnitude(t, c.w[r], c.x[i], k) + 1e-30
		}
	}
	return c
}

const kqGuard = 0x7fc0dead // a NaN no kernel computes

// run calls Gemm for the first nx activation rows and weight rows [r0, r1) of the first
// rows, with padded row strides and guard values all around dst, and checks everything.
func (c *kqCase) run(t *testing.T, k cpu.Kernels, nx, rows, r0, r1, wpad, xpad, lddpad int) {
	t.Helper()
	wrb, xrb := c.wbytes+wpad, len(c.x[0])+xpad
	// Both inputs end at an inaccessible page (linux): a read past them faults.
	w, freeW := kqGuardedBytes(r1 * wrb)
	defer freeW()
	for r := 0; r < r1; r++ {
		copy(w[r*wrb:], c.w[r])
		for p := c.wbytes; p < wrb; p++ {
			w[r*wrb+p] = 0xa5
		}
	}
	xq, freeX := kqGuardedBytes(nx * xrb)
	defer freeX()
	for i := 0; i < nx; i++ {
		copy(xq[i*xrb:], c.x[i])
		for p := len(c.x[0]); p < xrb; p++ {
			xq[i*xrb+p] = 0x5a
		}
	}
	ldd := rows + lddpad
	dst := make([]float32, nx*ldd+7)
	for i := range dst {
		dst[i] = math.Float32frombits(kqGuard)
	}
	if !k.Gemm(int(c.t), w, wrb, xq, xrb, nx, c.k, r0, r1, dst, ldd) {
		t.Fatalf("%v: Gemm did not handle the type", c.t)
	}
	for i := 0; i < nx; i++ {
		for r := 0; r < ldd; r++ {
			got := dst[i*ldd+r]
			if r < r0 || r >= r1 {
				if math.Float32bits(got) != kqGuard {
					t.Fatalf("%v k=%d nx=%d rows [%d,%d) ldd=%d: dst[%d][%d] written (%g)", c.t, c.k, nx, r0, r1, ldd, i, r, got)
				}
				continue
			}
			want, tol := c.want[i][r], c.tol[i][r]
			if d := math.Abs(float64(got) - want); !(d <= tol) {
				t.Fatalf("%v k=%d nx=%d rows [%d,%d) wpad=%d: dst[%d][%d] = %g, want %g (diff %g > tol %g)",
					c.t, c.k, nx, r0, r1, wpad, i, r, got, want, d, tol)
			}
		}
	}
	for i := nx * ldd; i < len(dst); i++ {
		if math.Float32bits(dst[i]) != kqGuard {
			t.Fatalf("%v: dst[%d] past the last row written", c.t, i)
		}
	}
}

func TestGemmKQ(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	nxs := []int{1, 2, 3, 4, 5, 7, 8, 13, 33}
	rowss := []int{1, 3, 7, 33, 64}
	ks := []int{256, 512, 2816, 4096}
	for _, qt := range kqTypes {
		for _, kd := range ks {
			c := newKQCase(t, rng, qt, kd, 64, 33)
			for _, kern := range pathKernels() {
				t.Run(fmt.Sprintf("%v/k%d/%v", qt, kd, kern.Name()), func(t *testing.T) {
					for _, nx := range nxs {
						for _, rows := range rowss {
							c.run(t, kern, nx, rows, 0, rows, 0, 0, 0)
							if rows > 2 {
								r0, r1 := 1+rng.Intn(rows/2), rows-rng.Intn(rows/2)
								c.run(t, kern, nx, rows, r0, r1, rng.Intn(40), rng.Intn(40), 1+rng.Intn(9))
							}
						}
					}
				})
			}
		}
	}
}

func TestGemmKQEmpty(t *testing.T) {
	for _, isa := range cpu.Supported() {
		for _, qt := range kqTypes {
			for _, nx := range []int{1, 5} {
				dst := []float32{7, 7, 7, 7, 7, 7, 7, 7, 7, 7}
				if !cpu.New(isa).Gemm(int(qt), nil, 0, nil, 0, nx, 0, 0, 2, dst, 2) {
					t.Fatalf("%v %v: not handled", isa, qt)
				}
				for i := 0; i < nx*2 && i < len(dst); i++ {
					if dst[i] != 0 {
						t.Fatalf("%v %v nx=%d: k=0 gave dst[%d] = %g, want 0", isa, qt, nx, i, dst[i])
					}
				}
			}
		}
	}
}

// TestGemmKQPathsAgree checks that every path gives the scalar path's values within
// the same tolerance on a larger product, with the blockings of the gemm paths.
func TestGemmKQPathsAgree(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, qt := range kqTypes {
		c := newKQCase(t, rng, qt, 256*19, 67, 70)
		for _, kern := range pathKernels() {
			t.Run(fmt.Sprintf("%v/%v", qt, kern.Name()), func(t *testing.T) {
				c.run(t, kern, 70, 67, 0, 67, 0, 0, 0)
				c.run(t, kern, 69, 67, 5, 66, 3, 1, 2)
			})
		}
	}
}

func TestQuantizeQ8K(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var rows [][]float32
	for i := 0; i < 40; i++ {
		rows = append(rows, kqFloats(rng, 256*(1+rng.Intn(6))))
	}
	ties := make([]float32, 512)
	for i := range ties { // max -127 gives iscale 1: every x.5 is a tie
		ties[i] = float32(rng.Intn(254)-127) + 0.5
	}
	ties[3], ties[300] = -127, -127
	rows = append(rows, ties)
	tie2 := make([]float32, 256)
	for i := range tie2 { // max +254: iscale -0.5, halves of odd numbers tie
		tie2[i] = float32(2*rng.Intn(254) - 253)
	}
	tie2[17] = 254
	rows = append(rows, tie2)
	both := make([]float32, 256) // +a before -a: the first wins
	for i := range both {
		both[i] = float32(rng.NormFloat64())
	}
	both[10], both[200] = 7, -7
	rows = append(rows, both, make([]float32, 768))
	sub := make([]float32, 256) // subnormals
	for i := range sub {
		sub[i] = math.Float32frombits(uint32(rng.Intn(1 << 23)))
	}
	rows = append(rows, sub)
	odd := make([]float32, 512) // NaN and infinities: garbage, but the reference's garbage
	for i := range odd {
		odd[i] = float32(rng.NormFloat64())
	}
	odd[5], odd[260], odd[261] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	rows = append(rows, odd)
	for _, isa := range cpu.Supported() {
		kern := cpu.New(isa)
		for ri, x := range rows {
			want := kqQuantRow(t, quant.Q8_K, x)
			got := make([]byte, len(want))
			for i := range got {
				got[i] = 0xee
			}
			if !kern.QuantizeRows(cpu.TypeQ8_K, x, got, 1, len(x)) {
				t.Fatalf("%v: Q8_K not handled", isa)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%v row %d: byte %d (block %d offset %d) = %#x, want %#x", isa, ri, i, i/292, i%292, got[i], want[i])
				}
			}
		}
		// Several rows at once, packed.
		n, nr := 512, 5
		x := kqFloats(rng, n*nr)
		want := kqQuantRow(t, quant.Q8_K, x)
		got := make([]byte, len(want))
		kern.QuantizeRows(cpu.TypeQ8_K, x, got, nr, n)
		if string(got) != string(want) {
			t.Fatalf("%v: packed rows differ", isa)
		}
		// Other activation types are not the K file's; the package answer must not be ours.
		if kern.QuantizeRows(cpu.TypeQ8_K, x[:0], got[:0], 0, 0) != true {
			t.Fatalf("%v: empty quantize", isa)
		}
	}
}

func kqSameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

func TestDequantizeKQ(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	types := append(append([]quant.Type(nil), kqTypes...), quant.Q8_K)
	for _, qt := range types {
		for _, isa := range cpu.Supported() {
			kern := cpu.New(isa)
			for trial := 0; trial < 30; trial++ {
				n := 256 * (1 + rng.Intn(5))
				var src []byte
				switch {
				case trial%3 == 0: // raw random bytes: every pattern, NaN/Inf scales included
					src = make([]byte, n/256*qt.TypeSize())
					rng.Read(src)
				case qt == quant.Q8_K:
					src = kqQuantRow(t, qt, kqFloats(rng, n))
				default:
					src = kqWeightRow(t, rng, qt, n)
				}
				want := make([]float32, n)
				if err := quant.Dequantize(qt, src, want); err != nil {
					t.Fatal(err)
				}
				got := make([]float32, n+3)
				for i := range got {
					got[i] = math.Float32frombits(kqGuard)
				}
				if !kern.DequantizeRow(int(qt), src, got[:n]) {
					t.Fatalf("%v %v: not handled", qt, isa)
				}
				for i := 0; i < n; i++ {
					if !kqSameFloat(got[i], want[i]) {
						t.Fatalf("%v %v trial %d: y[%d] = %g (%#x), want %g (%#x)", qt, isa, trial, i,
							got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
				for i := n; i < len(got); i++ {
					if math.Float32bits(got[i]) != kqGuard {
						t.Fatalf("%v %v: y[%d] past the row written", qt, isa, i)
					}
				}
			}
		}
	}
}
