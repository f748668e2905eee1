package backendtest

import (
	"errors"
	"fmt"
	"slices"

	"ember/inference/backend"
	"ember/inference/quant"
)

// testQ8Attention: a Q8_0 KV cache (a backend that holds none says so with
// ErrUnsupported, and the test skips). Rows written by SetRows read back by GetRows as
// ref's, bit for bit (both round as llama.cpp's quantize_row_q8_0); paged attention over
// them matches ref's, for grouped heads, a latent-sized shared K and V, and a decode row,
// a prefill and a one-position sequence in one batch; and it differs from the F16
// cache's attention over the same values (the query is rounded to Q8_0, not F16).
func testQ8Attention(p *pair) {
	probe, err := p.be.New(quant.Q8_0, 1, 32)
	if errors.Is(err, backend.ErrUnsupported) {
		p.t.Skipf("%s holds no Q8_0 KV cache", p.be.Name())
	}
	if err != nil {
		p.t.Fatal(err)
	}
	p.be.Free(probe)
	const bs, nblocks = 4, 12
	for _, c := range []struct {
		nh, nkv, hd, vhd int
		shared           bool
	}{
		{4, 2, 64, 64, false}, {8, 8, 32, 96, false}, {16, 1, 576, 576, true},
	} {
		name := fmt.Sprintf("Q8_0 cache %+v", c)
		kw, vw := c.nkv*c.hd, c.nkv*c.vhd
		rows := bs * nblocks
		all := make([]int32, rows)
		for i := range all {
			all[i] = int32(i)
		}
		slices.Reverse(all) // rows written out of order
		ir, ib := p.ints(all)
		write := func(data []float32, w int) (backend.Tensor, backend.Tensor) {
			r, b := p.newT(p.ref, quant.Q8_0, rows, w), p.newT(p.be, quant.Q8_0, rows, w)
			sr, sb := p.input(data, rows, w)
			p.ref.SetRows(r, sr, ir)
			p.be.SetRows(b, sb, ib)
			o := p.output(rows, w)
			p.ref.GetRows(o.refT, r, ir)
			p.be.GetRows(o.beT, b, ib)
			p.check(name+": GetRows of SetRows", o, 0)
			return r, b
		}
		kData := p.randn(rows*kw, 1)
		kr, kb := write(kData, kw)
		vr, vb := kr, kb
		if !c.shared {
			vr, vb = write(p.randn(rows*vw, 1), vw)
		}
		tables := []int32{9, 2, 7, 0, 11, 4, 5, -1, 8, -1, -1, -1}
		seq, pos := []int32{0}, []int32{13}
		for t := int32(3); t < 9; t++ { // a prefill of sequence 1
			seq, pos = append(seq, 1), append(pos, t)
		}
		seq, pos = append(seq, 2), append(pos, 0)
		n := len(seq)
		heads := attnHeads{c.nh, c.nkv, c.hd, c.vhd}
		run := p.pagedAttention(heads, tables, 4, seq, pos, [2]backend.Tensor{kr, vr}, [2]backend.Tensor{kb, vb}, bs)
		o := run.o
		p.check(name+": paged Attention", o, 2e-3)

		// The F16 cache of the same (dequantized) values attends differently: the query's
		// rounding is the cache's.
		deq := ReadF32(p.t, p.ref, p.getAll(kr, rows, kw))
		f16 := p.newT(p.ref, quant.F16, rows, kw)
		ds, _ := p.input(deq, rows, kw)
		p.ref.SetRows(f16, ds, ir)
		if !c.shared {
			continue
		}
		of := p.newT(p.ref, quant.F32, n, c.nh*c.vhd)
		p.ref.Attention(of, run.qr, f16, f16, run.pr, run.ar)
		if slices.Equal(ReadF32(p.t, p.ref, of), ReadF32(p.t, p.ref, o.refT)) {
			p.t.Errorf("%s: the Q8_0 cache attends as the F16 one does", name)
		}
	}
}

// getAll reads rows of an F16 or Q8_0 table on ref back as an F32 tensor (row i from
// row i).
func (p *pair) getAll(t backend.Tensor, rows, cols int) backend.Tensor {
	idx := make([]int32, rows)
	for i := range idx {
		idx[i] = int32(i)
	}
	ids := p.newT(p.ref, quant.I32, rows, 1)
	p.ref.WriteI32(ids, idx)
	out := p.newT(p.ref, quant.F32, rows, cols)
	p.ref.GetRows(out, t, ids)
	return out
}
