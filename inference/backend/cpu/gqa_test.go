package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
	kern "ember/kernels/cpu"
)

// TestAttentionGroupedPaths requires Attention to give the same bits with its work in
// (query row, head) items (single-head kernels), in (query row, KV head) items (grouped
// kernels) and as it picks by itself, on every instruction-set path here: paged F16 and
// Q8_0 caches, odd head dims and row counts, decode rows among prefill runs, groups of
// 1 to 9 heads (9 is over kern.GQAMax: both paths run per head).
func TestAttentionGroupedPaths(t *testing.T) {
	cases := []struct {
		typ              quant.Type
		nh, nkv, hd, vhd int
	}{
		{quant.F16, 12, 4, 37, 21},
		{quant.F16, 10, 2, 24, 40},
		{quant.F16, 8, 1, 64, 64},
		{quant.F16, 14, 2, 128, 128},
		{quant.F16, 18, 2, 16, 8},
		{quant.F16, 3, 3, 19, 19},
		{quant.Q8_0, 12, 4, 64, 96},
		{quant.Q8_0, 14, 2, 32, 32},
		{quant.Q8_0, 8, 1, 128, 128},
		{quant.Q8_0, 6, 2, 96, 64},
	}
	// runs of query rows: sequence, first and last position
	runs := [][3]int32{{0, 300, 300}, {1, 0, 20}, {2, 100, 106}, {0, 301, 301}}
	const bs, nseq, cacheRows = 16, 3, 16 * 48
	for _, isa := range kern.Supported() {
		for ci, c := range cases {
			name := fmt.Sprintf("%v/%v nh=%d nkv=%d hd=%d vhd=%d", isa, c.typ, c.nh, c.nkv, c.hd, c.vhd)
			var want []float32
			for _, mode := range []attnMode{attnPerHead, attnGrouped, attnAuto} {
				got := gqaRun(t, isa, mode, c.typ, c.nh, c.nkv, c.hd, c.vhd, runs, bs, nseq, cacheRows, rand.New(rand.NewPCG(uint64(ci), 78)))
				if want == nil {
					want = got
					continue
				}
				for j := range want {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s mode %d: out[%d] = %g, per head %g", name, mode, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// TestAttnGroups checks when Attention picks the grouped kernels by itself: F16 and Q8_0
// caches, 2 to GQAMax heads per KV head, and at least two (query row, KV head) items per thread.
func TestAttnGroups(t *testing.T) {
	b := &Backend{threads: 4}
	for _, c := range []struct {
		typ           quant.Type
		rows, nh, nkv int
		want          bool
	}{
		{quant.F16, 1, 32, 8, true}, {quant.F16, 1, 32, 4, false}, {quant.F16, 2, 32, 4, true},
		{quant.F16, 1, 8, 8, false}, {quant.F16, 100, 8, 8, false}, {quant.F16, 1, 64, 8, true},
		{quant.F16, 100, 72, 8, false}, {quant.F16, 8, 8, 1, true}, {quant.F16, 7, 8, 1, false},
		{quant.Q8_0, 1, 32, 8, true}, {quant.Q8_0, 100, 32, 8, true}, {quant.Q8_0, 1, 32, 4, false}, {quant.Q8_0, 1, 8, 8, false},
	} {
		p := backend.Attention{NHead: c.nh, NKVHead: c.nkv}
		if got := b.attnGroups(c.typ, c.rows, p); got != c.want {
			t.Errorf("%v: %d rows, %d heads, %d KV heads, 4 threads: grouped %v", c.typ, c.rows, c.nh, c.nkv, got)
		}
	}
}

// gqaRun runs one paged Attention on a fresh 3-thread backend of isa with its work split
// as mode says, over caches and queries drawn from rng, and returns its output.
func gqaRun(t *testing.T, isa kern.ISA, mode attnMode, typ quant.Type, nh, nkv, hd, vhd int, runs [][3]int32,
	bs, nseq, cacheRows int, rng *rand.Rand) []float32 {
	t.Helper()
	b := modeBackend(t, isa, mode)
	a := newGQAAttn(t, b, 1, typ, nh, nkv, hd, vhd, runs, bs, nseq, cacheRows, rng)
	a.run(0)
	g := nh / nkv
	if want := g >= 2 && g <= kern.GQAMax && (mode == attnGrouped || mode == attnAuto); b.t.gqa != want {
		t.Fatalf("%v mode %d, %d heads per KV head: grouped %v", typ, mode, g, b.t.gqa)
	}
	out := make([]float32, len(a.pos)*nh*vhd)
	if err := b.ReadF32(context.Background(), a.dst, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// gqaAttn is a paged Attention ready to run on b over one of layers pairs of K and V
// caches.
type gqaAttn struct {
	b      *Backend
	k, v   []backend.Tensor
	q, dst backend.Tensor
	posT   backend.Tensor
	pos    []int32
	p      backend.Attention
}

func (a *gqaAttn) run(layer int) { a.b.Attention(a.dst, a.q, a.k[layer], a.v[layer], a.posT, a.p) }

// newGQAAttn makes layers random K and V caches of cacheRows rows of typ (written
// through SetRows: F16 or Q8_0 rounding), block tables of block size bs giving each of
// nseq sequences a random choice of the cache's blocks, and random query rows for the
// runs of rows (sequence, first and last position).
func newGQAAttn(tb testing.TB, b *Backend, layers int, typ quant.Type, nh, nkv, hd, vhd int, runs [][3]int32,
	bs, nseq, cacheRows int, rng *rand.Rand) *gqaAttn {
	mk := func(typ quant.Type, rows, cols int) backend.Tensor {
		x, err := b.New(typ, rows, cols)
		if err != nil {
			tb.Fatal(err)
		}
		return x
	}
	randn := func(n int, sd float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * sd)
		}
		return x
	}
	ints := func(v []int32) backend.Tensor {
		x := mk(quant.I32, 1, len(v))
		b.WriteI32(x, v)
		return x
	}
	all := make([]int32, cacheRows)
	for i := range all {
		all[i] = int32(i)
	}
	allT := ints(all)
	a := &gqaAttn{b: b}
	for range layers {
		for _, cols := range []int{nkv * hd, nkv * vhd} {
			c, src := mk(typ, cacheRows, cols), mk(quant.F32, cacheRows, cols)
			b.WriteF32(src, randn(cacheRows*cols, 1))
			b.SetRows(c, src, allT)
			b.Free(src)
			if cols == nkv*hd && len(a.k) == len(a.v) {
				a.k = append(a.k, c)
			} else {
				a.v = append(a.v, c)
			}
		}
	}
	nblocks := cacheRows / bs
	tables := make([]int32, nseq*nblocks)
	for s := 0; s < nseq; s++ {
		for j, blk := range rng.Perm(nblocks) {
			tables[s*nblocks+j] = int32(blk)
		}
	}
	table := mk(quant.I32, nseq, nblocks)
	b.WriteI32(table, tables)
	var seq []int32
	for _, r := range runs {
		for p := r[1]; p <= r[2]; p++ {
			a.pos, seq = append(a.pos, p), append(seq, r[0])
		}
	}
	n := len(a.pos)
	a.q = mk(quant.F32, n, nh*hd)
	b.WriteF32(a.q, randn(n*nh*hd, 1.5))
	a.dst, a.posT = mk(quant.F32, n, nh*vhd), ints(a.pos)
	a.p = backend.Attention{NHead: nh, NKVHead: nkv, HeadDim: hd, VHeadDim: vhd,
		Scale: 1 / float32(math.Sqrt(float64(hd))), Table: table, Seq: ints(seq), BlockSize: bs}
	return a
}

// BenchmarkAttention: Llama-3.2-1B's attention (32 heads, 8 KV heads of 64) over a
// paged cache on 2 threads, per head (single-head kernels) and grouped (a grouped kernel
// per KV head): one decode row at nkv positions, or a prefill chunk of 128 rows ending
// there. Each iteration takes the next of 16 layers' caches, as a step does.
func BenchmarkAttention(bm *testing.B) {
	const nh, nkv, hd, layers, bs = 32, 8, 64, 16, 16
	for _, typ := range []quant.Type{quant.F16, quant.Q8_0} {
		for _, c := range []struct {
			name    string
			ctx, nq int
		}{{"decode", 1500, 1}, {"decode", 3000, 1}, {"prefill", 1500, 128}} {
			b, err := New(Options{Threads: 2, MapWeights: true})
			if err != nil {
				bm.Fatal(err)
			}
			rows := (c.ctx + bs - 1) / bs * bs
			run := [][3]int32{{0, int32(c.ctx - c.nq), int32(c.ctx - 1)}}
			a := newGQAAttn(bm, b, layers, typ, nh, nkv, hd, hd, run, bs, 1, rows, rand.New(rand.NewPCG(1, 2)))
			for _, mode := range []attnMode{attnPerHead, attnGrouped} {
				name := map[attnMode]string{attnPerHead: "perhead", attnGrouped: "grouped"}[mode]
				bm.Run(fmt.Sprintf("%v/%s/nkv=%d/%s", typ, c.name, c.ctx, name), func(bm *testing.B) {
					b.gqaMode = mode
					for i := 0; bm.Loop(); i++ {
						a.run(i % layers)
					}
				})
			}
			b.Close()
		}
	}
}

// modeBackend is a fresh 3-thread backend of isa whose Attention splits its work as mode
// says, closed when the test ends.
func modeBackend(t *testing.T, isa kern.ISA, mode attnMode) *Backend {
	t.Helper()
	b, err := New(Options{Threads: 3, ISA: isa.String(), MapWeights: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	b.gqaMode = mode
	return b
}
