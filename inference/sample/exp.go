package sample

import "math"

// expNeg is e^x for x <= 0 (x > 0 counts as 0; x below -708, where e^x would be
// subnormal, and NaN give 0), to within a few units in the last place. Unlike math.Exp,
// whose code differs between architectures, it is defined by its operations alone:
// each is one IEEE double operation rounded to nearest (the multiply-adds fused, by
// math.FMA), in this order. The CUDA sampler (kernels/cuda/sample.cuh, exp_neg) does the
// same operations on the same constants, so a token drawn on the device is the one the
// host would draw from the same candidates.
func expNeg(x float64) float64 {
	if !(x >= -708) {
		return 0
	}
	x = min(x, 0)
	// x = k ln2 + r with |r| <= ln2/2; ln2Hi's low bits are zero, so k ln2Hi is exact.
	k := math.Floor(math.FMA(x, log2e, 0.5))
	r := math.FMA(-k, ln2Hi, x)
	r = math.FMA(-k, ln2Lo, r)
	// e^r by its Taylor series to r^13 (the next term is under 4e-18 at |r| = ln2/2),
	// by Horner's rule from 1/13! down (written out: ~20% faster than a loop here).
	c := &expTaylor
	p := math.FMA(c[13], r, c[12])
	p = math.FMA(p, r, c[11])
	p = math.FMA(p, r, c[10])
	p = math.FMA(p, r, c[9])
	p = math.FMA(p, r, c[8])
	p = math.FMA(p, r, c[7])
	p = math.FMA(p, r, c[6])
	p = math.FMA(p, r, c[5])
	p = math.FMA(p, r, c[4])
	p = math.FMA(p, r, c[3])
	p = math.FMA(p, r, c[2])
	p = math.FMA(p, r, c[1])
	p = math.FMA(p, r, c[0])
	return p * math.Float64frombits(uint64(1023+int64(k))<<52) // 2^k, k >= -1022
}

// The constants of expNeg, in hexadecimal as kernels/cuda/sample.cuh spells them.
const (
	log2e = 0x1.71547652b82fep+00 // log2(e) rounded
	ln2Hi = 0x1.62e42feep-01      // ln 2's first 32 bits
	ln2Lo = 0x1.a39ef35793c76p-33 // ln 2 - ln2Hi, rounded
)

// expTaylor[i] is 1/i! rounded to the nearest double.
var expTaylor = [14]float64{
	0x1p+00, 0x1p+00, 0x1p-01, 0x1.5555555555555p-03, 0x1.5555555555555p-05,
	0x1.1111111111111p-07, 0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
	0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22,
	0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
}
