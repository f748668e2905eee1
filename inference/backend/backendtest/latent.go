package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// RunLatentAttention runs DeepSeek's latent attention as the deepseek2 model issues it:
// one KV head of 576 dims (64 rope + 512 latent) whose rows are also the values, the
// query heads as head-major rows (row h*n+i is head h of token i) with
// Attention.HeadGroups set, through a paged cache with shuffled blocks. A backend may
// read each token's keys once for all its heads; the result must be the reference's.
func RunLatentAttention(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	withPair(t, newBackend, rand.NewPCG(5, 76), testLatentAttention)
}

// latentCases: tokens given as (sequence, position); several tokens of one sequence
// (a prompt's chunk) and decode tokens of many; 20 heads is a second, partial group of
// 16.
var latentCases = []struct {
	name  string
	heads int
	toks  [][2]int32
}{
	{"decode, 7 sequences", 16, [][2]int32{{0, 0}, {1, 5}, {2, 31}, {3, 32}, {4, 33}, {5, 300}, {6, 650}}},
	{"one token", 16, [][2]int32{{3, 100}}},
	{"20 heads", 20, [][2]int32{{1, 64}, {0, 7}, {2, 200}}},
	{"a prompt's chunk after a cached prefix", 16, chunk(2, 96, 133)},
}

func chunk(seq, from, to int32) [][2]int32 {
	var toks [][2]int32
	for p := from; p <= to; p++ {
		toks = append(toks, [2]int32{seq, p})
	}
	return toks
}

func testLatentAttention(p *pair) {
	const dim, bs, seqs, cols = 576, 16, 7, 48
	const rows = seqs * cols * bs / 2 // blocks shared between some sequences' tables
	kr, kb := p.randomF16(rows, dim)
	perm := p.rng.Perm(rows / bs)
	tables := make([]int32, seqs*cols)
	for i := range tables {
		tables[i] = int32(perm[i%len(perm)])
	}
	tr, tb := p.newT(p.ref, quant.I32, seqs, cols), p.newT(p.be, quant.I32, seqs, cols)
	p.ref.WriteI32(tr, tables)
	p.be.WriteI32(tb, tables)
	for _, c := range latentCases {
		n, H := len(c.toks), c.heads
		pos, seq := make([]int32, 0, n*H), make([]int32, 0, n*H)
		maxLen := 0
		for h := 0; h < H; h++ {
			for _, tk := range c.toks {
				seq, pos = append(seq, tk[0]), append(pos, tk[1])
				maxLen = max(maxLen, int(tk[1])+1)
			}
		}
		pr, pb := p.ints(pos)
		sr, sb := p.ints(seq)
		qr, qb := p.input(p.randn(n*H*dim, 0.2), n*H, dim)
		a := backend.Attention{NHead: 1, NKVHead: 1, HeadDim: dim, VHeadDim: dim, Scale: 1 / float32(math.Sqrt(192)),
			BlockSize: bs, MaxLen: maxLen, HeadGroups: H}
		ar, ab := a, a
		ar.Table, ar.Seq, ab.Table, ab.Seq = tr, sr, tb, sb
		o := p.output(n*H, dim)
		p.ref.Attention(o.refT, qr, kr, kr, pr, ar)
		p.be.Attention(o.beT, qb, kb, kb, pb, ab)
		p.check(fmt.Sprintf("latent Attention %s: %d heads, %d tokens", c.name, H, n), o, 2e-3)
	}
}
