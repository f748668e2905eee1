package backendtest

import (
	"fmt"
	"math"

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
}
