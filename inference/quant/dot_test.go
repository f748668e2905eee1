package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

func dotTypes() []Type {
	return []Type{F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K}
}

// refDot is the float64 dot product of the dequantized rows, and the scale
// sum |w_i*x_i| the tolerance is relative to. For Q4_1/Q5_1 the integer formulation
// takes the activation block sum from the Q8_1 block's s = fp16(d*sum q) instead of
// d*sum q, so refDot adds m_w*(s - d*sum q) per block: the one place where the dot
// intentionally differs from the dequantized product.
func refDot(t *testing.T, typ Type, w, x []byte, n int) (dot, scale float64) {
	t.Helper()
	vt, _ := typ.VecDotType()
	wf, xf := make([]float32, n), make([]float32, n)
	if err := Dequantize(typ, w, wf); err != nil {
		t.Fatal(err)
	}
	if err := Dequantize(vt, x, xf); err != nil {
		t.Fatal(err)
	}
	for i := range wf {
		p := float64(wf[i]) * float64(xf[i])
		dot += p
		scale += math.Abs(p)
	}
	if vt == Q8_1 {
		ts := typ.TypeSize()
		for ib := 0; ib < n/32; ib++ {
			m := float64(f16At(w, ib*ts+2))
			bx := x[ib*36 : ib*36+36]
			var sum float64
			for j := 0; j < 32; j++ {
				sum += float64(int8(bx[4+j]))
			}
			dot += m * (float64(f16At(bx, 2)) - float64(f16At(bx, 0))*sum)
		}
	}
	return dot, scale
}

// quantRow quantizes x to typ.
func quantRow(t *testing.T, typ Type, x []float32) []byte {
	t.Helper()
	nb, err := RowBytes(typ, uint64(len(x)))
	if err != nil {
		t.Fatal(err)
	}
	q := make([]byte, nb)
	if err := Quantize(typ, x, q); err != nil {
		t.Fatal(err)
	}
	return q
}

// TestDotMatchesDequantized checks every integer formulation against the float64 dot of
// the dequantized operands: dot(w, quantize(x)) must equal it within 1e-5 of
// sum |w_i*x_i| (float32 accumulation over up to 33 blocks stays far below that), so a
// dropped min term, a wrong scale or a misread bit shows.
func TestDotMatchesDequantized(t *testing.T) {
	pairs := [][2]string{{"gauss", "gauss"}, {"outliers", "positive"}, {"shifted", "laplace"}, {"positive", "shifted"}}
	for _, typ := range dotTypes() {
		dot, err := Dot(typ)
		if err != nil {
			t.Fatal(err)
		}
		vt, _ := typ.VecDotType()
		bs := max(typ.BlockSize(), 32)
		for pi, p := range pairs {
			for _, blocks := range []int{1, 3, 7, 33} {
				n := blocks * bs
				r := rand.New(rand.NewPCG(uint64(blocks), uint64(pi)))
				w := quantRow(t, typ, sample(r, p[0], n))
				x := quantRow(t, vt, sample(r, p[1], n))
				got := dot(w, x, n)
				want, scale := refDot(t, typ, w, x, n)
				if d := math.Abs(float64(got) - want); d > 1e-5*scale+1e-30 {
					t.Errorf("%v·%v %s/%s n=%d: dot %.9g, dequantized %.9g (diff %.3g, scale %.3g)",
						typ, vt, p[0], p[1], n, got, want, d, scale)
				}
				if r, err := DotRow(typ, w, x, n); err != nil || r != got {
					t.Errorf("%v: DotRow = %v, %v; DotFunc %v", typ, r, err, got)
				}
			}
		}
	}
}

// TestDotSmall checks exact values: weights all -1 (exact in every type here: Q4_0
// stores d = -1/-8 and q = 0) against small integers led by -127 (so Q8_0 gets d = 1
// and Q8_K iscale = -127/-127 = 1: exact too). Q8_0 weights use the same integers.
func TestDotSmall(t *testing.T) {
	for _, typ := range []Type{F32, F16, BF16, Q8_0, Q4_0, Q6_K} {
		vt, _ := typ.VecDotType()
		bs := max(typ.BlockSize(), 32)
		ones, ramp := make([]float32, bs), make([]float32, bs)
		var want float64
		for i := range ones {
			ones[i] = -1
			ramp[i] = float32(i%8 - 3)
		}
		ramp[0] = -127
		w := ones
		if typ == Q8_0 {
			w = ramp
		}
		for i, v := range ramp {
			want += float64(w[i]) * float64(v)
		}
		got, err := DotRow(typ, quantRow(t, typ, w), quantRow(t, vt, ramp), bs)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(got)-want) > 1e-6*math.Abs(want)+1e-6 {
			t.Errorf("%v: dot = %g, want %g", typ, got, want)
		}
	}
}
