package quant

import (
	"math"
	"testing"
)

func allTypes() []Type {
	var ts []Type
	for t := range typeTraits {
		ts = append(ts, t)
	}
	return append(ts, Type(4), Type(99))
}

// TestWrongLengths: every mismatch of element count and byte count is an error (or NaN
// from a DotFunc), for every type, and nothing panics.
func TestWrongLengths(t *testing.T) {
	for _, typ := range allTypes() {
		bs, ts := typ.BlockSize(), typ.TypeSize()
		if bs == 0 {
			bs, ts = 1, 1
		}
		cases := []struct {
			n, nbytes int
			ok        bool
		}{
			{0, 0, true},
			{bs, ts, true},
			{3 * bs, 3 * ts, true},
			{bs, ts - 1, false},
			{bs, ts + 1, false},
			{bs, 0, false},
			{2 * bs, ts, false},
			{0, ts, false},
		}
		if bs > 1 {
			cases = append(cases, struct {
				n, nbytes int
				ok        bool
			}{bs + 1, ts, false}, struct {
				n, nbytes int
				ok        bool
			}{bs - 1, ts, false})
		}
		for _, c := range cases {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%v n=%d bytes=%d: panic %v", typ, c.n, c.nbytes, r)
					}
				}()
				src, dst := make([]byte, c.nbytes), make([]float32, c.n)
				err := Dequantize(typ, src, dst)
				if want := c.ok && CanDequantize(typ); (err == nil) != want {
					t.Errorf("Dequantize %v n=%d bytes=%d: err %v, want ok=%v", typ, c.n, c.nbytes, err, want)
				}
				err = Quantize(typ, dst, src)
				if want := c.ok && CanQuantize(typ); (err == nil) != want {
					t.Errorf("Quantize %v n=%d bytes=%d: err %v, want ok=%v", typ, c.n, c.nbytes, err, want)
				}
				dot, err := Dot(typ)
				if err != nil {
					if _, ok := dotters[typ]; ok {
						t.Errorf("Dot(%v): %v", typ, err)
					}
					return
				}
				vt, _ := typ.VecDotType()
				xb, _ := RowBytes(vt, uint64(c.n)) // 0 where n does not fit vt's blocks
				x := make([]byte, xb)
				got := dot(src, x, c.n)
				_, rerr := DotRow(typ, src, x, c.n)
				if c.ok && (math.IsNaN(float64(got)) || rerr != nil) {
					t.Errorf("Dot %v n=%d: %v, %v", typ, c.n, got, rerr)
				}
				if !c.ok && (!math.IsNaN(float64(got)) || rerr == nil) {
					t.Errorf("Dot %v n=%d bytes=%d: %v, %v; want NaN and an error", typ, c.n, c.nbytes, got, rerr)
				}
			}()
		}
	}
}

func TestDotArgErrors(t *testing.T) {
	for _, typ := range []Type{Q8_1, Q8_K, IQ4_NL, I8, Type(99)} {
		if _, err := Dot(typ); err == nil {
			t.Errorf("Dot(%v): no error", typ)
		}
		if _, err := DotRow(typ, nil, nil, 0); err == nil {
			t.Errorf("DotRow(%v): no error", typ)
		}
	}
	dot, _ := Dot(Q4_K)
	w := make([]byte, 144)
	x := make([]byte, 292)
	if got := dot(w, x, 256); got != 0 {
		t.Errorf("zero blocks: %v", got)
	}
	for _, c := range []struct {
		w, x []byte
		n    int
	}{
		{w, x[:291], 256}, // short activations
		{w, x, -256},      // negative count
		{w[:143], x, 256}, // short weights
		{w, x, 128},       // not a multiple of the block size
		{append(w, w...), x, 256},
	} {
		if got := dot(c.w, c.x, c.n); !math.IsNaN(float64(got)) {
			t.Errorf("len(w)=%d len(x)=%d n=%d: %v, want NaN", len(c.w), len(c.x), c.n, got)
		}
	}
	if Quantize(IQ2_XXS, make([]float32, 256), make([]byte, 66)) == nil {
		t.Error("Quantize(IQ2_XXS): no error")
	}
	if Dequantize(IQ2_XXS, make([]byte, 66), make([]float32, 256)) == nil {
		t.Error("Dequantize(IQ2_XXS): no error")
	}
}
