package cpu_test

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"

	"ember/kernels/cpu"
)

// TestGemmKQRowsBits holds the batch paths that put a weight row in each vector lane
// (kq_rows8.h on AVX2, kq_vnni16.h on AVX-512 VNNI) to the bits of the AVX-512 4x4 tiles
// (kq_avx512_body.h), which compute the same integers and the same float steps: every
// K-quant type, odd sizes, row sub-ranges and padded strides. (TestGemmKQ holds them all
// to package quant within its tolerance.) It needs an AVX-512 CPU for the tiles.
func TestGemmKQRowsBits(t *testing.T) {
	if !slices.Contains(cpu.Supported(), cpu.AVX512) {
		t.Skip("no AVX-512 on this CPU: no tiles to compare with")
	}
	tiles := cpu.New(cpu.AVX512)
	rng := rand.New(rand.NewSource(16))
	for _, qt := range kqTypes {
		for _, k := range []int{256, 2816, 256 * 19} {
			c := newKQCase(t, rng, qt, k, 41, 131)
			var forms []cpu.Kernels // the rows: AVX2's (with and without AVX-VNNI) and AVX-512 VNNI's
			for _, isa := range []cpu.ISA{cpu.AVX2, cpu.AVX512VNNI} {
				if slices.Contains(cpu.Supported(), isa) {
					forms = append(forms, cpu.New(isa))
					if cpu.New(isa).VNNI256() {
						forms = append(forms, cpu.New(isa).WithoutVNNI256())
					}
				}
			}
			for _, rows := range forms {
				t.Run(fmt.Sprintf("%v/k%d/%v", qt, k, rows.Name()), func(t *testing.T) {
					for _, nx := range []int{9, 13, 64, 65, 131} {
						for _, rr := range [][2]int{{0, 1}, {0, 7}, {0, 8}, {0, 15}, {0, 16}, {0, 17}, {0, 41}, {3, 38}, {17, 33}} {
							wpad, xpad, lddpad := rng.Intn(3)*7, rng.Intn(3)*5, rng.Intn(3)
							got := c.gemmBits(t, rows, nx, rr[0], rr[1], wpad, xpad, lddpad)
							want := c.gemmBits(t, tiles, nx, rr[0], rr[1], wpad, xpad, lddpad)
							for i := range want {
								if got[i] != want[i] {
									t.Fatalf("nx=%d rows [%d,%d): dst[%d] = %g (%#x), the tiles' %g (%#x)", nx, rr[0], rr[1], i,
										math.Float32frombits(got[i]), got[i], math.Float32frombits(want[i]), want[i])
								}
							}
						}
					}
				})
			}
		}
	}
}

// gemmBits is Gemm's dst (its bits) for the first nx activation rows and weight rows
// [r0, r1), with padded strides; dst starts as NaNs, so rows not written show.
func (c *kqCase) gemmBits(t *testing.T, k cpu.Kernels, nx, r0, r1, wpad, xpad, lddpad int) []uint32 {
	t.Helper()
	wrb, xrb := c.wbytes+wpad, len(c.x[0])+xpad
	w := make([]byte, r1*wrb)
	for r := 0; r < r1; r++ {
		copy(w[r*wrb:], c.w[r])
	}
	xq := make([]byte, nx*xrb)
	for i := 0; i < nx; i++ {
		copy(xq[i*xrb:], c.x[i])
	}
	ldd := r1 + lddpad
	dst := make([]float32, nx*ldd)
	for i := range dst {
		dst[i] = math.Float32frombits(kqGuard)
	}
	if !k.Gemm(int(c.t), w, wrb, xq, xrb, nx, c.k, r0, r1, dst, ldd) {
		t.Fatalf("%v: Gemm did not handle the type", c.t)
	}
	out := make([]uint32, len(dst))
	for i, v := range dst {
		out[i] = math.Float32bits(v)
	}
	return out
}
