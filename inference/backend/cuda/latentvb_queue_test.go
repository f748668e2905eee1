package cuda

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestVBQueue (no GPU): one token's latent attention (attention_short576w, 16 head
// rows), attn_v_b's per-head products (Q4_K weights, 128 x 512 a head) and the output
// projection of their outputs side by side queue as attention_vb576 and the
// projection's mat-vec, the rounding of both joined (the attention's own Q8_K output
// left 0: the kernel keeps those rows in shared memory); with the switch off, the chain.
func TestVBQueue(t *testing.T) {
	for _, off := range []bool{false, true} {
		q := newQueueOnly(false)
		q.vbOn = !off
		for _, n := range []string{"attention_short576w", "attention_vb576", "mmv_idw_q4_k"} {
			q.kernels[n] = &kernel{name: n}
		}
		q.dec.smem = map[string]int{"attention_vb576": 1 << 20}
		const H, E = 16, 2048
		lat, out, o := q.f32(H, vbCols), q.f32(H, vbRows), q.f32(1, E)
		wv := q.tensor(quant.Q4_K, H*vbRows, vbCols)
		wv.weight = true
		wo := q.tensor(quant.Q4_K, E, H*vbRows)
		args := make([]uint64, 24)
		args[0] = lat.ptr
		q.launch("attention_short576w", H, 1, shortWideThreads, 200<<10, args...)
		q.markAttention("attention_short576w", args, H, 1, 200<<10, shortWideThreads, 1, 1, vbCols, false, false)
		groups := make([]backend.Group, H)
		for h := range H {
			w := &tensor{typ: quant.Q4_K, rows: vbRows, cols: vbCols, stride: wv.stride, ptr: wv.ptr + uint64(h*vbRows*wv.stride), ofWeight: true}
			d := &tensor{typ: quant.F32, rows: 1, cols: vbRows, stride: 4 * vbRows, ptr: out.ptr + uint64(4*h*vbRows), view: true}
			groups[h] = backend.Group{Dst: d, W: w, Row0: h}
		}
		q.MatMulGroups(lat, groups)
		q.MatMul(o, wo, q.Reshape(out, 1, E))
		if off {
			wantQueue(t, "off", q.queue.names, "attention_short576w", "mmv_idw_q4_k", "quant_q8_k", mmvName(quant.Q4_K, 1))
			continue
		}
		wantQueue(t, "on", q.queue.names, "attention_vb576", mmvName(quant.Q4_K, 1))
		if len(q.queue.names) == 2 {
			a := q.queue.argsOf(0)
			if len(a) != 30 || a[22] != 0 || a[23] != 0 || a[24] != wv.ptr || a[25] != uint64(wv.stride) || a[26] != uint64(vbRows*wv.stride) ||
				a[27] != out.ptr || a[28] != vbRows || a[29] == 0 {
				t.Errorf("attention_vb576's arguments %v", a)
			}
		}
	}
}
