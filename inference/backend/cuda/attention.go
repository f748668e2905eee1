package cuda

import (
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

// The grouped kernel takes groups of at most gqaMax query heads of at most gqaHead dims
// (GQA_MAX, GQA_HEAD in attention.cu).
const gqaMax, gqaHead = 8, 128

// attention_smem: threads per block and the floats per head that its partial sums take
// (SM_THREADS, SM_PART), and the dynamic shared memory it may use (its limit is raised
// to that when the kernel is loaded; Hopper allows 227 KiB a block).
const smThreads, smPart, smemMax = 256, 2048, 200 << 10

// maxHead is the widest K or V head the attention kernels take (MAX_HEAD in
// attention.cu): 576 is MLA's latent row (DeepSeek-V2's 64 rope + 512 latent dims).
const maxHead = 576

// maxLenStep rounds Attention.MaxLen up before it bounds the positions a launch is
// sized for.
const maxLenStep = 256

// Attention implements backend.Ops. Positions are not checked against the cache on the
// host (they live on the device); the model keeps them inside its cache.
func (b *Backend) Attention(dst, q, k, v, pos backend.Tensor, p backend.Attention) {
	c := b.attnCall(dst, q, k, v, pos, p, 0, "Attention")
	d, qt, kt, vt, table, nmax, args := c.d, c.qt, c.kt, c.vt, c.table, c.nmax, c.args
	g := p.NHead / p.NKVHead
	// Head-major rows of one latent KV head: a token's heads together (attention_dec.go).
	if b.attentionMLA(d, qt, kt, vt, c.pt, table, c.seq, c.tcols, c.bs, p.HeadGroups, p.Scale, p.NHead, p.NKVHead,
		p.HeadDim, p.VHeadDim, nmax) {
		return
	}
	// Many rows of few sequences (a prompt): tensor cores (attention_prefill.go).
	seqs := 1
	if table != nil {
		seqs = table.rows
	}
	if b.attentionPrefill(args, qt.rows, p.NKVHead, g, p.HeadDim, p.VHeadDim, seqs) {
		return
	}
	// A few rows over a short cache: each row's context in shared memory at once
	// (attention_short.go). MLA's head rows are rows of one KV head here.
	kv1 := p.NHead == 1 && p.NKVHead == 1 && c.sameKV()
	if b.attentionShort(args, qt.rows, p.NKVHead, g, p.HeadDim, p.VHeadDim, nmax, p.HeadGroups, kv1, 0, p.OneNew) {
		return
	}
	// One row (or rows each their sequence's one new position) over a longer cache than
	// attention_decD_1 takes: its code on a cluster of blocks a KV head, each block a
	// chunk in one or more tiles (attention_dec1c.go).
	n1 := nmax
	if p.MaxLen > 0 {
		n1 = min(n1, (p.MaxLen+dec1Step-1)/dec1Step*dec1Step)
	}
	if b.attentionDec1C(args, qt.rows, p.NKVHead, g, p.HeadDim, p.VHeadDim, nmax, n1, p.OneNew) {
		return
	}
	// Few (row, KV head) pairs over a long cache: each row's positions over several
	// blocks (attention_split.go).
	if b.attentionSplit(args, qt.rows, p.NKVHead, g, p.HeadDim, p.VHeadDim, nmax) {
		return
	}
	// Many decode rows: each row's query heads of a KV head as one tensor-core tile
	// (attention_dec.go).
	// One row's kernel (attention_decD_1) has forms for fewer positions than maxLenStep
	// (dec1Form).
	if b.attentionDec(args, qt.rows, p.NKVHead, g, p.HeadDim, p.VHeadDim, nmax, n1) {
		return
	}
	if smem := 4 * g * (p.HeadDim + max(nmax, smPart)); g <= gqaMax && p.HeadDim%8 == 0 && p.VHeadDim%8 == 0 &&
		p.VHeadDim <= 8*smThreads && smem <= b.attnSmem {
		b.launch("attention_smem", qt.rows, p.NKVHead, smThreads, smem, append(args, i64(nmax))...)
		return
	}
	name, heads := "attention_f16", p.NHead
	if g > 1 && g <= gqaMax && p.HeadDim <= gqaHead && p.VHeadDim <= gqaHead {
		name, heads = "attention_gqa", p.NKVHead
	}
	b.launch(name, qt.rows, heads, 128, 0, args...)
}

// attnCall is what the attention kernels take for one Attention op: the operands (dst
// rows of NHead heads of VHeadDim-skip dims), the cache bound nmax and the kernels'
// common arguments.
type attnCall struct {
	d, qt, kt, vt, pt, table, seq *tensor
	tcols, bs, nmax               int
	args                          []uint64
}

// attnCall checks op's operands (panicking, as the ops do, on shapes that do not agree)
// and gathers them.
func (b *Backend) attnCall(dst, q, k, v, pos backend.Tensor, p backend.Attention, skip int, op string) attnCall {
	d, qt := want(dst, quant.F32), want(q, quant.F32)
	kt, vt := want(k, quant.F16), want(v, quant.F16)
	if p.NKVHead <= 0 || p.NHead%p.NKVHead != 0 || qt.cols != p.NHead*p.HeadDim ||
		kt.cols != p.NKVHead*p.HeadDim || vt.cols != p.NKVHead*p.VHeadDim ||
		d.cols != p.NHead*(p.VHeadDim-skip) || d.rows != qt.rows || kt.rows != vt.rows ||
		p.HeadDim > maxHead || p.VHeadDim > maxHead {
		panic(fmt.Sprintf("cuda: %s: shapes q %dx%d k %dx%d v %dx%d dst %dx%d for %+v",
			op, qt.rows, qt.cols, kt.rows, kt.cols, vt.rows, vt.cols, d.rows, d.cols, p))
	}
	if d.ptr < qt.ptr+uint64(qt.rows*qt.stride) && qt.ptr < d.ptr+uint64(d.rows*d.stride) {
		panic("cuda: " + op + ": dst must not alias q")
	}
	c := attnCall{d: d, qt: qt, kt: kt, vt: vt, pt: ids(pos, qt.rows, op), bs: 1}
	if p.Table != nil {
		c.table = want(p.Table, quant.I32)
		c.seq = ids(p.Seq, qt.rows, op)
		c.tcols, c.bs = c.table.cols, p.BlockSize
		if c.bs <= 0 {
			panic(fmt.Sprintf("cuda: %s: block size %d", op, c.bs))
		}
	}
	c.args = []uint64{ptr(d), i64(d.cols), ptr(qt), i64(qt.cols),
		ptr(kt), i64(kt.cols), ptr(vt), i64(vt.cols), ptr(c.pt), i64(p.NHead), i64(p.NKVHead),
		i64(p.HeadDim), i64(p.VHeadDim), f32(p.Scale), ptr(c.table), i64(c.tcols), ptr(c.seq), i64(c.bs)}
	// Positions are bounded by the cache (or the block table): when the scores of that
	// many positions fit in shared memory, the exact shared-memory kernel runs.
	c.nmax = kt.rows
	if c.table != nil {
		c.nmax = min(c.nmax, c.tcols*c.bs)
	}
	if p.MaxLen > 0 {
		// The rows' bound, rounded up so that a decode step's launches (and the graph
		// recorded from them) change once every maxLenStep positions.
		c.nmax = min(c.nmax, (p.MaxLen+maxLenStep-1)/maxLenStep*maxLenStep)
	}
	return c
}

// sameKV reports whether the values are the key rows themselves (MLA's latent rows).
func (c *attnCall) sameKV() bool { return c.kt.ptr == c.vt.ptr && c.kt.stride == c.vt.stride }

// AttentionLatent is DeepSeek's latent attention (one latent KV head whose rows are
// both K and V, HeadGroups head rows a token) writing each head row's output without its
// first skip dims (the rope dims): what Attention and a gather of the latent dims give,
// in one launch, which the next product's Q8_K rounding may join (attn_v_b's). It takes
// what attention_short576 would have taken in Attention (a few tokens over a short
// cache) and reports false, having done nothing, for any other case.
func (b *Backend) AttentionLatent(dst, q, k, v, pos backend.Tensor, p backend.Attention, skip int) bool {
	if skip <= 0 || skip >= p.VHeadDim || p.NHead != 1 || p.NKVHead != 1 || p.HeadGroups < 2 {
		return false
	}
	c := b.attnCall(dst, q, k, v, pos, p, skip, "AttentionLatent")
	if c.qt.rows%p.HeadGroups != 0 || !c.sameKV() ||
		!b.mlaDeclines(c.qt.rows/p.HeadGroups, c.nmax) {
		return false
	}
	return b.attentionShort(c.args, c.qt.rows, 1, 1, p.HeadDim, p.VHeadDim, c.nmax, p.HeadGroups, true, skip, p.OneNew)
}
