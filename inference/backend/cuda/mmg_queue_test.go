package cuda

import (
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// newMMGQueue is newMMQQueue with mmg loaded (on from 48 rows, for Llama-3.1-8B's FFN
// weights) on 132 SMs, and scratch for its layout, cuBLASLt's f16 rows and split counters.
func newMMGQueue(names ...string) *mmqQueue {
	q := newMMQQueue(names...)
	q.mg = mgConf{loaded: true, minRows: 48, minElems: mgMinElems, xl: scratch{ptr: 6 << 40, size: 1 << 30}}
	q.lt.xf16 = scratch{ptr: 7 << 40, size: 1 << 30}
	q.split.count = scratch{ptr: 8 << 40, size: 1 << 20}
	q.dev.SMs = 132
	return q
}

// packedWeight is a rows x cols Q4_K weight whose mmg packed copy is already made.
func (q *mmqQueue) packedWeight(t *testing.T, rows, cols int) *tensor {
	w := q.tensor(t, quant.Q4_K, rows, cols)
	w.weight, w.mgp.ptr = true, w.ptr+1<<36
	return w
}

// TestMMGQueue (no GPU): at 64 rows, Llama-3.1-8B's gate and up (14336x4096 Q4_K) over
// one rounding are one mmg_q4_k launch after one layout of the rows, with no K split;
// down (4096x14336) alone needs K splits and stays off mmg unless single products are
// on (mgConf.single), and then is one launch of 8 splits whose last blocks add the
// partial sums (the counters passed, no mmq_reduce); below mmg's rows nothing goes to it.
func TestMMGQueue(t *testing.T) {
	const n, embd, ffn = 64, 4096, 14336
	q := newMMGQueue("quant_q8_k", "act_f16", "mmg_xl", "mmg_q4_k", "mmq_reduce", "mmv_q4_k_8", "mmq_q4_k")
	gate, up, down := q.packedWeight(t, ffn, embd), q.packedWeight(t, ffn, embd), q.packedWeight(t, embd, ffn)
	x, g, u := q.tensor(t, quant.F32, n, embd), q.tensor(t, quant.F32, n, ffn), q.tensor(t, quant.F32, n, ffn)
	q.MatMulShared(x, []backend.Proj{{Dst: g, W: gate}, {Dst: u, W: up}})
	ls := q.launches()
	if names := q.names(); !slices.Equal(names, []string{"quant_q8_k", "act_f16", "mmg_xl", "mmg_q4_k"}) {
		t.Fatalf("gate and up: queued %v", names)
	}
	l := ls[3]
	if l.gx != 224 || l.gy != 1 || l.args[0] != gate.mgp.ptr || l.args[1] != up.mgp.ptr || l.args[2] != 112 || l.args[4] != g.ptr || l.args[5] != u.ptr ||
		l.args[8] != ffn || l.args[9] != ffn || l.args[10] != embd || l.args[11] != n || l.args[12] != 0 || l.args[13] != 0 {
		t.Errorf("gate and up: mmg_q4_k grid %dx%d args %v", l.gx, l.gy, l.args)
	}
	if q.mg.products != 2 || q.mg.laid != 0 {
		t.Errorf("%d products on mmg, laid-out rows %#x after MatMulShared; want 2 and none", q.mg.products, q.mg.laid)
	}

	h, d := q.tensor(t, quant.F32, n, ffn), q.tensor(t, quant.F32, n, embd)
	q.MatMul(d, down, h)
	if names := q.names(); slices.Contains(names, "mmg_q4_k") {
		t.Errorf("down, single products off: queued %v, want no mmg", names)
	}
	q.mg.single = true
	q.MatMul(d, down, h)
	ls = q.launches()
	if names := q.names(); !slices.Equal(names, []string{"quant_q8_k", "act_f16", "mmg_xl", "mmg_q4_k"}) {
		t.Fatalf("down: queued %v", names)
	}
	l = ls[3]
	if l.gx != 32 || l.gy != 8 || l.args[1] != 0 || l.args[2] != 32 || l.args[12] == 0 || l.args[13] != 8<<40 {
		t.Errorf("down: mmg_q4_k grid %dx%d args %v", l.gx, l.gy, l.args)
	}

	x2, g2 := q.tensor(t, quant.F32, 40, embd), q.tensor(t, quant.F32, 40, ffn)
	q.MatMul(g2, gate, x2)
	if names := q.names(); slices.Contains(names, "mmg_q4_k") {
		t.Errorf("40 rows: queued %v, want no mmg", names)
	}
}

// TestMGTakesOne (no GPU): with mmg on, a product of a weight of fewer than 256 columns
// (TestConformance's small F32 and Q8_0 weights on the H200) is no product for mmg and
// no division by its zero steps; the 8B shapes at 64 rows: gate (two splits) and down
// (eight) stay off it alone, a weight whose tiles fill the GPU takes it.
func TestMGTakesOne(t *testing.T) {
	q := newMMQQueue("mmg_pack_q4_k")
	q.mg = mgConf{loaded: true, minRows: 48, minElems: mgMinElems}
	q.dev.SMs = 132
	for _, c := range []struct {
		name       string
		typ        quant.Type
		rows, cols int
	}{
		{"F32 64x128", quant.F32, 64, 128},
		{"Q8_0 512x32", quant.Q8_0, 512, 32},
		{"Q4_K gate 14336x4096", quant.Q4_K, 14336, 4096},
		{"Q4_K down 4096x14336", quant.Q4_K, 4096, 14336},
		{"Q4_K output head 128256x4096", quant.Q4_K, 128256, 4096},
	} {
		w := q.tensor(t, c.typ, c.rows, c.cols)
		w.weight, w.mgp.ptr = true, w.ptr+1<<36 // a packed copy already made
		want := c.typ == quant.Q4_K && c.rows == 128256
		if got := q.mgTakesOne(w, 64); got != want {
			t.Errorf("%s: mgTakesOne %v, want %v", c.name, got, want)
		}
	}
}

// TestMMGQueueLayout (no GPU): after Add + RMSNorm, the gate and up pair on mmg is the
// fused add_rms_norm_q8_k, writing the f16 rows in mmg_xl's layout (its last arguments
// the layout scratch and -1), and mmg_q4_k; with NoLayFuseEnv's setting, the norm writes
// f16 rows for mmg_xl (act_f16 joined) and mmg_xl lays them out.
func TestMMGQueueLayout(t *testing.T) {
	const n, embd, ffn = 64, 4096, 14336
	for _, noLay := range []bool{false, true} {
		q := newMMGQueue("add_f32", "rms_norm", "add_rms_norm", "add_rms_norm_q8_k", "quant_q8_k", "act_f16", "mmg_xl", "mmg_q4_k")
		q.fuse.cfg = fuseCfg{read: true, noLay: noLay}
		gate, up := q.packedWeight(t, ffn, embd), q.packedWeight(t, ffn, embd)
		a, b, s, w := q.tensor(t, quant.F32, n, embd), q.tensor(t, quant.F32, n, embd), q.tensor(t, quant.F32, n, embd), q.tensor(t, quant.F32, 1, embd)
		g, u := q.tensor(t, quant.F32, n, ffn), q.tensor(t, quant.F32, n, ffn)
		q.Add(s, a, b)
		q.RMSNorm(a, s, w, 1e-5)
		q.MatMulShared(a, []backend.Proj{{Dst: g, W: gate}, {Dst: u, W: up}})
		ls, names := q.launches(), q.names()
		want := []string{"add_rms_norm_q8_k", "mmg_q4_k"}
		if noLay {
			want = []string{"add_rms_norm_q8_k", "mmg_xl", "mmg_q4_k"}
		}
		if !slices.Equal(names, want) {
			t.Fatalf("no layout fusion %v: queued %v, want %v", noLay, names, want)
		}
		na := len(ls[0].args)
		if h, hs := ls[0].args[na-2], int64(ls[0].args[na-1]); !noLay && (h != 6<<40 || hs != -1) || noLay && (h != 7<<40 || hs <= 0) {
			t.Errorf("no layout fusion %v: the norm's f16 rows at %#x, stride %d", noLay, h, hs)
		}
		if l := ls[len(ls)-1]; l.args[3] != 6<<40 || l.gx != 224 {
			t.Errorf("no layout fusion %v: mmg_q4_k grid %d, rows from %#x", noLay, l.gx, l.args[3])
		}
	}
}

// TestMMGSingleEnv (no GPU): single products with K splits are mmg's unless
// MMGSingleEnv is 0.
func TestMMGSingleEnv(t *testing.T) {
	for v, want := range map[string]bool{"": true, "1": true, "0": false} {
		t.Setenv(MMGSingleEnv, v)
		if c, _ := mgFromEnv(); c.single != want {
			t.Errorf("%s=%q: single %v, want %v", MMGSingleEnv, v, c.single, want)
		}
	}
}
