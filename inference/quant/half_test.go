package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refFP16 is a slow but obvious float64 reference for FP32ToFP16: scale the magnitude
// to an integer count of half ulps, round it to even, and assemble the bits.
func refFP16(f float32) uint16 {
	var sign uint16
	if math.Signbit(float64(f)) {
		sign = 0x8000
	}
	a := math.Abs(float64(f))
	switch {
	case math.IsNaN(a):
		return sign | 0x7e00
	case a >= 65520: // halfway between 65504 and 65536 rounds (to even) up to infinity
		return sign | 0x7c00
	case a < math.Ldexp(1, -14): // subnormal: units of 2^-24
		return sign | uint16(math.RoundToEven(a*(1<<24)))
	}
	_, e := math.Frexp(a) // a = frac * 2^e, frac in [0.5, 1)
	e--                   // a in [2^e, 2^(e+1))
	m := math.RoundToEven(math.Ldexp(a, 10-e))
	if m == 2048 {
		m, e = 1024, e+1
	}
	return sign | uint16(e+15)<<10 | uint16(m-1024)
}

// refBF16 is the float64 reference for FP32ToBF16 (7 mantissa bits, float32's exponent
// range; subnormals in units of 2^-133).
func refBF16(f float32) uint16 {
	var sign uint16
	if math.Signbit(float64(f)) {
		sign = 0x8000
	}
	a := math.Abs(float64(f))
	switch {
	case math.IsNaN(a):
		return uint16(math.Float32bits(f)>>16) | 0x40
	case math.IsInf(a, 0):
		return sign | 0x7f80
	case a < math.Ldexp(1, -126):
		return sign | uint16(math.RoundToEven(math.Ldexp(a, 133)))
	}
	_, e := math.Frexp(a)
	e--
	m := math.RoundToEven(math.Ldexp(a, 7-e))
	if m == 256 {
		m, e = 128, e+1
	}
	if e > 127 {
		return sign | 0x7f80
	}
	return sign | uint16(e+127)<<7 | uint16(m-128)
}

// halfValue is the exact value of a non-NaN half, computed from the IEEE definition.
func halfValue(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	switch e {
	case 0x1f:
		return math.Inf(int(s))
	case 0:
		return s * math.Ldexp(m, -24)
	}
	return s * math.Ldexp(1+m/1024, e-15)
}

func TestFP16AllHalves(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := FP16ToFP32(h)
		isNaN := h&0x7c00 == 0x7c00 && h&0x3ff != 0
		if isNaN {
			if !math.IsNaN(float64(f)) {
				t.Fatalf("FP16ToFP32(%#04x) = %g, want NaN", h, f)
			}
			if back := FP32ToFP16(f); back != h&0x8000|0x7e00 {
				t.Fatalf("FP32ToFP16(NaN from %#04x) = %#04x", h, back)
			}
			continue
		}
		if want := halfValue(h); float64(f) != want || math.Signbit(float64(f)) != (h&0x8000 != 0) {
			t.Fatalf("FP16ToFP32(%#04x) = %g, want %g", h, f, want)
		}
		if back := FP32ToFP16(f); back != h {
			t.Fatalf("round trip %#04x -> %g -> %#04x", h, f, back)
		}
	}
}

func TestFP16Boundaries(t *testing.T) {
	// Every rounding boundary: for each pair of neighbouring finite halves, the exact
	// midpoint (ties to even) and the float32 values just beside it.
	for i := 0; i < 0x7c00; i++ {
		lo, hi := halfValue(uint16(i)), halfValue(uint16(i+1))
		mid := float32((lo + hi) / 2) // exact: float32 has 13 more mantissa bits
		for _, f := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1e9)} {
			for _, s := range []float32{1, -1} {
				if got, want := FP32ToFP16(s*f), refFP16(s*f); got != want {
					t.Fatalf("FP32ToFP16(%g) = %#04x, want %#04x", s*f, got, want)
				}
			}
		}
	}
}

func TestFP16Cases(t *testing.T) {
	tests := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{1 + 1.0/2048, 0x3c00},                    // tie between 1 and 1+2^-10: to even
		{1 + 3.0/2048, 0x3c02},                    // tie between 1+2^-10 and 1+2^-9: to even
		{math.Nextafter32(1+1.0/2048, 2), 0x3c01}, // just above the tie
		{65504, 0x7bff},                           // largest half
		{65519.996, 0x7bff},                       // just below the overflow threshold
		{65520, 0x7c00},                           // tie with 65536 rounds to even: infinity
		{1e6, 0x7c00},
		{-1e30, 0xfc00},
		{float32(math.Inf(1)), 0x7c00},
		{float32(math.Inf(-1)), 0xfc00},
		{float32(math.NaN()), 0x7e00},
		{math.Float32frombits(0xffc00001), 0xfe00}, // negative NaN keeps its sign
		{0x1p-14, 0x0400},                          // smallest normal
		{0x1p-24, 0x0001},                          // smallest subnormal
		{0x1p-25, 0x0000},                          // tie between 0 and 2^-24: to even (0)
		{0x1.000002p-25, 0x0001},                   // just above that tie
		{0x3p-25, 0x0002},                          // tie between 1 and 2 units: to even (2)
		{0x1.ff8p-15, 0x03ff},                      // largest subnormal
		{0x1.ffcp-15, 0x0400},                      // it plus half a unit: tie, to even (up to the smallest normal)
		{0x1p-149, 0x0000},                         // float32 subnormal
		{-0x1p-26, 0x8000},
		{0.1, 0x2e66},
		{0.2998, 0x34cc},
	}
	for _, tt := range tests {
		if got := FP32ToFP16(tt.in); got != tt.want {
			t.Errorf("FP32ToFP16(%g) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
}

func TestFP16Random(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1_000_000; i++ {
		var f float32
		switch i % 3 {
		case 0: // any bit pattern
			f = math.Float32frombits(r.Uint32())
		case 1: // the half range and around it
			f = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(40)-26))
		default: // near the subnormal range
			f = float32((r.Float64()*2 - 1) * 0x1p-13)
		}
		if got, want := FP32ToFP16(f), refFP16(f); got != want {
			t.Fatalf("FP32ToFP16(%g = %#08x) = %#04x, want %#04x", f, math.Float32bits(f), got, want)
		}
	}
}

func TestBF16(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := BF16ToFP32(h)
		want := h
		if math.IsNaN(float64(f)) {
			want |= 0x40
		}
		if back := FP32ToBF16(f); back != want {
			t.Fatalf("round trip %#04x -> %g -> %#04x", h, f, back)
		}
	}
	tests := []struct {
		in   uint32 // float32 bits
		want uint16
	}{
		{0x3f800000, 0x3f80},
		{0x3f808000, 0x3f80}, // tie: to even
		{0x3f818000, 0x3f82}, // tie: to even (up)
		{0x3f808001, 0x3f81},
		{0x7f7fffff, 0x7f80}, // max float rounds to infinity
		{0x7f800000, 0x7f80},
		{0xff800000, 0xff80},
		{0x7f800001, 0x7fc0}, // signalling NaN is made quiet
		{0xffc12345, 0xffc1},
		{0x00000001, 0x0000}, // subnormal rounds to zero
		{0x00008000, 0x0000}, // tie to even
		{0x00018000, 0x0002},
	}
	for _, tt := range tests {
		if got := FP32ToBF16(math.Float32frombits(tt.in)); got != tt.want {
			t.Errorf("FP32ToBF16(%#08x) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1_000_000; i++ {
		f := math.Float32frombits(r.Uint32())
		if got, want := FP32ToBF16(f), refBF16(f); got != want {
			t.Fatalf("FP32ToBF16(%#08x) = %#04x, want %#04x", math.Float32bits(f), got, want)
		}
	}
}
