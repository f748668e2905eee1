// elem_x512.h: the 16-lane exp shared by the AVX-512 row ops and attention kernels.
// Include after the file's target pragma and lg_x86.h.
#ifndef EMBER_ELEM_X512_H
#define EMBER_ELEM_X512_H

// ea_exp's scheme (elem_x86.h) on 16 lanes; vscalefps applies 2^n with the right overflow
// and subnormal results in one step, which are ea_exp's two steps' results (2^(n/2)
// twice: the first product is exact, the second rounds once, as vscalefps does).
LGA __m512 e5_exp(__m512 x) {
	x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(89.0f), x));
	const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
	                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
	__m512 p = _mm512_set1_ps(1.9875691500e-4f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), r);
	p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
	return _mm512_scalef_ps(p, n);
}

#endif
