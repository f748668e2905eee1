package cuda

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestFFNQueue (no GPU): a decode row's gate and up (Q4_K), SwiGLU and down (Q4_K or
// Q6_K) queue as the input's rounding and one ffn launch; a hidden width that is not a
// multiple of 512, a down product of another type, two rows, the FFN on a branch's side
// run and $EMBER_CUDA_FFN unset keep the chain.
func TestFFNQueue(t *testing.T) {
	mm := mmvName(quant.Q4_K, 1)
	cases := []struct {
		name      string
		f, rows   int
		down      quant.Type
		side, off bool
		want      []string
	}{
		{"q4_k", 1024, 1, quant.Q4_K, false, false, []string{"quant_q8_k", "ffn_q4_k"}},
		{"q6_k", 1024, 1, quant.Q6_K, false, false, []string{"quant_q8_k", "ffn_q6_k"}},
		{"width", 1280, 1, quant.Q4_K, false, false, []string{"quant_q8_k", "mmv_multi", "swiglu_q8_k", mm}},
		{"q5_0 down", 1024, 1, quant.Q5_0, false, false, []string{"quant_q8_k", "mmv_multi", "swiglu_q8", mmvName(quant.Q5_0, 1)}},
		{"off", 1024, 1, quant.Q4_K, false, true, []string{"quant_q8_k", "mmv_multi", "swiglu_q8_k", mm}},
		{"side", 1024, 1, quant.Q4_K, true, false, []string{"add_f32", "quant_q8_k", "mmv_multi", "swiglu_q8_k", mm, "add_f32"}},
		{"two rows", 1024, 2, quant.Q4_K, false, false, nil},
	}
	for _, c := range cases {
		q := newQueueOnly(false)
		q.ffnOn = !c.off
		q.mvsc.off = true
		q.ffnPart = scratch{ptr: 5 << 40, size: 1 << 30}
		for _, n := range []string{"ffn_q4_k", "ffn_q6_k", "quant_q8", mmvName(quant.Q6_K, 1), mmvName(quant.Q4_K, 2), "swiglu_q8_k"} {
			q.kernels[n] = &kernel{name: n}
		}
		const embd = 512
		x, g, u, out := q.f32(c.rows, embd), q.f32(c.rows, c.f), q.f32(c.rows, c.f), q.f32(c.rows, embd)
		wg, wu, wd := q.tensor(quant.Q4_K, c.f, embd), q.tensor(quant.Q4_K, c.f, embd), q.tensor(c.down, embd, c.f)
		ffn := func() {
			q.MatMulShared(x, []backend.Proj{{Dst: g, W: wg}, {Dst: u, W: wu}})
			q.SwiGLU(g, g, u)
			q.MatMul(out, wd, g)
		}
		if c.side {
			branchQueue(q)
			a, y := q.f32(1, embd), q.f32(1, embd)
			q.Add(a, y, y)
			q.Beside(1, ffn, func() { q.Add(y, a, a) })
		} else {
			ffn()
		}
		if c.want == nil { // whatever the rows' products are, not ffn
			for _, n := range q.queue.names {
				if n == "ffn_q4_k" || n == "ffn_q6_k" {
					t.Errorf("%s: queued %v", c.name, q.queue.names)
				}
			}
			if len(q.queue.names) == 0 {
				t.Errorf("%s: nothing queued", c.name)
			}
			continue
		}
		wantQueue(t, c.name, q.queue.names, c.want...)
	}
}
