package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// testMatMulTiles: products larger than one tile of a GPU's tensor-core kernel in both
// directions, with ragged edges, and K long enough that the kernel splits its steps over
// blocks (a deterministic partial-sum reduction); for the types those kernels take.
func testMatMulTiles(p *pair) {
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0} {
		for _, s := range []struct{ m, k, nx int }{
			{300, 1024, 100}, // 3 x 2 tiles, two K splits
			{130, 512, 130},  // 2 x 3 tiles, no split
			{257, 2304, 65},  // 3 x 2 tiles, three K splits of three steps
			{64, 4096, 16},   // one tile, eight splits; the smallest batch taken
		} {
			wr, wb := p.weight(typ, s.m, s.k, p.randn(s.m*s.k, 0.05))
			xr, xb := p.input(p.randn(s.nx*s.k, 1), s.nx, s.k)
			o := p.output(s.nx, s.m)
			p.ref.MatMul(o.refT, wr, xr)
			p.be.MatMul(o.beT, wb, xb)
			p.checkScaled(fmt.Sprintf("MatMul %v k=%d m=%d nx=%d", typ, s.k, s.m, s.nx), o, 2e-5, 0.05*math.Sqrt(float64(s.k)))
		}
	}
	testMatMulTilesLegacy(p)
}

// testMatMulTilesLegacy: the same for Q5_0 and Q4_0 weights (GGUF blocks of 22 and 18
// bytes, so rows of 128 elements are 8-byte aligned, not 16), at DeepSeek-V2-Lite's
// widths: attn_k_b's 128-wide head rows (576 of them, plus one) and the down experts'
// 1408 (5.5 steps of 256: the last one half zeros, in the last of three K splits); row
// views starting at rows whose offset is 8-byte but not 16-byte aligned, and a width
// the tensor-core kernels decline (160: rows of 110 or 90 bytes), which the mat-vec
// kernels compute.
func testMatMulTilesLegacy(p *pair) {
	for _, typ := range []quant.Type{quant.Q5_0, quant.Q4_0} {
		for _, s := range []struct{ m, k, nx, row0, rows int }{
			{577, 128, 300, 0, 0},  // 5 x 5 tiles, one half step
			{131, 1408, 17, 0, 0},  // 2 x 1 tiles, three K splits, the last ending in a half step
			{257, 4096, 64, 0, 0},  // 3 x 1 tiles, eight K splits
			{63, 1408, 16, 0, 0},   // part of one tile; the smallest batch taken
			{200, 384, 65, 0, 0},   // 2 x 2 tiles, two K splits of 1.5 steps
			{140, 128, 64, 3, 130}, // rows [3, 133) of 140: the view starts 3 rows in
			{40, 1408, 33, 1, 37},  // rows [1, 38): 968 (Q5_0) or 792 (Q4_0) bytes in
			{70, 160, 32, 0, 0},    // declined by the tensor-core kernels: mat-vec
		} {
			wr, wb := p.weight(typ, s.m, s.k, p.randn(s.m*s.k, 0.05))
			m := s.m
			if s.rows > 0 {
				wr, wb, m = p.ref.View(wr, s.row0, s.rows), p.be.View(wb, s.row0, s.rows), s.rows
			}
			xr, xb := p.input(p.randn(s.nx*s.k, 1), s.nx, s.k)
			o := p.output(s.nx, m)
			p.ref.MatMul(o.refT, wr, xr)
			p.be.MatMul(o.beT, wb, xb)
			p.checkScaled(fmt.Sprintf("MatMul %v k=%d m=%d (rows [%d,%d) of %d) nx=%d", typ, s.k, m, s.row0, s.row0+m, s.m, s.nx),
				o, 2e-5, 0.05*math.Sqrt(float64(s.k)))
		}
	}
}

// RunMatMulTiles runs the MatMulTiles case alone, for a backend set up to take its
// tensor-core kernels on every product (a GPU backend with other product paths off).
func RunMatMulTiles(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	withPair(t, newBackend, rand.NewPCG(1, uint64(len("MatMulTiles"))), testMatMulTiles)
}
