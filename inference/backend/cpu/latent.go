package cpu

import (
	"slices"

	"ember/inference/backend"
	"ember/inference/quant"
	kern "ember/kernels/cpu"
)

// Latent attention (DeepSeek's MLA) over an f16 cache.
//
// The model hands it as head-major rows of one KV head (Attention.HeadGroups = H, row
// h*n+i holding head h of token i), each row 576 values over latent rows that are both K
// and V. Run row by row, every head of a token reads every latent row: 16 times a token
// and layer. Here each token's heads read each row once, and the work of latGroup tokens
// at a time is split among the workers in three phases, so that one decode token keeps
// every thread busy: the scores of pieces of positions (all heads), each head's
// probabilities, and the outputs of pieces of columns (all heads), with the kernels'
// phased attention (kernels/cpu attnsplit.go), which gives every head the bits of the
// row-by-row path.

// Work pieces: positions a scores item (a multiple of 4), columns a values item (a
// multiple of 8).
const latPositions, latColumns = 64, 32

// latGroup is the most tokens whose phases run together (their scores are held at
// once: tokens x heads x positions floats); more tokens go in groups of it.
const latGroup = 8

// latent is the state of the latent Attention being run, read by the workers.
type latent struct {
	h, n, hd, vhd int       // heads, tokens (query rows h*n+i), head dims
	i0            int       // the group's first token; per-token slices below are the group's
	q16, s        []float32 // per token: H*hd rounded query floats, H*nkv scores
	soff          []int     // token i's scores at s[soff[i]:]
	nkv           []int     // positions per token
	rows          [][]int32 // cache rows per token (nil: contiguous)
	pieces        [][3]int  // scores: (token, t0, t1); values: (token, c0, c1)
}

// latentTakes reports whether Attention takes the latent path: HeadGroups rows of one
// KV head over an f16 cache, heads the kernels take.
func (b *Backend) latentTakes(kt *tensor, rows int, p backend.Attention) bool {
	h := p.HeadGroups
	return b.gqaMode != attnPerHead && kt.typ == quant.F16 && h > 1 && h <= kern.AttnSplitMax && p.NHead == 1 &&
		p.NKVHead == 1 && rows%h == 0
}

// latentAttention runs Attention's latent path (latentTakes) for query rows qt into d;
// the caches are b.kv and paged rows, if any, are in b.seqRows (Attention's checks and
// pagedRows ran).
func (b *Backend) latentAttention(d, qt *tensor, ps []int32, p backend.Attention) {
	l := &b.lat
	l.h, l.n, l.hd, l.vhd = p.HeadGroups, qt.rows/p.HeadGroups, p.HeadDim, p.VHeadDim
	for i0 := 0; i0 < l.n; i0 += latGroup {
		b.latentGroup(d, qt, ps, p, i0, min(l.n, i0+latGroup))
	}
}

// latentGroup runs the phases for tokens [i0, i1).
func (b *Backend) latentGroup(d, qt *tensor, ps []int32, p backend.Attention, i0, i1 int) {
	l := &b.lat
	l.i0 = i0
	ng := i1 - i0
	l.q16 = slices.Grow(l.q16[:0], ng*l.h*l.hd)[:ng*l.h*l.hd]
	l.soff, l.nkv, l.rows = l.soff[:0], l.nkv[:0], l.rows[:0]
	total := 0
	for j := range ng {
		i := i0 + j
		nkv := int(ps[i]) + 1 // rows h*n+i share token i's position
		var rows []int32
		if b.seqOf != nil {
			rows = b.seqRows[b.seqOf[i]]
		}
		l.soff, l.nkv, l.rows = append(l.soff, total), append(l.nkv, nkv), append(l.rows, rows)
		total += l.h * nkv
		for h := range l.h { // head h of token i: query row h*n+i
			r := h*l.n + i
			b.k.AttnQ16(qt.f32[r*qt.cols:r*qt.cols+l.hd], l.q16[(j*l.h+h)*l.hd:])
		}
	}
	l.s = slices.Grow(l.s[:0], total)[:total]
	work := total * (l.hd + l.vhd)

	l.pieces = l.pieces[:0]
	for j, nkv := range l.nkv {
		for t0 := 0; t0 < nkv; t0 += latPositions {
			l.pieces = append(l.pieces, [3]int{j, t0, min(nkv, t0+latPositions)})
		}
	}
	b.set(opLatScores, d, qt, nil, len(l.pieces), 1)
	b.t.attn = p
	b.do(work)

	b.set(opLatProbs, d, qt, nil, ng*l.h, 1)
	b.do(total)

	l.pieces = l.pieces[:0]
	for j := range ng {
		for c0 := 0; c0 < l.vhd; c0 += latColumns {
			l.pieces = append(l.pieces, [3]int{j, c0, min(l.vhd, c0+latColumns)})
		}
	}
	b.set(opLatValues, d, qt, nil, len(l.pieces), 1)
	b.do(work)
}

// latScores runs the scores items [lo, hi): all heads of a token of the group over a
// piece of its positions.
func (b *Backend) latScores(lo, hi int) {
	l, kt := &b.lat, b.kv[0]
	for _, pc := range l.pieces[lo:hi] {
		i, nkv := pc[0], l.nkv[pc[0]]
		b.k.AttnScores(l.q16[i*l.h*l.hd:(i+1)*l.h*l.hd], l.h, kt.f16, kt.cols, l.rows[i], pc[1], pc[2], nkv, l.hd,
			b.t.attn.Scale, l.s[l.soff[i]:l.soff[i]+l.h*nkv])
	}
}

// latProbs runs the items [lo, hi) of (token of the group, head): its probabilities.
func (b *Backend) latProbs(lo, hi int) {
	l := &b.lat
	for it := lo; it < hi; it++ {
		i, h := it/l.h, it%l.h
		o := l.soff[i] + h*l.nkv[i]
		b.k.AttnProbs(l.s[o : o+l.nkv[i]])
	}
}

// latValues runs the values items [lo, hi): all heads of a token (i0+i) over a piece of
// the columns, into dst rows h*n+i0+i.
func (b *Backend) latValues(lo, hi int) {
	l, vt, d := &b.lat, b.kv[1], b.t.d
	for _, pc := range l.pieces[lo:hi] {
		i, nkv := pc[0], l.nkv[pc[0]]
		b.k.AttnValues(l.s[l.soff[i]:l.soff[i]+l.h*nkv], l.h, nkv, vt.f16, vt.cols, l.rows[i], l.vhd, pc[1], pc[2],
			d.f32[(l.i0+i)*d.cols:], l.n*d.cols)
	}
}
