package cuda

import (
	"slices"
	"testing"

	"ember/inference/quant"
)

func TestRepFor(t *testing.T) {
	for _, c := range []struct{ blocks, slots, want int }{
		{1056, 396, 3}, {528, 396, 2}, {396, 396, 1}, {256, 396, 1}, {1056, 0, 1}, {1, 1, 1}, {397, 396, 2},
	} {
		if got := repFor(c.blocks, c.slots); got != c.want {
			t.Errorf("repFor(%d, %d) = %d, want %d", c.blocks, c.slots, got, c.want)
		}
	}
}

// TestIDRepQueue: with $EMBER_CUDA_ID_REP's count, a token's Q4_K gate and up experts
// launch mmv_id with that many row blocks a block (its last argument), the row blocks
// of each product (nrb and the second product's nrb2) and the grid divided by it,
// rounded up; other types take one.
func TestIDRepQueue(t *testing.T) {
	t.Setenv(IDRepEnv, "x")
	if _, err := idRepFromEnv(); err == nil {
		t.Error("EMBER_CUDA_ID_REP=x accepted")
	}
	t.Setenv(IDRepEnv, "3")
	n, err := idRepFromEnv()
	if err != nil || n != 3 {
		t.Fatalf("EMBER_CUDA_ID_REP=3: %d, %v", n, err)
	}
	const E, X, F, k = 256, 8, 1408, 6
	q := newMMQQueue("quant_q8_k", "quant_q8", "mmv_id_q4_k", "moe_topk", "swiglu_f32", "swiglu_q8_k", "swiglu_q8", "moe_sum", "mmv_id_q8_0")
	q.fuse.cfg = fuseCfg{read: true}
	q.idRepN = n
	xe, logits := q.tensor(t, quant.F32, 1, E), q.tensor(t, quant.F32, 1, X)
	gate, up, down := q.tensor(t, quant.Q4_K, X*F, E), q.tensor(t, quant.Q4_K, X*F, E), q.tensor(t, quant.Q8_0, X*E, F)
	ids, wts := q.tensor(t, quant.I32, 1, k), q.tensor(t, quant.F32, 1, k)
	g, u, d := q.tensor(t, quant.F32, k, F), q.tensor(t, quant.F32, k, F), q.tensor(t, quant.F32, k, E)
	mo := q.tensor(t, quant.F32, 1, E)
	if !q.RoutedExperts(mo, xe, logits, gate, up, down, nil, ids, wts, g, u, d, 1, 1, false, true, 1) {
		t.Fatal("RoutedExperts declined one token")
	}
	ls := q.launches()
	names := q.names()
	if want := []string{"moe_topk", "quant_q8_k", "mmv_id_q4_k", "swiglu_q8", "mmv_id_q8_0", "moe_sum"}; !slices.Equal(names, want) {
		t.Fatalf("queued %v, want %v", names, want)
	}
	nrb := (F/rowsPerBlock(quant.Q4_K, 1, 0) + 2) / 3 // 88 row blocks in 30 blocks
	l := ls[2]
	if l.gx != nrb*k || l.gy != 2 || l.args[12] != uint64(nrb) || !slices.Equal(l.args[14:], []uint64{up.ptr, u.ptr, F, F, uint64(nrb), 3}) {
		t.Errorf("gate and up: grid %dx%d, nrb %d, second product and rep %v; want %dx2, %d, [.. %d 3]", l.gx, l.gy, l.args[12], l.args[14:], nrb*k, nrb, nrb)
	}
	if l := ls[4]; l.args[len(l.args)-1] != 1 {
		t.Errorf("Q8_0 down experts: rep %d, want 1", l.args[len(l.args)-1])
	}
}
