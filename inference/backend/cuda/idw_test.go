package cuda_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestIDWBits (GPU): per-head runs of one activation row through views of one weight
// (DeepSeek-V2's query heads: MatMulShared, two interleaved parts a head) give the same
// bits on mmv_idw (the first weight loads before the PDL wait) as on mmv_id
// ($EMBER_CUDA_NO_IDW), for row counts that are and are not multiples of a block's rows,
// several K, and the Q4_K, Q8_0 and Q5_0 kernels.
func TestIDWBits(t *testing.T) {
	newOrSkip(t).Close()
	const H = 5
	for _, c := range []struct {
		typ     quant.Type
		a, b, k int
	}{
		{quant.Q4_K, 128, 64, 2048}, {quant.Q4_K, 40, 24, 256}, {quant.Q4_K, 72, 8, 1280}, {quant.Q4_K, 33, 31, 512},
		{quant.Q4_K, 48, 16, 4096}, {quant.Q8_0, 40, 24, 512}, {quant.Q5_0, 24, 8, 1024},
	} {
		name := fmt.Sprintf("%v-%dx%d-k%d", c.typ, c.a, c.b, c.k)
		var got [][]uint32
		for _, sw := range []string{"", "1"} { // $EMBER_CUDA_NO_IDW ("" is unset)
			t.Setenv(cuda.NoIDWEnv, sw)
			e := &fuseEnv{t: t, be: newOrSkip(t), rng: rand.New(rand.NewPCG(3, uint64(c.k)))}
			w := e.weight(c.typ, H*(c.a+c.b), c.k)
			x := e.randn(1, c.k, 1)
			oa, ob := e.zeros(quant.F32, H, c.a), e.zeros(quant.F32, H, c.b)
			var projs []backend.Proj
			for h := 0; h < H; h++ {
				projs = append(projs, backend.Proj{Dst: e.be.View(oa, h, 1), W: e.be.View(w, h*(c.a+c.b), c.a)},
					backend.Proj{Dst: e.be.View(ob, h, 1), W: e.be.View(w, h*(c.a+c.b)+c.a, c.b)})
			}
			backend.MatMulShared(e.be, x, projs)
			got = append(got, append(e.bits(oa), e.bits(ob)...))
			if err := e.be.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for i := 1; i < len(got); i++ {
			if !slices.Equal(got[0], got[i]) {
				t.Errorf("%s: mmv_idw's outputs differ from mmv_id's", name)
			}
		}
	}
}
