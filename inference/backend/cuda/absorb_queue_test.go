package cuda

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestAbsorbQueue (no GPU): with $EMBER_CUDA_ABSORB a decode row's q_nope mat-vec (Q4_K,
// 16 heads x 128 rows) and attn_k_b's per-head products (Q8_0 weights, 512 x 128 a head,
// into the latent dims of [rope 64 | latent 512] rows) queue as absorb_q4_k_q8_0 in the
// mat-vec's place, with its ten arguments (the mat-vec's weights and Q8_K row, the
// heads' matrices and output rows); heads that are not weights, another latent width,
// and the switch off keep the chain (the mat-vec, quant_q8, mmv_idw_q8_0 or mmv_id).
func TestAbsorbQueue(t *testing.T) {
	mm := mmvName(quant.Q4_K, 1)
	idw, id := "mmv_idw_"+suffix[quant.Q8_0], "mmv_id_"+suffix[quant.Q8_0]
	cases := []struct {
		name      string
		ql        int
		weights   bool
		off       bool
		want      []string
		fusedArgs bool
	}{
		{"fused", 512, true, false, []string{"quant_q8_k", "absorb_q4_k_q8_0"}, true},
		{"off", 512, true, true, []string{"quant_q8_k", mm, "quant_q8", idw}, false},
		{"not weights", 512, false, false, []string{"quant_q8_k", mm, "quant_q8", id}, false},
		{"latent 256", 256, true, false, []string{"quant_q8_k", mm, "quant_q8", idw}, false},
	}
	for _, c := range cases {
		q := newQueueOnly(false)
		q.absorbOn = !c.off
		for _, n := range []string{"absorb_q4_k_q8_0", idw, id} {
			q.kernels[n] = &kernel{name: n}
		}
		const H, E, rope = 16, 2048, 64
		cur, qn := q.f32(1, E), q.f32(1, H*absorbQN)
		wq := q.tensor(quant.Q4_K, H*absorbQN, E)
		kb := q.tensor(quant.Q8_0, H*c.ql, absorbQN)
		kb.stride = absorbQN / 32 * 34
		rows := q.f32(H, rope+c.ql)
		q.MatMul(qn, wq, cur)
		x := q.Reshape(qn, H, absorbQN)
		groups := make([]backend.Group, H)
		var d0 *tensor
		for h := range H {
			w := &tensor{typ: quant.Q8_0, rows: c.ql, cols: absorbQN, stride: kb.stride, ptr: kb.ptr + uint64(h*c.ql*kb.stride),
				ofWeight: c.weights}
			d := &tensor{typ: quant.F32, rows: 1, cols: c.ql, stride: 4 * c.ql, ptr: rows.ptr + uint64(4*(h*(rope+c.ql)+rope)), view: true}
			if h == 0 {
				d0 = d
			}
			groups[h] = backend.Group{Dst: d, W: w, Row0: h}
		}
		q.MatMulGroups(x, groups)
		wantQueue(t, c.name, q.queue.names, c.want...)
		if c.fusedArgs && len(q.queue.names) == 2 {
			a := q.queue.argsOf(1)
			if len(a) != 10 || a[0] != wq.ptr || a[3] != E || a[4] != qn.ptr || a[5] != kb.ptr || a[6] != uint64(kb.stride) ||
				a[7] != uint64(c.ql*kb.stride) || a[8] != d0.ptr || a[9] != uint64(rope+c.ql) {
				t.Errorf("%s: absorb_q4_k_q8_0's arguments %v", c.name, a)
			}
		}
	}
}
