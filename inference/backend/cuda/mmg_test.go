package cuda_test

import (
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/quant"
)

func TestMMGEnv(t *testing.T) {
	checkRowsEnv(t, cuda.MMGEnv, cuda.MMGFromEnv, []rowsEnvCase{{"", false, 48, false}, {"auto", false, 48, false},
		{"off", true, 48, false}, {"0", true, 48, false}, {"33", false, 33, false}, {"-1", false, 0, true},
		{"some", false, 0, true}})
}

// TestMGSplits: the K splits of mmg's products on a 132-SM H200 (tiles of 128 weight
// rows, two blocks an SM, steps of 256 elements), none empty.
func TestMGSplits(t *testing.T) {
	for _, c := range []struct {
		name            string
		mt, steps, want int
	}{
		{"8B gate 14336x4096", 112, 16, 2},
		{"8B down 4096x14336", 32, 56, 8},
		{"8B Q 4096x4096", 32, 16, 8},
		{"8B K 1024x4096", 8, 16, 16},
		{"output head 128256x4096", 1002, 16, 1},
		{"one step", 1, 1, 1},
		{"odd steps", 32, 9, 5},  // 8 asked: 2 steps a split
		{"six asked", 40, 20, 5}, // 4 steps a split
	} {
		got := cuda.MGSplits(c.mt, c.steps, 132)
		if got != c.want {
			t.Errorf("%s: %d splits, want %d", c.name, got, c.want)
		}
		if per := (c.steps + got - 1) / got; (got-1)*per >= c.steps {
			t.Errorf("%s: %d splits of %d steps leave the last one empty", c.name, got, per)
		}
	}
}

// TestMMG (GPU, Hopper): products of 33-64 activation rows over Q4_K weights on mmg
// (over the weight's packed copy, which Free returns) against the reference, at shapes
// with ragged weight tiles, partial activation tiles, one step a row, and K splits (with
// mmq_reduce); and MatMulShared's two Q4_K projections beside a Q6_K one (which stays
// off mmg), and two Q4_K projections in one launch (a gate and up pair). The weights are
// q * f16(d*sc) - f16(dmin*m) in f16 (mmf's) and the activations f16 (as on cuBLASLt
// over the f16 copies), so the bound is TestMMF's.
func TestMMG(t *testing.T) {
	skipCompat(t)
	be := newWith(t, cuda.Options{NoCublas: true})
	defer be.Close()
	if !cuda.SetMMG(be, true, 33) {
		t.Skip("skipping: no mmg module on this GPU (it is sm_90a code)")
	}
	rb := ref.New()
	rng := rand.New(rand.NewPCG(43, 44))
	check := mmfCheck(t, be, rb)
	for _, s := range []struct{ m, k, n int }{
		{300, 1024, 64},  // 3 row tiles (one ragged), K splits
		{257, 2304, 40},  // ragged rows, a partial activation tile, 9 steps
		{1000, 256, 48},  // one step a row
		{128, 4096, 33},  // one tile, 16 splits of one step
		{4096, 4096, 64}, // Llama's Q/O shape
		{1536, 7168, 57}, // 28 steps in splits
	} {
		checkPacked(t, be, rb, rng, check, packedPath{"mmg", cuda.MMGProducts, cuda.MMGPacks}, quant.Q4_K, s.m, s.k, s.n, s.m*s.k*5/8) // 160 bytes a row a step
	}
	checkShared(t, be, rng, cuda.MMGProducts, 2) // the Q6_K projection stays off mmg
	// Two Q4_K projections whose 142 tiles fill the GPU without K splits: one launch.
	const k, n = 512, 64
	_, xb, xr := ltInput(t, be, rb, rng, n, k)
	var projs []backend.Proj
	var outs [][2]backend.Tensor
	ms := []int{9000, 9100}
	for _, m := range ms {
		wb, wr := weightPair(t, be, rb, rng, quant.Q4_K, m, k)
		db, dr := newF32(t, be, n, m), newF32(t, rb, n, m)
		rb.MatMul(dr, wr, xr)
		projs, outs = append(projs, backend.Proj{Dst: db, W: wb}), append(outs, [2]backend.Tensor{db, dr})
	}
	backend.MatMulShared(be, xb, projs) // makes the packed copies
	before, launches := cuda.MMGProducts(be), cuda.Launches(be)
	backend.MatMulShared(be, xb, projs)
	if got := cuda.MMGProducts(be) - before; got != 2 {
		t.Fatalf("pair: %d products on mmg, want 2", got)
	}
	if got := cuda.Launches(be) - launches; got > 4 { // rounding, f16 rows, layout, one product
		t.Errorf("pair: %d launches, want at most 4", got)
	}
	for i, o := range outs {
		check("pair", o[0], o[1], n, ms[i], k)
	}
}
