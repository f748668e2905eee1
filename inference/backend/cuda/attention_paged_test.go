package cuda_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/quant"
)

// TestPagedAttention: attention through a block table (blocks shuffled, a shared
// prefix block, two sequences) equals the reference on each sequence's contiguous cache.
func TestPagedAttention(t *testing.T) {
	for _, long := range []bool{false, true} {
		be := newOrSkip(t)
		if long {
			cuda.NoSharedAttention(be)
		}
		pagedAttention(t, be)
		be.Close()
	}
}

func pagedAttention(t *testing.T, be *cuda.Backend) {
	rng := rand.New(rand.NewPCG(7, 7))
	const nh, nkv, hd, bs, nblocks = 8, 2, 64, 16, 12
	width := nkv * hd
	rows := nblocks * bs
	kv := [2][]float32{make([]float32, rows*width), make([]float32, rows*width)}
	for _, c := range kv {
		for i := range c {
			c[i] = float32(rng.NormFloat64())
		}
	}
	// Sequence 0 uses blocks 5, 2, 9; sequence 1 shares block 5 and then 0, 11.
	table := []int32{5, 2, 9, 5, 0, 11}
	seqOf := []int32{0, 0, 1, 1, 1}
	pos := []int32{40, 3, 47, 16, 33}
	q := make([]float32, len(pos)*nh*hd)
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	a := backend.Attention{NHead: nh, NKVHead: nkv, HeadDim: hd, VHeadDim: hd, Scale: 0.125}

	up := func(be backend.Backend, typ quant.Type, r, c int, f32 []float32, i32 []int32) backend.Tensor {
		x, err := be.New(typ, r, c)
		if err != nil {
			t.Fatal(err)
		}
		if i32 != nil {
			be.WriteI32(x, i32)
		} else {
			be.WriteF32(x, f32)
		}
		return x
	}
	cache := func(be backend.Backend, vals []float32, n int) backend.Tensor {
		src := up(be, quant.F32, n, width, vals, nil)
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		dst, err := be.New(quant.F16, n, width)
		if err != nil {
			t.Fatal(err)
		}
		be.SetRows(dst, src, up(be, quant.I32, n, 1, nil, all))
		return dst
	}
	p := a
	p.Table, p.Seq, p.BlockSize = up(be, quant.I32, 2, 3, nil, table), up(be, quant.I32, len(pos), 1, nil, seqOf), bs
	out := up(be, quant.F32, len(pos), nh*hd, make([]float32, len(pos)*nh*hd), nil)
	be.Attention(out, up(be, quant.F32, len(pos), nh*hd, q, nil), cache(be, kv[0], rows), cache(be, kv[1], rows),
		up(be, quant.I32, len(pos), 1, nil, pos), p)
	got := make([]float32, len(pos)*nh*hd)
	if err := be.ReadF32(context.Background(), out, got); err != nil {
		t.Fatal(err)
	}
	r := ref.New()
	for i, ps := range pos {
		n := int(ps) + 1
		var seqKV [2][]float32
		for c := range kv {
			for tpos := 0; tpos < n; tpos++ {
				row := backend.Row(table[3*seqOf[i]:3*seqOf[i]+3], bs, tpos)
				seqKV[c] = append(seqKV[c], kv[c][row*width:(row+1)*width]...)
			}
		}
		o := up(r, quant.F32, 1, nh*hd, make([]float32, nh*hd), nil)
		r.Attention(o, up(r, quant.F32, 1, nh*hd, q[i*nh*hd:(i+1)*nh*hd], nil), cache(r, seqKV[0], n),
			cache(r, seqKV[1], n), up(r, quant.I32, 1, 1, nil, []int32{ps}), a)
		want := make([]float32, nh*hd)
		if err := r.ReadF32(context.Background(), o, want); err != nil {
			t.Fatal(err)
		}
		for j, w := range want {
			if g := got[i*nh*hd+j]; math.Abs(float64(g-w)) > 2e-3 {
				t.Fatalf("query %d (sequence %d, position %d) dim %d: got %g, want %g", i, seqOf[i], ps, j, g, w)
			}
		}
	}
}
