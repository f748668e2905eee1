package cuda

import (
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestMMFQueue: a decode step's shared Q/K/V products of 64 rows (Q4_K, Q4_K, Q6_K)
// convert the activation rows to f16 once (act_f16p) for three mmf launches, each
// followed by its K splits' reduce; 32 rows stay on mmq's 32-row tiles, 256 on mmq's
// 64-row ones, and $EMBER_CUDA_MMF=0 (mmfOff) keeps 64 rows on mmq too.
func TestMMFQueue(t *testing.T) {
	const E = 4096
	for _, c := range []struct {
		n    int
		mode mmfMode
		want []string
	}{
		{64, mmfAuto, []string{"quant_q8_k", "act_f16p", "mmf_q4_k", "mmq_reduce", "mmf_q4_k", "mmq_reduce", "mmf_q6_k", "mmq_reduce"}},
		{32, mmfAuto, []string{"quant_q8_k", "mmq32_q4_k", "mmq_reduce", "mmq32_q4_k", "mmq_reduce", "mmq32_q6_k", "mmq_reduce"}},
		{256, mmfAuto, []string{"quant_q8_k", "mmq_q4_k", "mmq_reduce", "mmq_q4_k", "mmq_reduce", "mmq_q6_k", "mmq_reduce"}},
		{64, mmfOff, []string{"quant_q8_k", "mmq_q4_k", "mmq_reduce", "mmq_q4_k", "mmq_reduce", "mmq_q6_k", "mmq_reduce"}},
		{16, mmfAll, []string{"quant_q8_k", "act_f16p", "mmf_q4_k", "mmq_reduce", "mmf_q4_k", "mmq_reduce", "mmf_q6_k", "mmq_reduce"}},
	} {
		q := newMMQQueue("quant_q8_k", "act_f16p", "mmf_q4_k", "mmf_q6_k", "mmq_reduce", "mmq_q4_k", "mmq_q6_k", "mmq32_q4_k", "mmq32_q6_k")
		q.mmfMode = c.mode
		x := q.tensor(t, quant.F32, c.n, E)
		wq, wk, wv := q.tensor(t, quant.Q4_K, E, E), q.tensor(t, quant.Q4_K, 1024, E), q.tensor(t, quant.Q6_K, 1024, E)
		dq, dk, dv := q.tensor(t, quant.F32, c.n, E), q.tensor(t, quant.F32, c.n, 1024), q.tensor(t, quant.F32, c.n, 1024)
		q.MatMulShared(x, []backend.Proj{{Dst: dq, W: wq}, {Dst: dk, W: wk}, {Dst: dv, W: wv}})
		ls := q.launches()
		if got := q.names(); !slices.Equal(got, c.want) {
			t.Errorf("%d rows, mode %d: queued %v, want %v", c.n, c.mode, got, c.want)
			continue
		}
		for _, l := range ls {
			if l.name == "mmf_q4_k" && l.sm != mmfSmem(quant.Q4_K) || l.name == "mmf_q6_k" && l.sm != mmfSmem(quant.Q6_K) {
				t.Errorf("%s: %d bytes of shared memory, want %d", l.name, l.sm, mmfSmem(quant.Q6_K))
			}
			if l.name == "act_f16p" && (l.gx != 1 || l.gy != c.n) {
				t.Errorf("act_f16p grid %dx%d, want 1x%d", l.gx, l.gy, c.n)
			}
		}
	}
	if mmfSmem(quant.Q4_K) > mmqSmemMax/2-1024 {
		t.Errorf("mmf_q4_k's %d bytes of shared memory leave no room for two blocks an SM", mmfSmem(quant.Q4_K))
	}
}
