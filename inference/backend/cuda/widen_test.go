package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/quant"
)

// TestWidenQ5 (no GPU needed): widenQ5's Q8_0 rows dequantize to exactly the Q5_0
// rows' values, for random blocks (every quant and high bit, scales of both signs) and
// rows of one, odd and DeepSeek-V2-Lite's 44 blocks; and a product of each with the
// same Q8_0 activation row agrees.
func TestWidenQ5(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, c := range []struct{ rows, cols int }{{1, 32}, {3, 96}, {5, 1408}, {2, 4128}} {
		n := c.rows * c.cols
		src := make([]byte, 22*n/32)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		for ib := 0; ib < n/32; ib++ { // a finite scale for each block
			d := quant.FP32ToFP16(float32(rng.NormFloat64() * 0.01))
			src[22*ib], src[22*ib+1] = byte(d), byte(d>>8)
		}
		wide := widenQ5(src)
		if len(wide) != 34*n/32 {
			t.Fatalf("%dx%d: %d bytes, want %d", c.rows, c.cols, len(wide), 34*n/32)
		}
		a, b := make([]float32, n), make([]float32, n)
		if err := quant.Dequantize(quant.Q5_0, src, a); err != nil {
			t.Fatal(err)
		}
		if err := quant.Dequantize(quant.Q8_0, wide, b); err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%dx%d: value %d is %g as Q5_0 and %g widened", c.rows, c.cols, i, a[i], b[i])
			}
		}
		x := make([]float32, c.cols)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		xq := make([]byte, 34*c.cols/32)
		if err := quant.Quantize(quant.Q8_0, x, xq); err != nil {
			t.Fatal(err)
		}
		rb := 22 * c.cols / 32
		for r := 0; r < c.rows; r++ {
			d5, err := quant.DotRow(quant.Q5_0, src[r*rb:(r+1)*rb], xq, c.cols)
			if err != nil {
				t.Fatal(err)
			}
			d8, err := quant.DotRow(quant.Q8_0, wide[r*34*c.cols/32:(r+1)*34*c.cols/32], xq, c.cols)
			if err != nil {
				t.Fatal(err)
			}
			if diff := math.Abs(float64(d5 - d8)); diff > 1e-5*(1+math.Abs(float64(d5))) {
				t.Errorf("%dx%d row %d: dot %g as Q5_0, %g widened", c.rows, c.cols, r, d5, d8)
			}
		}
	}
}
