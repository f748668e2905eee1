package quant

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// rmsBound is the largest relative RMS error, sqrt(sum (x-y)^2 / sum x^2), allowed for a
// quantize -> dequantize round trip: typical covers the gauss, uniform, laplace,
// positive and shifted distributions below, outliers the gaussian with 1% of values
// scaled by 20. Each is the worst value measured over those distributions, 5 seeds
// and 1, 3, 7 and 33 blocks (run with -v to print them), plus 25% margin. They agree
// with the textbook estimate step/sqrt(12) for a b-bit uniform grid over a block's
// range: e.g. Q4_K, 32 gaussians spanning about 4.2 sigma in 15 steps, gives 8.1%
// (measured 8.2%), Q6_K, 16 values within +-1.8 sigma in 63 steps of its +-32 grid,
// 1.6% (measured 2.0%). A wrong bit layout gives errors near 100% or more.
var rmsBound = map[Type]struct{ typical, outliers float64 }{
	F16:  {0.0005, 0.0005}, // measured 0.023% / 0.032%; bound: half an ulp, 2^-11
	BF16: {0.004, 0.004},   // 0.19% / 0.22%; bound: 2^-8
	Q8_0: {0.011, 0.017},   // 0.85% / 1.32%
	Q8_1: {0.011, 0.017},   // 0.85% / 1.32%
	Q8_K: {0.018, 0.040},   // 1.42% / 3.16% (one scale for 256 values)
	Q4_0: {0.155, 0.23},    // 12.4% / 18.4%
	Q4_1: {0.155, 0.14},    // 12.3% / 11.3%
	Q5_0: {0.088, 0.13},    // 7.0% / 10.4%
	Q5_1: {0.068, 0.074},   // 5.4% / 5.9%
	Q2_K: {0.47, 0.45},     // 38.0% / 35.7%
	Q3_K: {0.23, 0.265},    // 18.2% / 21.2%
	Q4_K: {0.11, 0.135},    // 8.8% / 10.8%
	Q5_K: {0.055, 0.070},   // 4.4% / 5.6%
	Q6_K: {0.0305, 0.046},  // 2.4% / 3.7%
}

var distributions = []string{"gauss", "uniform", "laplace", "positive", "shifted", "outliers"}

// sample draws n values of a distribution, scaled by 0.02 like trained LLM weights.
func sample(r *rand.Rand, dist string, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		var v float64
		switch dist {
		case "gauss":
			v = r.NormFloat64()
		case "uniform":
			v = r.Float64()*2 - 1
		case "laplace":
			v = r.ExpFloat64()
			if r.IntN(2) == 0 {
				v = -v
			}
		case "positive":
			v = r.Float64()
		case "shifted":
			v = r.NormFloat64() + 2
		case "outliers":
			v = r.NormFloat64()
			if r.IntN(100) == 0 {
				v *= 20
			}
		default:
			panic(dist)
		}
		x[i] = float32(v * 0.02)
	}
	return x
}

// roundTrip quantizes x to typ and back.
func roundTrip(t *testing.T, typ Type, x []float32) ([]byte, []float32) {
	t.Helper()
	nb, err := RowBytes(typ, uint64(len(x)))
	if err != nil {
		t.Fatal(err)
	}
	q := make([]byte, nb)
	if err := Quantize(typ, x, q); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	if err := Dequantize(typ, q, y); err != nil {
		t.Fatal(err)
	}
	return q, y
}

func relRMS(x, y []float32) float64 {
	var se, sx float64
	for i := range x {
		e := float64(x[i]) - float64(y[i])
		se += e * e
		sx += float64(x[i]) * float64(x[i])
	}
	return math.Sqrt(se / sx)
}

func quantTypes() []Type {
	return []Type{F16, BF16, Q8_0, Q8_1, Q8_K, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K}
}

func TestRoundTripError(t *testing.T) {
	for _, typ := range quantTypes() {
		if !CanQuantize(typ) {
			t.Fatalf("CanQuantize(%v) = false", typ)
		}
		bound := rmsBound[typ]
		worst := map[string]float64{}
		for di, dist := range distributions {
			limit := bound.typical
			if dist == "outliers" {
				limit = bound.outliers
			}
			for _, blocks := range []int{1, 3, 7, 33} {
				for seed := uint64(0); seed < 5; seed++ {
					// Plain types have block size 1: use rows of 256 there too.
					n := blocks * max(typ.BlockSize(), 32) * (QK_K / max(typ.BlockSize(), 32))
					if typ.BlockSize() == 32 {
						n = blocks * 32
					}
					x := sample(rand.New(rand.NewPCG(seed, uint64(di))), dist, n)
					_, y := roundTrip(t, typ, x)
					e := relRMS(x, y)
					worst[dist] = max(worst[dist], e)
					if e > limit {
						t.Errorf("%v %s, %d elements, seed %d: relative RMS error %.3f%% > %.3f%%",
							typ, dist, n, seed, 100*e, 100*limit)
					}
				}
			}
		}
		msg := typ.String() + ":"
		for _, d := range distributions {
			msg += fmt.Sprintf(" %s %.3f%%", d, 100*worst[d])
		}
		t.Log(msg)
	}
}

// TestQualityOrder checks that more bits give less error on the same gaussian data.
func TestQualityOrder(t *testing.T) {
	x := sample(rand.New(rand.NewPCG(9, 9)), "gauss", 16*QK_K)
	order := [][]Type{{Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_0}, {Q4_0, Q5_0, Q8_0}, {Q4_1, Q5_1}, {Q4_0, Q4_1}, {Q5_0, Q5_1}}
	for _, chain := range order {
		prev := math.Inf(1)
		for _, typ := range chain {
			_, y := roundTrip(t, typ, x)
			e := relRMS(x, y)
			if e >= prev {
				t.Errorf("%v error %.3f%% is not below the previous type's %.3f%% in %v", typ, 100*e, 100*prev, chain)
			}
			prev = e
		}
	}
}

// specialRow builds 4 blocks (of the type's block size, or 256 for plain types): all
// zero, constant, one huge outlier among small values, and a sparse block.
func specialRow(typ Type) ([]float32, int) {
	bs := max(typ.BlockSize(), 32)
	if typ.BlockSize() == 1 {
		bs = QK_K
	}
	r := rand.New(rand.NewPCG(5, 5))
	x := make([]float32, 4*bs)
	for i := 0; i < bs; i++ {
		x[bs+i] = 0.37
		x[2*bs+i] = float32(r.NormFloat64() * 0.01)
		if i%7 == 0 {
			x[3*bs+i] = float32(r.NormFloat64())
		}
	}
	x[2*bs+5] = 100
	return x, bs
}

func TestSpecialBlocks(t *testing.T) {
	for _, typ := range quantTypes() {
		x, bs := specialRow(typ)
		_, y := roundTrip(t, typ, x)
		limit := rmsBound[typ].typical
		// All-zero block: exactly zero.
		for i := 0; i < bs; i++ {
			if y[i] != 0 {
				t.Errorf("%v: zero block element %d = %g", typ, i, y[i])
				break
			}
		}
		// Constant block: within the type's typical error.
		if e := relRMS(x[bs:2*bs], y[bs:2*bs]); e > limit {
			t.Errorf("%v: constant block error %.3f%% > %.3f%%", typ, 100*e, 100*limit)
		}
		// The outlier itself survives within the typical relative error.
		if got := y[2*bs+5]; math.Abs(float64(got)-100) > 100*limit {
			t.Errorf("%v: outlier 100 comes back as %g", typ, got)
		}
		// Sparse block: bounded error.
		if e := relRMS(x[3*bs:], y[3*bs:]); e > sparseBound[typ] {
			t.Errorf("%v: sparse block error %.3f%% > %.3f%%", typ, 100*e, 100*sparseBound[typ])
		}
	}
}

// TestNonFinite checks that NaN and infinite inputs do not panic, and that blocks
// without them are encoded exactly as if quantized alone.
func TestNonFinite(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, typ := range quantTypes() {
		bs := max(typ.BlockSize(), 32)
		good := sample(rand.New(rand.NewPCG(1, 1)), "gauss", bs)
		for _, bad := range [][]float32{{nan}, {inf}, {-inf}, {nan, inf, -inf}, {nan, 1e30, -1e30}} {
			x := make([]float32, 0, 3*bs)
			x = append(x, good...)
			blk := sample(rand.New(rand.NewPCG(2, 2)), "gauss", bs)
			for i, v := range bad {
				blk[3*i+1] = v
			}
			x = append(x, blk...)
			x = append(x, good...)
			q, _ := roundTrip(t, typ, x) // must not panic
			alone, _ := roundTrip(t, typ, good)
			ts := len(alone)
			if !bytes.Equal(q[:ts], alone) || !bytes.Equal(q[2*ts:], alone) {
				t.Errorf("%v: blocks next to %v changed", typ, bad)
			}
			// All-NaN block too.
			allNaN := make([]float32, bs)
			for i := range allNaN {
				allNaN[i] = nan
			}
			roundTrip(t, typ, allNaN)
		}
	}
}

// sparseBound is the relative RMS error allowed on the sparse block of specialRow (one
// value in 7 nonzero): the measured value (in the comment) plus 50%, as it is a single
// sample. Types with a min (Q4_1, Q2_K) cannot hit the zeros exactly and do worst.
var sparseBound = map[Type]float64{
	F16:  0.0005, // 0.022%
	BF16: 0.004,  // 0.195%
	Q8_0: 0.0055, // 0.37%
	Q8_1: 0.0055, // 0.37%
	Q8_K: 0.0105, // 0.69%
	Q4_0: 0.07,   // 4.6%
	Q4_1: 0.24,   // 16.1%
	Q5_0: 0.028,  // 1.8%
	Q5_1: 0.031,  // 2.0%
	Q2_K: 0.53,   // 35.1%
	Q3_K: 0.123,  // 8.2%
	Q4_K: 0.071,  // 4.7%
	Q5_K: 0.034,  // 2.3%
	Q6_K: 0.0113, // 0.75%
}
