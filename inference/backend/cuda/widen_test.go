package cuda

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync"
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

// widenQ5, the tests' reference for packWidenQ5, rewrites Q5_0 blocks (22 bytes: the f16 scale d, qh's 32 high bits, 16 bytes
// of low nibbles) as Q8_0 blocks (34 bytes: d, then 32 int8 values), both in GGUF order:
// value j < 16 is (qs[j] & 15 | bit j of qh << 4) - 16, value j + 16 is (qs[j] >> 4 | bit
// j + 16 of qh << 4) - 16. src holds whole blocks (rows of whole blocks).
func widenQ5(src []byte) []byte {
	nb := len(src) / 22
	out := make([]byte, 34*nb)
	for ib := 0; ib < nb; ib++ {
		in, o := src[22*ib:22*ib+22], out[34*ib:34*ib+34]
		o[0], o[1] = in[0], in[1]
		qh := binary.LittleEndian.Uint32(in[2:6])
		for j := 0; j < 16; j++ {
			lo, hi := int(in[6+j]&15)|int(qh>>j&1)<<4, int(in[6+j]>>4)|int(qh>>(j+16)&1)<<4
			o[2+j], o[18+j] = byte(int8(lo-16)), byte(int8(hi-16))
		}
	}
	return out
}

// TestPackWidenQ5 (no GPU needed): packWidenQ5 gives pack(Q8_0) of widenQ5's rows byte
// for byte, padding included, for random Q5_0 rows of one, odd and DeepSeek-V2-Lite's
// 44 blocks, and for a tensor large enough to be split over goroutines.
func TestPackWidenQ5(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for _, c := range []struct{ rows, cols int }{{1, 32}, {7, 96}, {5, 1408}, {3200, 1408}} {
		src := make([]byte, c.rows*22*c.cols/32)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		rb := 34 * c.cols / 32
		want := pack(quant.Q8_0, c.rows, c.cols, rb, align16(rb), widenQ5(src))
		if got := packWidenQ5(c.rows, c.cols, align16(rb), src); !bytes.Equal(got, want) {
			t.Fatalf("%dx%d: packWidenQ5 differs from pack(widenQ5)", c.rows, c.cols)
		}
	}
}

// TestOverRows: overRows hands every row to exactly one call, for sizes below and past
// packMinBytes a goroutine, and more goroutines than rows.
func TestOverRows(t *testing.T) {
	for _, c := range []struct{ rows, size int }{{1, 1}, {5, 100}, {3, 64 * packMinBytes}, {1000, 10 * packMinBytes}, {17, 3*packMinBytes + 1}} {
		seen := make([]int32, c.rows)
		var mu sync.Mutex
		overRows(c.rows, c.size, func(r0, r1 int) {
			mu.Lock()
			defer mu.Unlock()
			for r := r0; r < r1; r++ {
				seen[r]++
			}
		})
		for r, n := range seen {
			if n != 1 {
				t.Fatalf("%d rows, %d bytes: row %d handed out %d times", c.rows, c.size, r, n)
			}
		}
	}
}
