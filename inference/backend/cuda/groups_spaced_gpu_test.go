package cuda_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestGroupsSpacedBits (GPU): per-head products of one row into the latent columns of
// [rope | latent] rows (views made as deepseek2 makes them: Reshape, View, Reshape), one
// mmv_idw launch with the rows' spacing as its output stride, give the bits of each
// head's product launched alone, and leave the rope columns as they were; Q8_0 and Q4_K
// heads.
func TestGroupsSpacedBits(t *testing.T) {
	newOrSkip(t).Close()
	const H, rope, lat, k = 16, 64, 512, 256
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_K} {
		var got [2][]uint32
		for run := range 2 {
			be := newOrSkip(t)
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(5, uint64(typ)))}
			w := e.weight(typ, H*lat, k)
			x := e.randn(H, k, 1)
			qh := e.randn(H, rope+lat, 1) // the rope columns must keep these values
			rows := be.Reshape(qh, H*(rope+lat)/rope, rope)
			per := (rope + lat) / rope
			var groups []backend.Group
			for h := 0; h < H; h++ {
				d := be.Reshape(be.View(rows, h*per+1, per-1), 1, lat)
				groups = append(groups, backend.Group{Dst: d, W: be.View(w, h*lat, lat), Row0: h})
			}
			if run == 0 {
				backend.MatMulGroups(be, x, groups)
			} else {
				for _, g := range groups {
					be.MatMul(g.Dst, g.W, be.View(x, g.Row0, 1))
				}
			}
			got[run] = e.bits(qh)
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got[0], got[1]) {
			t.Errorf("%v: one launch's query rows differ from a launch a head's", typ)
		}
	}
}
