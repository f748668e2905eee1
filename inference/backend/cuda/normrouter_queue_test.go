package cuda

import (
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestBranchChained (no GPU): a DeepSeek-V2 MoE layer's decode row as the model queues
// it with NormRouter: the router's logits beside the residual add and norm (branch A),
// then the shared experts beside the routed ones (branch B). A's join is B's main run's
// first launch (which reads both the norm's row and the logits), not B's side's first;
// B forks at the norm. Without NormRouter (declined: $EMBER_CUDA_NO_NORM_ROUTER) A's
// side is empty and the graph is B's alone.
func TestBranchChained(t *testing.T) {
	for _, off := range []bool{false, true} {
		q := newQueueOnly(false)
		q.kernels["mmv_f32_norm_1w"] = &kernel{name: "mmv_f32_norm_1w"}
		q.kernels["mmv_f32_1w"] = &kernel{name: "mmv_f32_1w"}
		branchQueue(q)
		q.noNR = off
		const embd, ffn, X = 2048, 1024, 64
		x0, x1, x, res, sum, xn := q.f32(1, embd), q.f32(1, embd), q.f32(1, embd), q.f32(1, embd), q.f32(1, embd), q.f32(1, embd)
		nw, router, logits := q.f32(1, embd), q.f32(X, embd), q.f32(1, X)
		router.weight = true // nw as the model's loader makes it (New): not a Weight
		g, u, so, m1, out := q.f32(1, ffn), q.f32(1, ffn), q.f32(1, embd), q.f32(1, embd), q.f32(1, embd)
		wg, wu, wd, wa := q.tensor(quant.Q4_K, ffn, embd), q.tensor(quant.Q4_K, ffn, embd), q.tensor(quant.Q4_K, embd, ffn), q.tensor(quant.Q4_K, embd, embd)
		q.Add(x, x0, x1) // the fork: the attention's last launch
		have := false
		q.Beside(1, func() { have = q.NormRouter(logits, x, res, nw, router, 1e-6) }, func() {
			q.Add(sum, x, res)
			q.RMSNorm(xn, sum, nw, 1e-6)
		})
		q.Beside(1, func() {
			q.MatMulShared(xn, []backend.Proj{{Dst: g, W: wg}, {Dst: u, W: wu}})
			q.SwiGLU(g, g, u)
			q.MatMul(so, wd, g)
		}, func() {
			if !have {
				q.MatMul(logits, router, xn)
			}
			q.MatMul(m1, wa, xn)
		})
		q.Add(out, m1, so)
		mm := mmvName(quant.Q4_K, 1)
		if have == off {
			t.Fatalf("off %v: NormRouter took the row: %v", off, have)
		}
		p0, p1, _, _, ok := q.queue.dag(defaultBranchEdges)
		if !ok {
			t.Fatalf("off %v: no graph with branches", off)
		}
		got := make([][2]int, len(p0))
		for i := range p0 {
			got[i] = [2]int{int(p0[i]), int(p1[i])}
		}
		if !off {
			wantQueue(t, "chained", slices.Clone(q.queue.names), "add_f32", "mmv_f32_norm_1w", "add_rms_norm_q8_k_1", "mmv_multi",
				"swiglu_q8_k", mm, mm, "add_f32")
			if want := []branch{{fork: 0, main: 2, join: 6}, {fork: 2, main: 6, join: 7}}; !slices.Equal(q.queue.brs, want) {
				t.Fatalf("branches %v, want %v", q.queue.brs, want)
			}
			want := [][2]int{{-1, -1}, {0, -1}, {0, -1}, {2, -1}, {3, -1}, {4, -1}, {2, 1}, {6, 5}}
			if !slices.Equal(got, want) {
				t.Errorf("edges (p0, p1) %v, want %v", got, want)
			}
			continue
		}
		wantQueue(t, "declined", slices.Clone(q.queue.names), "add_f32", "add_rms_norm_q8_k_1", "mmv_multi",
			"swiglu_q8_k", mm, "mmv_f32_1w", mm, "add_f32")
		want := [][2]int{{-1, -1}, {0, -1}, {1, -1}, {2, -1}, {3, -1}, {1, -1}, {5, -1}, {6, 4}}
		if !slices.Equal(got, want) {
			t.Errorf("declined: edges (p0, p1) %v, want %v", got, want)
		}
	}
}
