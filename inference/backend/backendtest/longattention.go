package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// RunAttention runs the suite's attention tests alone: the contiguous and paged shapes
// of Run, and long contexts (testLongAttention), for a backend made to take an attention
// path that Run's defaults do not (a GPU backend's split or per-warp kernels).
func RunAttention(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	for _, c := range []struct {
		name string
		f    func(p *pair)
	}{{"Attention", testAttention}, {"PagedAttention", testPagedAttention}, {"LongAttention", testLongAttention}} {
		t.Run(c.name, func(t *testing.T) { withPair(t, newBackend, rand.NewPCG(1, uint64(len(c.name))), c.f) })
	}
}

// longAttentionCases: few query rows over long contexts, as decode issues them (a GPU
// spreads each row's positions over several blocks here). Each query row reads its own
// sequence of a paged cache (block size 16, tables of longCols blocks, the blocks
// shuffled, sequences sharing their first blocks), or with contiguous the one sequence
// of a cache of longRows rows.
var longAttentionCases = []struct {
	nh, nkv, hd, vhd int
	shared           bool    // v is k, as an MLA latent cache
	contiguous       bool    // no block table
	pos              []int32 // a query row each
	seq              []int32 // each row's sequence (paged)
}{
	{32, 8, 128, 128, false, false, []int32{2999, 1000}, []int32{0, 1}},        // Llama-3.1-8B, two sequences
	{32, 8, 128, 128, false, false, []int32{1536}, []int32{1}},                 // a partial last chunk
	{4, 1, 576, 512, false, false, []int32{2100, 700}, []int32{1, 0}},          // wide K != V, one KV head
	{1, 1, 576, 576, true, false, []int32{2500, 2500, 2500}, []int32{0, 0, 0}}, // MLA decode: a row per head
	{8, 1, 128, 128, false, false, []int32{longCols*16 - 1}, []int32{2}},       // G = 8, the table's last position
	{16, 4, 64, 64, false, true, []int32{longRows - 1, 777}, nil},
}

const longRows, longCols = 4096, 200

func testLongAttention(p *pair) {
	const bs = 16
	for _, c := range longAttentionCases {
		kw, vw := c.nkv*c.hd, c.nkv*c.vhd
		kr, kb := p.randomF16(longRows, kw)
		vr, vb := kr, kb
		if !c.shared {
			vr, vb = p.randomF16(longRows, vw)
		}
		n := len(c.pos)
		pr, pb := p.ints(c.pos)
		// Queries twice the unit scale: sharper softmaxes than unit scores give.
		qr, qb := p.input(p.randn(n*c.nh*c.hd, 2), n, c.nh*c.hd)
		a := backend.Attention{NHead: c.nh, NKVHead: c.nkv, HeadDim: c.hd, VHeadDim: c.vhd,
			Scale: 1 / float32(math.Sqrt(float64(c.hd)))}
		ar, ab := a, a
		if !c.contiguous {
			tables := longTables(p.rng, 3, longCols, longRows/bs)
			tr, tb := p.newT(p.ref, quant.I32, 3, longCols), p.newT(p.be, quant.I32, 3, longCols)
			p.ref.WriteI32(tr, tables)
			p.be.WriteI32(tb, tables)
			sr, sb := p.ints(c.seq)
			ar.Table, ar.Seq, ar.BlockSize = tr, sr, bs
			ab.Table, ab.Seq, ab.BlockSize = tb, sb, bs
		}
		o := p.output(n, c.nh*c.vhd)
		p.ref.Attention(o.refT, qr, kr, vr, pr, ar)
		p.be.Attention(o.beT, qb, kb, vb, pb, ab)
		p.check(fmt.Sprintf("long Attention %d/%d heads, dims %d/%d, shared %v, contiguous %v, positions %v",
			c.nh, c.nkv, c.hd, c.vhd, c.shared, c.contiguous, c.pos), o, 2e-3)
		// Again with the host's bound on the lengths (Attention.MaxLen).
		for _, t := range c.pos {
			ab.MaxLen = max(ab.MaxLen, int(t)+1)
		}
		o = p.output(n, c.nh*c.vhd)
		p.ref.Attention(o.refT, qr, kr, vr, pr, ar)
		p.be.Attention(o.beT, qb, kb, vb, pb, ab)
		p.check(fmt.Sprintf("long Attention with MaxLen %d, %d/%d heads, dims %d/%d, positions %v",
			ab.MaxLen, c.nh, c.nkv, c.hd, c.vhd, c.pos), o, 2e-3)
	}
}

// longTables is seqs block tables of cols distinct blocks each out of nblocks,
// flattened: sequence s > 0 shares its first 8*s blocks with sequence 0 (a common
// prefix), the rest of every table shuffled.
func longTables(rng *rand.Rand, seqs, cols, nblocks int) []int32 {
	flat := make([]int32, 0, seqs*cols)
	for s := 0; s < seqs; s++ {
		prefix := flat[:min(8*s, len(flat))]
		row := append([]int32(nil), prefix...)
		for _, b := range rng.Perm(nblocks) {
			if len(row) == cols {
				break
			}
			if !slices.Contains(prefix, int32(b)) {
				row = append(row, int32(b))
			}
		}
		flat = append(flat, row...)
	}
	return flat
}

// randomF16 makes an F16 tensor of rows x cols normal values on both backends (a KV
// cache), written through SetRows as the models write their caches.
func (p *pair) randomF16(rows, cols int) (backend.Tensor, backend.Tensor) {
	ids := make([]int32, rows)
	for i := range ids {
		ids[i] = int32(i)
	}
	ir, ib := p.ints(ids)
	r, b := p.newT(p.ref, quant.F16, rows, cols), p.newT(p.be, quant.F16, rows, cols)
	sr, sb := p.input(p.randn(rows*cols, 1), rows, cols)
	p.ref.SetRows(r, sr, ir)
	p.be.SetRows(b, sb, ib)
	return r, b
}
