package cuda_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/model/goldentest"
	"ember/inference/quant"
)

func TestMMFEnv(t *testing.T) {
	checkRowsEnv(t, cuda.MMFEnv, cuda.MMFFromEnv, []rowsEnvCase{{"", true, 16, false}, {"auto", true, 16, false},
		{"off", true, 16, false}, {"0", true, 16, false}, {"24", false, 24, false}, {"-1", false, 0, true},
		{"some", false, 0, true}})
}

// TestMFSplits: the K splits of mmf's products on a 132-SM H200 (tiles of 256 weight
// rows x 64 activation rows, steps of 256 elements).
func TestMFSplits(t *testing.T) {
	for _, c := range []struct {
		name                string
		mt, nt, steps, want int
	}{
		{"8B gate 14336x4096, 64 rows", 56, 1, 16, 2},
		{"8B down 4096x14336, 64 rows", 16, 1, 56, 8},
		{"8B Q 4096x4096, 64 rows", 16, 1, 16, 8},
		{"8B K 1024x4096, 64 rows", 4, 1, 16, 8},
		{"8B gate, 128 rows", 56, 2, 16, 1},
		{"output head 128256x4096", 502, 1, 16, 1},
		{"one step", 1, 1, 1, 1},
		{"three steps", 1, 1, 3, 1},
		{"odd steps", 16, 1, 9, 3}, // 3 steps a split
	} {
		got := cuda.MFSplits(c.mt, c.nt, c.steps, 132)
		if got != c.want {
			t.Errorf("%s: %d splits, want %d", c.name, got, c.want)
		}
		// No split is empty: the steps are divided ceil(steps/splits) a split.
		if per := (c.steps + got - 1) / got; (got-1)*per >= c.steps {
			t.Errorf("%s: %d splits of %d steps leave the last one empty", c.name, got, per)
		}
	}
}

// TestMMF (GPU): products over Q4_K and Q6_K weights on mmf (taken from one row here,
// over the weight's packed copy, which Free returns) against the reference, at shapes with ragged weight and activation tiles, one step a
// row, and K splits (with mmq_reduce); and MatMulShared's projections of mixed types
// sharing one f16 activation rounding. The weights and activations are f16 on this path
// (as on cuBLASLt's), so the bound is an NMSE, as TestF16Copies's, with each value
// within 1e-2 of the products' scale (0.05 sqrt(k)).
func TestMMF(t *testing.T) {
	be := newWith(t, cuda.Options{NoCublas: true})
	defer be.Close()
	cuda.SetMMF(be, true, 1)
	rb := ref.New()
	rng := rand.New(rand.NewPCG(41, 42))
	check := mmfCheck(t, be, rb)
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K} {
		for _, s := range []struct{ m, k, n int }{
			{300, 1024, 100}, // 2 x 2 tiles, 2 K splits
			{257, 2304, 65},  // ragged rows and activation rows
			{64, 4096, 17},   // part of a tile, 8 K splits
			{1000, 256, 48},  // one step a row
			{513, 768, 1},    // one row
			{300, 512, 16},   // the 2-tile kernel
			{300, 512, 30},   // the 4-tile kernel
			{130, 512, 130},  // 1 x 3 tiles
			{4096, 4096, 64}, // Llama's Q/O shape
		} {
			checkPacked(t, be, rb, rng, check, mfPath, typ, s.m, s.k, s.n, s.m*s.k/2)
		}
	}
	// MatMulShared: Q4_K, Q6_K and Q4_K projections of 64 rows.
	checkShared(t, be, rng, cuda.MMFProducts, 3)
}

// packedPath is a product kernel over weights' packed copies (mmf, mmg) as the tests see
// it: its name, its count of products run and its tally of packed copies.
type packedPath struct {
	name     string
	products func(*cuda.Backend) int
	packs    func(*cuda.Backend) (count, bytes int)
}

var mfPath = packedPath{"mmf", cuda.MMFProducts, cuda.MMFPacks}

// checkPacked runs the product of n activation rows over a new m x k weight of typ on
// path p against the reference (check), and checks that it made one packed copy of at
// least minBytes, which Free returns.
func checkPacked(t *testing.T, be *cuda.Backend, rb backend.Backend, rng *rand.Rand,
	check func(name string, db, dr backend.Tensor, n, m, k int), p packedPath, typ quant.Type, m, k, n, minBytes int) {
	t.Helper()
	wb, wr := weightPair(t, be, rb, rng, typ, m, k)
	_, xb, xr := ltInput(t, be, rb, rng, n, k)
	db, dr := newF32(t, be, n, m), newF32(t, rb, n, m)
	before := p.products(be)
	be.MatMul(db, wb, xb)
	rb.MatMul(dr, wr, xr)
	if p.products(be)-before != 1 {
		t.Fatalf("%v %dx%d, %d rows: not on %s", typ, m, k, n, p.name)
	}
	check(typ.String(), db, dr, n, m, k)
	if c, bytes := p.packs(be); c != 1 || bytes < minBytes {
		t.Fatalf("%v %dx%d: %d packed copies of %d bytes, want one", typ, m, k, c, bytes)
	}
	for _, x := range []backend.Tensor{wb, xb, db} {
		be.Free(x)
	}
	if c, bytes := p.packs(be); c != 0 || bytes != 0 {
		t.Fatalf("%v %dx%d: after Free %d packed copies of %d bytes", typ, m, k, c, bytes)
	}
}

// checkShared runs MatMulShared over Q4_K, Q6_K and Q4_K projections (256, 456 and 656
// rows of 1024) of 64 activation rows on be and the reference, wants products of them
// counted by count, and each output as mmfCheck does.
func checkShared(t *testing.T, be *cuda.Backend, rng *rand.Rand, count func(*cuda.Backend) int, products int) {
	t.Helper()
	const k, n = 1024, 64
	rb := ref.New()
	check := mmfCheck(t, be, rb)
	_, xb, xr := ltInput(t, be, rb, rng, n, k)
	var projs []backend.Proj
	var outs [][2]backend.Tensor
	var ms []int
	for i, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q4_K} {
		m := 256 + 200*i
		wb, wr := weightPair(t, be, rb, rng, typ, m, k)
		db, dr := newF32(t, be, n, m), newF32(t, rb, n, m)
		rb.MatMul(dr, wr, xr)
		projs, outs, ms = append(projs, backend.Proj{Dst: db, W: wb}), append(outs, [2]backend.Tensor{db, dr}), append(ms, m)
	}
	before := count(be)
	backend.MatMulShared(be, xb, projs)
	if got := count(be) - before; got != products {
		t.Fatalf("MatMulShared: %d products counted, want %d", got, products)
	}
	for i, o := range outs {
		check("MatMulShared", o[0], o[1], n, ms[i], k)
	}
}

// mmfCheck compares a product on be (db) with the reference's (dr) of n rows of m over
// k-element dot products: NMSE under 1e-5 and each value within 1e-2 of the products'
// scale (0.05 sqrt(k)).
func mmfCheck(t *testing.T, be *cuda.Backend, rb backend.Backend) func(name string, db, dr backend.Tensor, n, m, k int) {
	return func(name string, db, dr backend.Tensor, n, m, k int) {
		t.Helper()
		got, want := backendtest.ReadF32(t, be, db), backendtest.ReadF32(t, rb, dr)
		if e := goldentest.NMSE(got, want); !(e < 1e-5) {
			t.Fatalf("%s: NMSE %.3g against the reference (want < 1e-5); %s", name, e, firstDiff(got, want, m))
		}
		scale := 0.05 * math.Sqrt(float64(k))
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); !(d <= 1e-2*scale) {
				t.Fatalf("%s: row %d col %d: got %g, want %g (scale %g)", name, i/m, i%m, got[i], want[i], scale)
			}
		}
	}
}

// TestMFKernel: one tile of at most 16 or 32 activation rows takes the kernels of 2 or 4
// n8 tiles; anything else the 8-tile one.
func TestMFKernel(t *testing.T) {
	for _, c := range []struct {
		n, nt int
		want  string
	}{{1, 1, "mmf2_"}, {16, 1, "mmf2_"}, {17, 1, "mmf4_"}, {32, 1, "mmf4_"}, {33, 1, "mmf_"}, {64, 1, "mmf_"},
		{65, 2, "mmf_"}, {130, 3, "mmf_"}} {
		if got := cuda.MFKernel(c.n, c.nt); got != c.want {
			t.Errorf("%d rows in %d tiles: %s, want %s", c.n, c.nt, got, c.want)
		}
	}
}

// TestMFRows: mmf takes batches from 16 rows up to the f16 copies' 48 where cuBLASLt and
// the copies are on, and up to 256 (mmq's or cuBLASLt's prompts) where they are not.
func TestMFRows(t *testing.T) {
	for _, c := range []struct {
		name                 string
		lt, copies           bool
		ltMin, f16Min, mfMin int
		wantLeast, wantMost  int
	}{
		{"defaults", true, true, 256, 48, 0, 16, 48},
		{"copies off", true, false, 256, 48, 0, 16, 256},
		{"no cuBLASLt", false, true, 256, 48, 0, 16, 256},
		{"cuBLASLt from 100 rows, no copies", true, false, 100, 48, 0, 16, 100},
		{"mmf from 24 rows", true, true, 256, 48, 24, 24, 48},
	} {
		least, most := cuda.MFRows(c.lt, c.copies, c.ltMin, c.f16Min, c.mfMin)
		if least != c.wantLeast || most != c.wantMost {
			t.Errorf("%s: rows [%d, %d), want [%d, %d)", c.name, least, most, c.wantLeast, c.wantMost)
		}
	}
}
