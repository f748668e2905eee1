package cpu

import (
	"fmt"
	"unsafe"

	"ember/inference/backend"
	"ember/inference/quant"
	kern "ember/kernels/cpu"
)

// scratch returns worker w's scratch space of at least n floats.
func (b *Backend) scratch(w, n int) []float32 {
	if len(b.wscr[w]) < n {
		b.wscr[w] = make([]float32, n)
	}
	return b.wscr[w][:n]
}

// RoPE implements backend.Ops.
func (b *Backend) RoPE(x, pos backend.Tensor, r backend.RoPE) {
	xt := want(x, quant.F32)
	ps := want(pos, quant.I32).i32
	if r.HeadDim <= 0 || r.Dims <= 0 || r.Dims%2 != 0 || r.Dims > r.HeadDim || xt.cols%r.HeadDim != 0 || len(ps) != xt.rows {
		panic(fmt.Sprintf("cpu: RoPE: dims %d, head dim %d, width %d, %d positions for %d rows", r.Dims, r.HeadDim, xt.cols, len(ps), xt.rows))
	}
	var factors []float32
	if r.Factors != nil {
		factors = want(r.Factors, quant.F32).f32
		if len(factors) != r.Dims/2 {
			panic(fmt.Sprintf("cpu: RoPE: %d frequency factors for %d dims", len(factors), r.Dims))
		}
	}
	b.set(opRoPE, xt, nil, nil, xt.rows, 1)
	b.t.ids, b.t.rope, b.t.factors = ps, r, factors
	b.do(xt.rows * xt.cols * 4)
}

func (b *Backend) rope(w, lo, hi int) {
	t := &b.t
	r, x := t.rope, t.d
	cs := b.scratch(w, r.Dims)
	for i := lo; i < hi; i++ {
		backend.RoPEAngles(cs, t.ids[i], r, t.factors)
		b.k.RoPE(x.f32[i*x.cols:(i+1)*x.cols], r.HeadDim, r.Dims, r.Style == backend.RoPENeoX, cs)
	}
}

// SetRows implements backend.Ops.
func (b *Backend) SetRows(dst, src, rows backend.Tensor) {
	d, s := get(dst), want(src, quant.F32)
	ids := want(rows, quant.I32).i32
	if d.cols != s.cols || len(ids) != s.rows || (d.f16 == nil && d.f32 == nil && d.typ != quant.Q8_0) {
		panic(fmt.Sprintf("cpu: SetRows: %d rows of %d into %v %dx%d", s.rows, s.cols, d.typ, d.rows, d.cols))
	}
	for _, r := range ids {
		if r < 0 || int(r) >= d.rows {
			panic(fmt.Sprintf("cpu: SetRows: row %d outside %d", r, d.rows))
		}
	}
	b.set(opSetRows, d, s, nil, s.rows, 1)
	b.t.ids = ids
	b.do(s.rows * s.cols)
}

func (b *Backend) setRows(lo, hi int) {
	d, s, n := b.t.d, b.t.a, b.t.a.cols
	for i := lo; i < hi; i++ {
		r, in := int(b.t.ids[i]), s.f32[i*n:(i+1)*n]
		switch {
		case d.f16 != nil:
			b.k.F32ToF16(in, d.f16[r*n:(r+1)*n])
		case d.f32 != nil:
			copy(d.f32[r*n:(r+1)*n], in)
		default: // Q8_0: llama.cpp's quantize_row_q8_0
			if err := quant.Quantize(d.typ, in, d.row(r)); err != nil {
				panic("cpu: SetRows: " + err.Error())
			}
		}
	}
}

func sameMemory(a []float32, b []float32) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, a1 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&a[len(a)-1]))
	b0, b1 := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[len(b)-1]))
	return a0 <= b1 && b0 <= a1
}

// attnMode picks how Attention splits its work: attnAuto decides per call (attnGroups),
// attnPerHead and attnGrouped force a path (tests compare them; both give the same bits).
type attnMode int

const (
	attnAuto attnMode = iota
	attnPerHead
	attnGrouped
)

// attnGroups reports whether an Attention over rows query rows of a cache of typ runs
// in work items of (query row, KV head), each calling a grouped kernel on the g query
// heads that share the KV head and reading its K and V rows once for all of them, rather
// than items of (query row, head). It needs 2 <= g <= the kernels' GQAMax; attnAuto picks
// it for F16 and Q8_0 caches with enough items to keep the workers busy (two per thread).
// On Llama-3.2-1B's heads (hd 64, g 4) over a paged cache, 2 threads, BenchmarkAttention
// (session 84, AMD Zen 5) took half the time grouped over a Q8_0 cache: decode at 1,500
// positions 149-154 us against 278-326 (AVX-512), 227-234 against 398-433 (AVX2), a
// 128-row prefill chunk 12.7-14.8 ms against 26.5-27.3; the Q8_0 kernels had been
// per-head since an older AVX2 measurement (the grouped one 3-45% slower, before the
// kernels' K prefetch and AVX-512 paths). The F16 kernels grouped take 35-45% less.
func (b *Backend) attnGroups(typ quant.Type, rows int, p backend.Attention) bool {
	g := p.NHead / p.NKVHead
	switch {
	case g < 2 || g > kern.GQAMax || b.gqaMode == attnPerHead:
		return false
	case b.gqaMode == attnGrouped:
		return true
	}
	return (typ == quant.F16 || typ == quant.Q8_0) && rows*p.NKVHead >= 2*b.threads
}

// Attention implements backend.Ops; (query row, head) pairs, or (query row, KV head)
// pairs when the heads of a KV head go to a grouped kernel together (attnGroups), are
// split among the workers; a few tokens' latent attention (HeadGroups) goes in phases
// (latent.go).
func (b *Backend) Attention(dst, q, k, v, pos backend.Tensor, p backend.Attention) {
	d, qt := want(dst, quant.F32), want(q, quant.F32)
	kt, vt := get(k), get(v)
	if (kt.typ != quant.F16 && kt.typ != quant.Q8_0) || vt.typ != kt.typ {
		panic(fmt.Sprintf("cpu: Attention over a %v K and %v V cache", kt.typ, vt.typ))
	}
	ps := want(pos, quant.I32).i32
	if p.NKVHead <= 0 || p.NHead%p.NKVHead != 0 || qt.cols != p.NHead*p.HeadDim ||
		kt.cols != p.NKVHead*p.HeadDim || vt.cols != p.NKVHead*p.VHeadDim ||
		d.cols != p.NHead*p.VHeadDim || d.rows != qt.rows || kt.rows != vt.rows || len(ps) != qt.rows {
		panic(fmt.Sprintf("cpu: Attention: shapes q %dx%d k %dx%d v %dx%d dst %dx%d for %+v",
			qt.rows, qt.cols, kt.rows, kt.cols, vt.rows, vt.cols, d.rows, d.cols, p))
	}
	if sameMemory(d.f32, qt.f32) {
		panic("cpu: Attention: dst must not alias q")
	}
	maxPos := int32(-1)
	for _, ps := range ps {
		maxPos = max(maxPos, ps)
		if ps < 0 || (p.Table == nil && int(ps) >= kt.rows) {
			panic(fmt.Sprintf("cpu: Attention: position %d outside a cache of %d", ps, kt.rows))
		}
	}
	b.kv[0], b.kv[1] = kt, vt
	b.seqOf = nil
	if p.Table != nil {
		b.pagedRows(p, ps, kt.rows)
	}
	if b.latentTakes(kt, qt.rows, p) {
		b.latentAttention(d, qt, ps, p)
		return
	}
	grouped, items := b.attnGroups(kt.typ, qt.rows, p), qt.rows*p.NHead
	if grouped {
		items = qt.rows * p.NKVHead
	}
	b.set(opAttention, d, qt, nil, items, 1)
	b.t.ids, b.t.attn, b.t.gqa = ps, p, grouped
	b.do(qt.rows * p.NHead * (int(maxPos) + 1) * p.HeadDim)
}

// pagedRows resolves a paged Attention's block table into, per sequence, the cache row
// of each of its positions up to the furthest one a query row reads (b.seqRows), and
// each query row's sequence (b.seqOf).
func (b *Backend) pagedRows(p backend.Attention, ps []int32, cacheRows int) {
	tt, seq := want(p.Table, quant.I32), want(p.Seq, quant.I32).i32
	tables, err := backend.SeqTables(tt.i32, tt.cols, seq, ps, p.BlockSize, cacheRows)
	if err != nil {
		panic("cpu: " + err.Error())
	}
	nseq := tt.rows
	if cap(b.seqRows) < nseq {
		b.seqRows = make([][]int32, nseq)
	}
	b.seqRows = b.seqRows[:nseq]
	for s := range b.seqRows {
		b.seqRows[s] = b.seqRows[s][:0]
	}
	for i, s := range seq {
		rows := b.seqRows[s]
		for t := len(rows); t <= int(ps[i]); t++ {
			rows = append(rows, int32(backend.Row(tables[i], p.BlockSize, t)))
		}
		b.seqRows[s] = rows
	}
	b.seqOf = seq
}

func (b *Backend) attention(w, lo, hi int) {
	if b.t.gqa {
		b.attentionGroups(w, lo, hi)
		return
	}
	t, p := &b.t, b.t.attn
	kt, vt := b.kv[0], b.kv[1]
	group := p.NHead / p.NKVHead
	for it := lo; it < hi; it++ {
		i, h := it/p.NHead, it%p.NHead
		kvh := h / group
		nkv := int(t.ids[i]) + 1
		var rows []int32
		if b.seqOf != nil {
			rows = b.seqRows[b.seqOf[i]]
		}
		q := t.a.f32[i*t.a.cols+h*p.HeadDim : i*t.a.cols+(h+1)*p.HeadDim]
		out := t.d.f32[i*t.d.cols+h*p.VHeadDim : i*t.d.cols+(h+1)*p.VHeadDim]
		if kt.typ == quant.Q8_0 { // this KV head's blocks of each row
			scr := b.scratch(w, nkv+2*p.HeadDim)
			b.k.AttentionQ8(q, kt.raw[kvh*p.HeadDim/32*34:], kt.rowBytes, vt.raw[kvh*p.VHeadDim/32*34:], vt.rowBytes, rows,
				nkv, p.HeadDim, p.VHeadDim, p.Scale, out, scr)
			continue
		}
		scr := b.scratch(w, nkv+p.HeadDim)
		b.k.Attention(q, kt.f16[kvh*p.HeadDim:], kt.cols, vt.f16[kvh*p.VHeadDim:], vt.cols, rows,
			nkv, p.HeadDim, p.VHeadDim, p.Scale, out, scr)
	}
}

// attentionGroups runs the work items [lo, hi) of (query row, KV head): the g query
// heads of the KV head, one after another in the row of q and of dst, in one call of a
// grouped kernel, which gives each head the bits of the single-head kernel.
func (b *Backend) attentionGroups(w, lo, hi int) {
	t, p := &b.t, b.t.attn
	kt, vt := b.kv[0], b.kv[1]
	g := p.NHead / p.NKVHead
	for it := lo; it < hi; it++ {
		i, kvh := it/p.NKVHead, it%p.NKVHead
		nkv := int(t.ids[i]) + 1
		var rows []int32
		if b.seqOf != nil {
			rows = b.seqRows[b.seqOf[i]]
		}
		q0, o0 := i*t.a.cols+kvh*g*p.HeadDim, i*t.d.cols+kvh*g*p.VHeadDim
		q, out := t.a.f32[q0:q0+g*p.HeadDim], t.d.f32[o0:o0+g*p.VHeadDim]
		scr := b.scratch(w, kern.AttentionGroupScratchLen(g, nkv, p.HeadDim))
		if kt.typ == quant.Q8_0 { // this KV head's blocks of each row
			b.k.AttentionQ8Group(q, g, kt.raw[kvh*p.HeadDim/32*34:], kt.rowBytes, vt.raw[kvh*p.VHeadDim/32*34:], vt.rowBytes, rows,
				nkv, p.HeadDim, p.VHeadDim, p.Scale, out, scr)
			continue
		}
		b.k.AttentionGroup(q, g, kt.f16[kvh*p.HeadDim:], kt.cols, vt.f16[kvh*p.VHeadDim:], vt.cols, rows,
			nkv, p.HeadDim, p.VHeadDim, p.Scale, out, scr)
	}
}
