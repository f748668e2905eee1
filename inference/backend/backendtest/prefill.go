package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// RunPrefillAttention runs the prefill-shaped attention cases (testPrefillAttention),
// many query rows of few sequences, as a prompt's chunk issues them (a GPU takes them on
// tensor cores, in tiles of rows of one sequence).
func RunPrefillAttention(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	withPair(t, newBackend, rand.NewPCG(3, 14), testPrefillAttention)
}

// prefillRun is a run of consecutive query rows of one sequence at consecutive
// positions from..to.
type prefillRun struct{ seq, from, to int32 }

// prefillCases: runs of rows of a paged cache (block size 16, tables of prefillTables),
// or with contiguous one sequence of a cache of prefillCacheRows rows. Row counts are not
// multiples of a tile's, and runs start and end inside tiles.
var prefillCases = []struct {
	name             string
	nh, nkv, hd, vhd int
	contiguous       bool
	qscale           float64 // the queries' standard deviation
	runs             []prefillRun
}{
	{"Llama-3.1-8B prompt", 32, 8, 128, 128, false, 1, []prefillRun{{0, 0, 299}}},
	{"two prompts, shared prefix", 8, 2, 128, 128, false, 1, []prefillRun{{0, 0, 99}, {1, 50, 249}}},
	{"MHA hd 64", 4, 4, 64, 64, true, 2, []prefillRun{{0, 20, 150}}},
	{"G 8 hd 64, decode rows among the prompt's", 8, 1, 64, 64, false, 1,
		[]prefillRun{{2, 400, 400}, {1, 0, 36}, {0, 33, 33}, {1, 37, 76}, {3, 0, 0}, {2, 401, 401}}},
	{"G 3 hd 64, a chunk after a cached prefix", 6, 2, 64, 64, false, 2, []prefillRun{{1, 130, 199}}},
	{"G 2 hd 128, three prompts", 4, 2, 128, 128, false, 1, []prefillRun{{2, 0, 40}, {0, 0, 20}, {1, 100, 130}}},
	{"hd 80, not a tensor-core shape", 4, 2, 80, 80, false, 1, []prefillRun{{0, 0, 69}}},
}

const prefillCacheRows, prefillCols, prefillSeqs = 2048, 32, 4

func testPrefillAttention(p *pair) {
	const bs, prefixBlocks = 16, 3
	for _, c := range prefillCases {
		kw, vw := c.nkv*c.hd, c.nkv*c.vhd
		kr, kb := p.randomF16(prefillCacheRows, kw)
		vr, vb := p.randomF16(prefillCacheRows, vw)
		var pos, seq []int32
		for _, r := range c.runs {
			for t := r.from; t <= r.to; t++ {
				pos, seq = append(pos, t), append(seq, r.seq)
			}
		}
		n := len(pos)
		pr, pb := p.ints(pos)
		qr, qb := p.input(p.randn(n*c.nh*c.hd, c.qscale), n, c.nh*c.hd)
		a := backend.Attention{NHead: c.nh, NKVHead: c.nkv, HeadDim: c.hd, VHeadDim: c.vhd,
			Scale: 1 / float32(math.Sqrt(float64(c.hd)))}
		ar, ab := a, a
		if !c.contiguous {
			tables := prefillTables(p.rng, prefixBlocks, prefillCacheRows/bs)
			tr, tb := p.newT(p.ref, quant.I32, prefillSeqs, prefillCols), p.newT(p.be, quant.I32, prefillSeqs, prefillCols)
			p.ref.WriteI32(tr, tables)
			p.be.WriteI32(tb, tables)
			sr, sb := p.ints(seq)
			ar.Table, ar.Seq, ar.BlockSize = tr, sr, bs
			ab.Table, ab.Seq, ab.BlockSize = tb, sb, bs
		}
		for _, t := range pos { // the host's bound on the lengths, as the models give it
			ab.MaxLen = max(ab.MaxLen, int(t)+1)
		}
		o := p.output(n, c.nh*c.vhd)
		p.ref.Attention(o.refT, qr, kr, vr, pr, ar)
		p.be.Attention(o.beT, qb, kb, vb, pb, ab)
		p.check(fmt.Sprintf("prefill Attention %s: %d/%d heads, dims %d/%d, runs %v",
			c.name, c.nh, c.nkv, c.hd, c.vhd, c.runs), o, 2e-3)
	}
}

// prefillTables is prefillSeqs block tables of prefillCols blocks each out of nblocks,
// flattened: every sequence starts with the same prefix blocks (a common prefix), then
// blocks of its own, all shuffled.
func prefillTables(rng *rand.Rand, prefix, nblocks int) []int32 {
	perm := rng.Perm(nblocks)
	flat := make([]int32, 0, prefillSeqs*prefillCols)
	for s := 0; s < prefillSeqs; s++ {
		for j := 0; j < prefillCols; j++ {
			b := perm[j]
			if j >= prefix {
				b = perm[prefix+s*(prefillCols-prefix)+j-prefix]
			}
			flat = append(flat, int32(b))
		}
	}
	return flat
}
