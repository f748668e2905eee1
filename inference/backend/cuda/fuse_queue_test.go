package cuda

import (
	"fmt"
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// These tests need no GPU: they queue ops on a backend with stand-in kernels and no
// device (nothing is flushed) and check which launches the peephole leaves in the
// queue. fuse_test.go checks the fused kernels' results on a GPU.

// queueOnly is a backend that queues launches of the named kernels and can do nothing
// else; its tensors get addresses from mem.
type queueOnly struct {
	*Backend
	mem uint64
}

func newQueueOnly(noFuse bool) *queueOnly {
	b := &Backend{kernels: map[string]*kernel{}, act: map[quant.Type]*scratch{}}
	for _, n := range []string{"rms_norm", "rms_norm_q8_k", "rms_norm_q8_k_1", "add_f32", "add_rms_norm", "add_rms_norm_q8_k",
		"add_rms_norm_q8_k_1", "rope_f32", "rope2_f32", "rope2_set", "set_rows", "set_rows2", "swiglu_f32", "swiglu_q8_k", "quant_q8_k", "mmv_multi",
		mmvName(quant.Q4_K, 1), mmvName(quant.Q4_K, 4), "swiglu_q8", "quant_q8", "add_rms_norm_q8", mmvName(quant.Q5_0, 1), mmvName(quant.Q5_0, 8), "get_rows_f32", "get_rows_q8_k", mmvName(quant.Q4_K, 8)} {
		b.kernels[n] = &kernel{name: n}
	}
	b.act[quant.Q8_K] = &scratch{ptr: 1 << 40, size: 1 << 30}
	b.act[quant.Q8_0] = &scratch{ptr: 2 << 40, size: 1 << 30}
	b.fuse.cfg = fuseCfg{read: true, off: noFuse}
	return &queueOnly{Backend: b, mem: 1 << 20}
}

func (q *queueOnly) tensor(typ quant.Type, rows, cols int) *tensor {
	stride := 4 * cols
	switch typ {
	case quant.F16:
		stride = 2 * cols
	case quant.Q4_K:
		stride = cols / 256 * 144
	case quant.Q5_0:
		stride = cols / 32 * 22
	}
	t := &tensor{typ: typ, rows: rows, cols: cols, stride: stride, ptr: q.mem, size: rows * stride}
	q.mem += uint64(align16(rows * stride))
	return t
}

func (q *queueOnly) f32(rows, cols int) *tensor { return q.tensor(quant.F32, rows, cols) }

// names is the queued kernels since the last call.
func (q *queueOnly) names() []string {
	n := slices.Clone(q.queue.names)
	q.queue.reset()
	return n
}

func wantQueue(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: queued %v, want %v", what, got, want)
	}
}

// testLayer is a decode step's layer of Llama shapes (inference/model's Decoder, less
// the attention, which no pattern touches) over a queue-only Backend.
type testLayer struct {
	q                                            *queueOnly
	inpL, cur, ffnInp, kqv, qc, kc, vc, gate, up *tensor
	kCache, vCache, pos, n1, n2                  *tensor
	wq, wk, wv, wo, wg, wu, wd                   *tensor
	rope                                         backend.RoPE
}

func newTestLayer(q *queueOnly) *testLayer {
	const embd, kv, ffn, hd = 512, 256, 1024, 64
	return &testLayer{q: q,
		inpL: q.f32(1, embd), cur: q.f32(1, embd), ffnInp: q.f32(1, embd), kqv: q.f32(1, embd),
		qc: q.f32(1, embd), kc: q.f32(1, kv), vc: q.f32(1, kv), gate: q.f32(1, ffn), up: q.f32(1, ffn),
		kCache: q.tensor(quant.F16, 16, kv), vCache: q.tensor(quant.F16, 16, kv), pos: q.tensor(quant.I32, 1, 1),
		n1: q.f32(1, embd), n2: q.f32(1, embd),
		wq: q.tensor(quant.Q4_K, embd, embd), wk: q.tensor(quant.Q4_K, kv, embd), wv: q.tensor(quant.Q4_K, kv, embd),
		wo: q.tensor(quant.Q4_K, embd, embd), wg: q.tensor(quant.Q4_K, ffn, embd), wu: q.tensor(quant.Q4_K, ffn, embd),
		wd:   q.tensor(quant.Q4_K, embd, ffn),
		rope: backend.RoPE{Dims: hd, HeadDim: hd, Base: 10000}}
}

// attnInput queues the attention's input: norm, Q/K/V, RoPE, the cache writes.
func (l *testLayer) attnInput() {
	q := l.q
	q.RMSNorm(l.cur, l.inpL, l.n1, 1e-5)
	q.MatMulShared(l.cur, []backend.Proj{{Dst: l.qc, W: l.wq}, {Dst: l.kc, W: l.wk}, {Dst: l.vc, W: l.wv}})
	q.RoPE(l.qc, l.pos, l.rope)
	q.RoPE(l.kc, l.pos, l.rope)
	q.SetRows(l.kCache, l.kc, l.pos)
	q.SetRows(l.vCache, l.vc, l.pos)
}

// rest queues the output product, the residual adds and the FFN.
func (l *testLayer) rest() {
	q := l.q
	q.MatMul(l.cur, l.wo, l.kqv)
	q.Add(l.ffnInp, l.cur, l.inpL)
	q.RMSNorm(l.cur, l.ffnInp, l.n2, 1e-5)
	q.MatMulShared(l.cur, []backend.Proj{{Dst: l.gate, W: l.wg}, {Dst: l.up, W: l.wu}})
	q.SwiGLU(l.gate, l.gate, l.up)
	q.MatMul(l.cur, l.wd, l.gate)
	q.Add(l.inpL, l.cur, l.ffnInp)
}

// TestFuseQueueDecoderLayer: a decode step's layer queues the fused kernels, and with
// fusion off the separate ones.
func TestFuseQueueDecoderLayer(t *testing.T) {
	mm := mmvName(quant.Q4_K, 1)
	for _, off := range []bool{false, true} {
		q := newQueueOnly(off)
		l := newTestLayer(q)
		on, res, logits, wout := q.f32(1, 512), q.f32(1, 512), q.f32(1, 64), q.tensor(quant.Q4_K, 64, 512)
		l.attnInput()
		// A fusion pops the launch it joins: every per-launch list keeps one entry a
		// launch (the PDL flags were once left behind, one too many a fusion).
		if nf, np, nn := len(q.queue.fns), len(q.queue.pdl), len(q.queue.names); np != nf || nn != nf {
			t.Errorf("fusion off %v: %d launches, %d PDL flags, %d names", off, nf, np, nn)
		}
		if got := q.names(); off {
			wantQueue(t, "attention input, unfused", got, "rms_norm", "quant_q8_k", "mmv_multi", "rope_f32", "rope_f32", "set_rows", "set_rows")
		} else {
			wantQueue(t, "attention input", got, "rms_norm_q8_k_1", "mmv_multi", "rope2_set")
		}
		l.rest()
		q.RMSNorm(res, l.inpL, on, 1e-5)
		q.MatMul(logits, wout, res)
		if got := q.names(); off {
			wantQueue(t, "rest of the layer, unfused", got, "quant_q8_k", mm, "add_f32", "rms_norm", "quant_q8_k", "mmv_multi",
				"swiglu_f32", "quant_q8_k", mm, "add_f32", "rms_norm", "quant_q8_k", mm)
		} else {
			wantQueue(t, "rest of the layer", got, "quant_q8_k", mm, "add_rms_norm_q8_k_1", "mmv_multi", "swiglu_q8_k", mm,
				"add_rms_norm_q8_k_1", mm)
		}
	}
}

// TestFuseQueueChunks: a batch flushed in chunks (graph.go's ChunkEnv) loses no fusion,
// even when every launch starts a new batch: the launches are those of one batch.
func TestFuseQueueChunks(t *testing.T) {
	var whole []string
	for _, chunk := range []int{0, 1, 2, 3, 16} {
		q := newQueueOnly(false)
		var got []string
		// 16: the ramp after a sync (8, 8, then 16 launches); the others without it
		q.chunk, q.noRamp, q.dryFlush = chunk, chunk < 16, func(n []string) { got = append(got, n...) }
		l := newTestLayer(q)
		for layer := 0; layer < 2; layer++ {
			l.attnInput()
			l.rest()
		}
		got = append(got, q.names()...)
		if chunk == 0 {
			whole = got
			continue
		}
		wantQueue(t, fmt.Sprintf("chunks of %d", chunk), got, whole...)
	}
	// Two fused layers (layer 1's last Add joins layer 2's RMSNorm; layer 2's stays).
	if len(whole) != 19 || whole[len(whole)-1] != "add_f32" {
		t.Errorf("one batch: %d launches %v, want 19", len(whole), whole)
	}
}

// TestChunkRamp: after a sync the first two batches are a quarter and a half of a
// chunk, at least minGraphSize launches.
func TestChunkRamp(t *testing.T) {
	b := &Backend{chunk: 64}
	for since, want := range []int{16, 32, 64, 64} {
		b.sinceSync = since
		if got := b.chunkNow(); got != want {
			t.Errorf("chunk 64, %d flushes since the sync: %d, want %d", since, got, want)
		}
	}
	b.chunk, b.sinceSync = 16, 0
	if got := b.chunkNow(); got != minGraphSize {
		t.Errorf("chunk 16 after a sync: %d, want %d", got, minGraphSize)
	}
	b.noRamp = true
	if got := b.chunkNow(); got != 16 {
		t.Errorf("chunk 16 without the ramp: %d", got)
	}
}

// TestFuseQueueArgs: the fused launches' grids and arguments.
func TestFuseQueueArgs(t *testing.T) {
	q := newQueueOnly(false)
	x1, x2, pos := q.f32(3, 32*128), q.f32(3, 8*128), q.tensor(quant.I32, 3, 1)
	q.RoPE(x1, pos, backend.RoPE{Dims: 128, HeadDim: 128, Base: 500000})
	q.RoPE(x2, pos, backend.RoPE{Dims: 128, HeadDim: 128, Base: 500000})
	// grid (3 rows, 32 and 8 heads in groups of ropeHeads), 128 threads, 128 floats
	// of table
	nb1, nb2 := uint32((32+ropeHeads-1)/ropeHeads), uint32((8+ropeHeads-1)/ropeHeads)
	if d := q.queue.dims; !slices.Equal([]uint32{uint32(d[0]), uint32(d[1]), uint32(d[3]), uint32(d[4])}, []uint32{3, nb1 + nb2, 128, 512}) {
		t.Errorf("rope2_f32 dims %v", d)
	}
	a := q.queue.args
	if a[0] != x1.ptr || a[1] != 32*128 || a[2] != uint64(nb1) || a[3] != x2.ptr || a[4] != 8*128 || a[5] != ropeHeads || a[6] != pos.ptr || len(a) != 17 {
		t.Errorf("rope2_f32 args %v", a)
	}
	q.names()

	kc, vc, k, v, ids := q.tensor(quant.F16, 16, 1024), q.f32(16, 300), q.f32(2, 1024), q.f32(2, 300), q.tensor(quant.I32, 2, 1)
	q.SetRows(kc, k, ids)
	q.SetRows(vc, v, ids)
	if d := q.queue.dims; d[0] != 4+2 || d[1] != 2 {
		t.Errorf("set_rows2 dims %v", d)
	}
	if a := q.queue.args; !slices.Equal(a, []uint64{kc.ptr, 1, k.ptr, 1024, 4, vc.ptr, 0, v.ptr, 300, ids.ptr}) {
		t.Errorf("set_rows2 args %v", a)
	}
	q.names()

	// RoPE of Q and K, then both cache writes: one rope2_set, its grid the rotation's
	// plus V's copy blocks, its arguments rope2_f32's then the caches'.
	rq, rk, rv, rp := q.f32(2, 32*128), q.f32(2, 8*128), q.f32(2, 8*128), q.tensor(quant.I32, 2, 1)
	rkc, rvc := q.tensor(quant.F16, 16, 8*128), q.f32(16, 8*128)
	rope := backend.RoPE{Dims: 128, HeadDim: 128, Base: 500000}
	q.RoPE(rq, rp, rope)
	q.RoPE(rk, rp, rope)
	q.SetRows(rkc, rk, rp)
	q.SetRows(rvc, rv, rp)
	if d := q.queue.dims; len(d) != 5 || d[0] != 2 || uint32(d[1]) != nb1+nb2+4 || d[3] != 128 || d[4] != 512 {
		t.Errorf("rope2_set dims %v", d)
	}
	if a := q.queue.args; len(a) != 25 || a[0] != rq.ptr || a[3] != rk.ptr || a[6] != rp.ptr ||
		!slices.Equal(a[17:], []uint64{rkc.ptr, 1, rp.ptr, rvc.ptr, 0, rv.ptr, 8 * 128, 4}) {
		t.Errorf("rope2_set args %v", a)
	}
	q.names()

	s, aa, bb, w := q.f32(2, 4096), q.f32(2, 4096), q.f32(2, 4096), q.f32(1, 4096)
	q.Add(s, aa, bb)
	q.RMSNorm(aa, s, w, 1e-5)
	if d := q.queue.dims; d[0] != 2 || d[1] != 1 || d[3] != addNormThreads || d[4] != 4*4096 {
		t.Errorf("add_rms_norm dims %v", d)
	}
	if a := q.queue.args; !slices.Equal(a, []uint64{s.ptr, aa.ptr, bb.ptr, aa.ptr, w.ptr, 4096, f32(1e-5)}) {
		t.Errorf("add_rms_norm args %v", a)
	}
}

// TestFuseQueueHazards: patterns that are not exact are left unfused.
func TestFuseQueueHazards(t *testing.T) {
	r := backend.RoPE{Dims: 64, HeadDim: 64, Base: 10000}
	cases := []struct {
		name string
		ops  func(q *queueOnly)
		want []string
	}{
		{"rope of one tensor twice", func(q *queueOnly) {
			x, p := q.f32(2, 256), q.tensor(quant.I32, 2, 1)
			q.RoPE(x, p, r)
			q.RoPE(x, p, r)
		}, []string{"rope_f32", "rope_f32"}},
		{"rope of a view of the first", func(q *queueOnly) {
			x, p := q.f32(2, 256), q.tensor(quant.I32, 1, 1)
			q.RoPE(q.View(x, 0, 1), p, r)
			q.RoPE(q.View(x, 1, 1), p, r)
		}, []string{"rope2_f32"}},
		{"rope with other positions", func(q *queueOnly) {
			x, y, p, p2 := q.f32(2, 256), q.f32(2, 128), q.tensor(quant.I32, 2, 1), q.tensor(quant.I32, 2, 1)
			q.RoPE(x, p, r)
			q.RoPE(y, p2, r)
		}, []string{"rope_f32", "rope_f32"}},
		{"rope with another base", func(q *queueOnly) {
			x, y, p := q.f32(2, 256), q.f32(2, 128), q.tensor(quant.I32, 2, 1)
			r2 := r
			r2.Base = 500000
			q.RoPE(x, p, r)
			q.RoPE(y, p, r2)
		}, []string{"rope_f32", "rope_f32"}},
		{"rope with an op between", func(q *queueOnly) {
			x, y, p := q.f32(2, 256), q.f32(2, 256), q.tensor(quant.I32, 2, 1)
			q.RoPE(x, p, r)
			q.Add(y, y, y)
			q.RoPE(y, p, r)
		}, []string{"rope_f32", "add_f32", "rope_f32"}},
		{"set_rows into one cache twice", func(q *queueOnly) {
			c, k, v, ids := q.tensor(quant.F16, 8, 64), q.f32(2, 64), q.f32(2, 64), q.tensor(quant.I32, 2, 1)
			q.SetRows(c, k, ids)
			q.SetRows(c, v, ids)
		}, []string{"set_rows", "set_rows"}},
		{"set_rows from the first's cache", func(q *queueOnly) {
			c, c2, k, ids := q.f32(8, 64), q.tensor(quant.F16, 8, 64), q.f32(2, 64), q.tensor(quant.I32, 2, 1)
			q.SetRows(c, k, ids)
			q.SetRows(c2, q.View(c, 0, 2), ids)
		}, []string{"set_rows", "set_rows"}},
		{"set_rows into the first's source", func(q *queueOnly) {
			c, k, v, ids := q.f32(8, 64), q.f32(8, 64), q.f32(2, 64), q.tensor(quant.I32, 2, 1)
			q.SetRows(c, q.View(k, 0, 2), ids)
			q.SetRows(k, v, ids)
		}, []string{"set_rows", "set_rows"}},
		{"set_rows with other ids", func(q *queueOnly) {
			c, c2, k, ids, ids2 := q.f32(8, 64), q.f32(8, 64), q.f32(2, 64), q.tensor(quant.I32, 2, 1), q.tensor(quant.I32, 2, 1)
			q.SetRows(c, k, ids)
			q.SetRows(c2, k, ids2)
		}, []string{"set_rows", "set_rows"}},
		{"add broadcast", func(q *queueOnly) {
			s, a, b, w := q.f32(3, 256), q.f32(3, 256), q.f32(1, 256), q.f32(1, 256)
			q.Add(s, a, b)
			q.RMSNorm(a, s, w, 1e-5)
		}, []string{"add_f32", "rms_norm"}},
		{"norm of another tensor", func(q *queueOnly) {
			s, a, b, w := q.f32(3, 256), q.f32(3, 256), q.f32(3, 256), q.f32(1, 256)
			q.Add(s, a, b)
			q.RMSNorm(s, a, w, 1e-5)
		}, []string{"add_f32", "rms_norm"}},
		{"norm of the sum's first rows", func(q *queueOnly) {
			s, a, b, w, n := q.f32(3, 256), q.f32(3, 256), q.f32(3, 256), q.f32(1, 256), q.f32(2, 256)
			q.Add(s, a, b)
			q.RMSNorm(n, q.View(s, 0, 2), w, 1e-5)
		}, []string{"add_f32", "rms_norm"}},
		{"norm into rows shifted from the sum's", func(q *queueOnly) {
			all, a, b, w := q.f32(4, 256), q.f32(3, 256), q.f32(3, 256), q.f32(1, 256)
			s := q.View(all, 0, 3)
			q.Add(s, a, b)
			q.RMSNorm(q.View(all, 1, 3), s, w, 1e-5)
		}, []string{"add_f32", "rms_norm"}},
		{"norm into rows shifted from an operand's", func(q *queueOnly) {
			all, s, b, w := q.f32(4, 256), q.f32(3, 256), q.f32(3, 256), q.f32(1, 256)
			a := q.View(all, 0, 3)
			q.Add(s, a, b)
			q.RMSNorm(q.View(all, 1, 3), s, w, 1e-5)
		}, []string{"add_f32", "rms_norm"}},
		{"norm weight in the sum", func(q *queueOnly) {
			s, a, b := q.f32(3, 256), q.f32(3, 256), q.f32(3, 256)
			q.Add(s, a, b)
			q.RMSNorm(a, s, q.View(s, 2, 1), 1e-5)
		}, []string{"add_f32", "rms_norm"}},
		{"norm of a row too wide", func(q *queueOnly) {
			s, a, b, w := q.f32(1, 8448), q.f32(1, 8448), q.f32(1, 8448), q.f32(1, 8448)
			q.Add(s, a, b)
			q.RMSNorm(a, s, w, 1e-5)
		}, []string{"add_f32", "rms_norm"}},
		{"norm after a Mul", func(q *queueOnly) {
			s, a, b, w := q.f32(3, 256), q.f32(3, 256), q.f32(3, 256), q.f32(1, 256)
			q.Mul(s, a, b)
			q.RMSNorm(a, s, w, 1e-5)
		}, []string{"mul_f32", "rms_norm"}},
		{"set_rows of another tensor than the rotated K", func(q *queueOnly) {
			x, k, v, p := q.f32(2, 256), q.f32(2, 128), q.f32(2, 128), q.tensor(quant.I32, 2, 1)
			kc, vc := q.tensor(quant.F16, 8, 128), q.tensor(quant.F16, 8, 128)
			q.RoPE(x, p, r)
			q.RoPE(k, p, r)
			q.SetRows(vc, v, p)
			q.SetRows(kc, k, p)
		}, []string{"rope2_f32", "set_rows2"}},
		{"set_rows of the rotated K into Q's memory", func(q *queueOnly) {
			x, k, p := q.f32(2, 128), q.f32(2, 128), q.tensor(quant.I32, 2, 1)
			q.RoPE(x, p, r)
			q.RoPE(k, p, r)
			q.SetRows(x, k, p)
		}, []string{"rope2_f32", "set_rows"}},
		{"V with other ids than K", func(q *queueOnly) {
			x, k, v, p, p2 := q.f32(2, 256), q.f32(2, 128), q.f32(2, 128), q.tensor(quant.I32, 2, 1), q.tensor(quant.I32, 2, 1)
			kc, vc := q.tensor(quant.F16, 8, 128), q.tensor(quant.F16, 8, 128)
			q.RoPE(x, p, r)
			q.RoPE(k, p, r)
			q.SetRows(kc, k, p)
			q.SetRows(vc, v, p2)
		}, []string{"rope2_set", "set_rows"}},
		{"V into the K cache", func(q *queueOnly) {
			x, k, v, p := q.f32(2, 256), q.f32(2, 128), q.f32(2, 128), q.tensor(quant.I32, 2, 1)
			kc := q.tensor(quant.F16, 8, 128)
			q.RoPE(x, p, r)
			q.RoPE(k, p, r)
			q.SetRows(kc, k, p)
			q.SetRows(kc, v, p)
		}, []string{"rope2_set", "set_rows"}},
		{"norm in place after an in-place add", func(q *queueOnly) {
			a, b, w := q.f32(3, 256), q.f32(3, 256), q.f32(1, 256)
			q.Add(a, a, b)
			q.RMSNorm(a, a, w, 1e-5)
		}, []string{"add_rms_norm"}},
	}
	for _, c := range cases {
		q := newQueueOnly(false)
		q.kernels["mul_f32"] = &kernel{name: "mul_f32"}
		c.ops(q)
		wantQueue(t, c.name, q.names(), c.want...)
	}
}

// TestFuseQueueSwiGLUQ8: SwiGLU then a product of Q5_0 weights (Q8_0 activations: a
// mixture of experts' down experts) queues swiglu_q8 with the rounding's output and
// stride, one row or a batch (not past a view's row stride), and with fusion off the
// separate kernels.
func TestFuseQueueSwiGLUQ8(t *testing.T) {
	const k, m = 1408, 64
	for _, rows := range []int{1, 8} {
		for _, off := range []bool{false, true} {
			q := newQueueOnly(off)
			g, u, d, w := q.f32(rows, k), q.f32(rows, k), q.f32(rows, m), q.tensor(quant.Q5_0, m, k)
			q.SwiGLU(g, g, u)
			q.MatMul(d, w, g)
			nx := map[int]int{1: 1, 8: 8}[rows]
			if off {
				wantQueue(t, fmt.Sprintf("%d rows, unfused", rows), q.names(), "swiglu_f32", "quant_q8", mmvName(quant.Q5_0, nx))
				continue
			}
			n := len(q.queue.names)
			args := slices.Clone(q.queue.args[:len(q.queue.args)-int(q.queue.nargs[n-1])])
			wantQueue(t, fmt.Sprintf("%d rows", rows), q.names(), "swiglu_q8", mmvName(quant.Q5_0, nx))
			if want := []uint64{g.ptr, g.ptr, u.ptr, k, 2 << 40, uint64(actStride(quant.Q8_0, k)), 0}; !slices.Equal(args, want) {
				t.Errorf("%d rows: swiglu_q8 args %v, want %v", rows, args, want)
			}
		}
	}
}

// TestFuseQueueAddNormQ8: Add, RMSNorm of the sum, then a product of Q5_0 weights (Q8_0
// activations) queues add_rms_norm_q8 with the add's and norm's arguments, then the
// rounding's output, stride and format (0: Q8_0); with fusion off the three kernels.
func TestFuseQueueAddNormQ8(t *testing.T) {
	const k, m = 1408, 64
	for _, off := range []bool{false, true} {
		q := newQueueOnly(off)
		s, a, b, n, w, d, wq := q.f32(1, k), q.f32(1, k), q.f32(1, k), q.f32(1, k), q.f32(1, k), q.f32(1, m), q.tensor(quant.Q5_0, m, k)
		q.Add(s, a, b)
		q.RMSNorm(n, s, w, 1e-5)
		q.MatMul(d, wq, n)
		if off {
			wantQueue(t, "unfused", q.names(), "add_f32", "rms_norm", "quant_q8", mmvName(quant.Q5_0, 1))
			continue
		}
		args := slices.Clone(q.queue.args[:len(q.queue.args)-int(q.queue.nargs[1])])
		wantQueue(t, "fused", q.names(), "add_rms_norm_q8", mmvName(quant.Q5_0, 1))
		want := []uint64{s.ptr, a.ptr, b.ptr, n.ptr, w.ptr, k, f32(1e-5), 2 << 40, uint64(actStride(quant.Q8_0, k)), 0}
		if !slices.Equal(args, want) {
			t.Errorf("add_rms_norm_q8 args %v, want %v", args, want)
		}
	}
}

// TestFuseQueueRoPESet: RoPE of one tensor then SetRows of it queues rope2_set with no
// Q blocks (its Q pointer, width and block count 0), the RoPE's parameters, the
// destination, its type and the row ids, and no V; with fusion off the two kernels.
func TestFuseQueueRoPESet(t *testing.T) {
	for _, off := range []bool{false, true} {
		q := newQueueOnly(off)
		x, d, pos, ids := q.f32(16, 64), q.tensor(quant.F16, 144, 64), q.tensor(quant.I32, 16, 1), q.tensor(quant.I32, 16, 1)
		q.RoPE(x, pos, backend.RoPE{Dims: 64, HeadDim: 64, Base: 10000})
		if off {
			q.SetRows(d, x, ids)
			wantQueue(t, "unfused", q.names(), "rope_f32", "set_rows")
			continue
		}
		ropeArgs := slices.Clone(q.queue.args)
		q.SetRows(d, x, ids)
		args := slices.Clone(q.queue.args)
		wantQueue(t, "fused", q.names(), "rope2_set")
		want := append([]uint64{0, 0, 0, x.ptr, 64, ropeHeads, pos.ptr}, ropeArgs[3:]...)
		want = append(want, d.ptr, 1, ids.ptr, 0, 0, 0, 0, 0)
		if !slices.Equal(args, want) {
			t.Errorf("rope2_set args %v, want %v", args, want)
		}
	}
}

// TestFuseQueueGetRowsQ8K: GetRows from an F32 table into rows that a MatMul then rounds
// to Q8_K as rows of another width queues get_rows_q8_k (x, the table and its stride,
// the ids, the gathered width, x's width, the rounding's output and stride); not when
// the table overlaps x, nor with fusion off.
func TestFuseQueueGetRowsQ8K(t *testing.T) {
	for _, c := range []struct {
		name         string
		off, overlap bool
	}{{"fused", false, false}, {"unfused", true, false}, {"table overlaps", false, true}} {
		q := newQueueOnly(c.off)
		x, d, w, ids := q.f32(8, 512), q.f32(8, 64), q.tensor(quant.Q4_K, 64, 512), q.tensor(quant.I32, 64, 1)
		table := q.f32(72, 64)
		if c.overlap {
			table = &tensor{typ: quant.F32, rows: 72, cols: 64, stride: 256, ptr: x.ptr + 256, size: 72 * 256}
		}
		q.GetRows(q.Reshape(x, 64, 64), table, ids)
		q.MatMul(d, w, x)
		got := slices.Clone(q.queue.args[:11])
		names := q.names()
		if c.off || c.overlap {
			wantQueue(t, c.name, names, "get_rows_f32", "quant_q8_k", mmvName(quant.Q4_K, 8))
			continue
		}
		wantQueue(t, c.name, names, "get_rows_q8_k", mmvName(quant.Q4_K, 8))
		want := []uint64{x.ptr, table.ptr, 256, ids.ptr, 64, 512, 1 << 40, uint64(actStride(quant.Q8_K, 512)), 0, 0, 0}
		if !slices.Equal(got[:8], want[:8]) {
			t.Errorf("get_rows_q8_k args %v, want %v", got[:8], want[:8])
		}
	}
}
