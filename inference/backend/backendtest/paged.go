package backendtest

import (
	"context"
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/quant"
)

// testPagedAttention runs one batch mixing sequences over a paged cache: a decode row of
// a sequence whose blocks are scattered, a prefill of a sequence sharing the first blocks
// of another (a prefix-cache hit), and a sequence of one position. The backend is checked
// against ref, and ref's paged output against ref's contiguous attention over each
// sequence's positions gathered into a cache of their own.
func testPagedAttention(p *pair) {
	const bs, nblocks = 4, 24
	for _, c := range []struct {
		nh, nkv, hd, vhd int
		shared           bool // v is k, as an MLA latent cache
	}{
		{4, 2, 64, 64, false}, {6, 3, 40, 24, false},
		{1, 1, 576, 576, true}, {16, 1, 576, 576, true}, {2, 1, 576, 512, false}, {4, 4, 192, 128, false},
	} {
		kw, vw := c.nkv*c.hd, c.nkv*c.vhd
		rows := bs * nblocks
		kData := p.randn(rows*kw, 1)
		kr, kb := p.newT(p.ref, quant.F16, rows, kw), p.newT(p.be, quant.F16, rows, kw)
		all := make([]int32, rows)
		for i := range all {
			all[i] = int32(i)
		}
		ir, ib := p.ints(all)
		ksr, ksb := p.input(kData, rows, kw)
		p.ref.SetRows(kr, ksr, ir)
		p.be.SetRows(kb, ksb, ib)
		vData, vr, vb := kData, kr, kb
		if !c.shared {
			vData = p.randn(rows*vw, 1)
			vr, vb = p.newT(p.ref, quant.F16, rows, vw), p.newT(p.be, quant.F16, rows, vw)
			vsr, vsb := p.input(vData, rows, vw)
			p.ref.SetRows(vr, vsr, ir)
			p.be.SetRows(vb, vsb, ib)
		}

		const cols = 6 // blocks per table row; unused entries hold junk the op must ignore
		tables := [][]int32{
			{17, 3, 22, 9, 0, -5}, // 17 positions used: decode at position 16
			{17, 3, 11, 5, 14, 2}, // shares two blocks with sequence 0; prefill of 14..20
			{8, -1, -1, -1, -1, -1},
		}
		type qrow struct{ seq, pos int32 }
		var qs []qrow
		qs = append(qs, qrow{0, 16})
		for t := int32(14); t <= 20; t++ {
			qs = append(qs, qrow{1, t})
		}
		qs = append(qs, qrow{2, 0})
		flat := make([]int32, 0, len(tables)*cols)
		for _, t := range tables {
			flat = append(flat, t...)
		}
		seq, pos := make([]int32, len(qs)), make([]int32, len(qs))
		for i, q := range qs {
			seq[i], pos[i] = q.seq, q.pos
		}
		n := len(qs)
		heads := attnHeads{c.nh, c.nkv, c.hd, c.vhd}
		run := p.pagedAttention(heads, flat, cols, seq, pos, [2]backend.Tensor{kr, vr}, [2]backend.Tensor{kb, vb}, bs)
		qData, o, a := run.q, run.o, run.ar
		a.Table, a.Seq = nil, nil // for the contiguous caches below
		p.check(fmt.Sprintf("paged Attention %+v", c), o, 2e-3)

		// The oracle: each query row alone over its sequence gathered contiguously.
		got := make([]float32, n*c.nh*c.vhd)
		if err := p.ref.ReadF32(context.Background(), o.refT, got); err != nil {
			p.t.Fatal(err)
		}
		for i, q := range qs {
			np := int(q.pos) + 1
			gk, gv := make([]float32, np*kw), make([]float32, np*vw)
			for t := 0; t < np; t++ {
				r := backend.Row(tables[q.seq], bs, t)
				copy(gk[t*kw:(t+1)*kw], kData[r*kw:(r+1)*kw])
				copy(gv[t*vw:(t+1)*vw], vData[r*vw:(r+1)*vw])
			}
			want := p.contiguousRef(a, qData[i*c.nh*c.hd:(i+1)*c.nh*c.hd], gk, gv, np, q.pos)
			for j, w := range want {
				if g := got[i*c.nh*c.vhd+j]; g != w {
					p.t.Fatalf("paged Attention %+v: ref row %d (seq %d pos %d) elem %d = %g, contiguous %g", c, i, q.seq, q.pos, j, g, w)
				}
			}
		}
	}
}

// contiguousRef is ref's attention of one query row at pos over np positions in a
// contiguous cache made of k and v.
func (p *pair) contiguousRef(a backend.Attention, q, k, v []float32, np int, pos int32) []float32 {
	kw, vw := a.NKVHead*a.HeadDim, a.NKVHead*a.VHeadDim
	kc, vc := p.newT(p.ref, quant.F16, np, kw), p.newT(p.ref, quant.F16, np, vw)
	ks, vs := p.newT(p.ref, quant.F32, np, kw), p.newT(p.ref, quant.F32, np, vw)
	p.ref.WriteF32(ks, k)
	p.ref.WriteF32(vs, v)
	idx := make([]int32, np)
	for i := range idx {
		idx[i] = int32(i)
	}
	it := p.newT(p.ref, quant.I32, np, 1)
	p.ref.WriteI32(it, idx)
	p.ref.SetRows(kc, ks, it)
	p.ref.SetRows(vc, vs, it)
	qt := p.newT(p.ref, quant.F32, 1, len(q))
	p.ref.WriteF32(qt, q)
	pt := p.newT(p.ref, quant.I32, 1, 1)
	p.ref.WriteI32(pt, []int32{pos})
	dst := p.newT(p.ref, quant.F32, 1, a.NHead*a.VHeadDim)
	p.ref.Attention(dst, qt, kc, vc, pt, a)
	out := make([]float32, a.NHead*a.VHeadDim)
	if err := p.ref.ReadF32(context.Background(), dst, out); err != nil {
		p.t.Fatal(err)
	}
	return out
}

// attnHeads is an attention's head counts and dimensions.
type attnHeads struct{ nh, nkv, hd, vhd int }

// pagedRun is what pagedAttention ran: the query values, the outputs, and ref's query,
// positions and parameters (to run ref again over another cache).
type pagedRun struct {
	q      []float32
	o      *out
	qr, pr backend.Tensor
	ar     backend.Attention
}

// pagedAttention runs Attention on both backends over paged caches (ref's k and v, the
// backend's), with block tables (rows of cols block ids) and query rows of sequences seq
// at positions pos, from random queries and the host's bound on the lengths (the
// longest position + 1), as the models give it.
func (p *pair) pagedAttention(h attnHeads, tables []int32, cols int, seq, pos []int32, ref, be [2]backend.Tensor,
	bs int) pagedRun {
	tr, tb := p.newT(p.ref, quant.I32, len(tables)/cols, cols), p.newT(p.be, quant.I32, len(tables)/cols, cols)
	p.ref.WriteI32(tr, tables)
	p.be.WriteI32(tb, tables)
	sr, sb := p.ints(seq)
	pr, pb := p.ints(pos)
	n := len(seq)
	qData := p.randn(n*h.nh*h.hd, 1)
	qr, qb := p.input(qData, n, h.nh*h.hd)
	a := backend.Attention{NHead: h.nh, NKVHead: h.nkv, HeadDim: h.hd, VHeadDim: h.vhd,
		Scale: 1 / float32(math.Sqrt(float64(h.hd))), BlockSize: bs}
	ar, ab := a, a
	ar.Table, ar.Seq, ab.Table, ab.Seq = tr, sr, tb, sb
	for _, q := range pos {
		ab.MaxLen = max(ab.MaxLen, int(q)+1)
	}
	o := p.output(n, h.nh*h.vhd)
	p.ref.Attention(o.refT, qr, ref[0], ref[1], pr, ar)
	p.be.Attention(o.beT, qb, be[0], be[1], pb, ab)
	return pagedRun{q: qData, o: o, qr: qr, pr: pr, ar: ar}
}
