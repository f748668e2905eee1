package cuda_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestMoEQ5PBits (GPU): a mixture of experts whose downs are Q5_0 (widened to Q8_0 on
// the device) gives the same bits with Q5PEnv on, its downs on mmv_id_q5p over a packed
// copy that q5p_pack made on the device, as on mmv_id_q8_0 over the widened rows: one
// token and three, down widths of 3, 11 and 44 blocks (one step of mv1_q8_0's and three).
func TestMoEQ5PBits(t *testing.T) {
	t.Setenv(cuda.WidenEnv, "1") // TestMain keeps Q5_0 weights as they are
	for _, c := range []struct{ X, k, K, F int }{{8, 2, 128, 96}, {16, 4, 256, 352}, {64, 6, 256, 1408}} {
		for _, n := range []int{1, 3} {
			name := fmt.Sprintf("%d experts, %d a token, %dx%d, %d tokens", c.X, c.k, c.K, c.F, n)
			var got [2][][]uint32
			for run := range 2 {
				if run == 0 {
					t.Setenv(cuda.Q5PEnv, "1")
				} else {
					t.Setenv(cuda.Q5PEnv, "0")
				}
				be := newOrSkip(t)
				e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(11, uint64(c.F)))}
				x := e.randn(n, c.K, 1)
				router := e.weight(quant.F32, c.X, c.K)
				gate, up, down := e.weight(quant.Q8_0, c.X*c.F, c.K), e.weight(quant.Q8_0, c.X*c.F, c.K), e.weight(quant.Q5_0, c.X*c.K, c.F)
				P := n * c.k
				logits, ids, wts := e.zeros(quant.F32, n, c.X), e.zeros(quant.I32, P, 1), e.zeros(quant.F32, P, 1)
				g, u, d, dst := e.zeros(quant.F32, P, c.F), e.zeros(quant.F32, P, c.F), e.zeros(quant.F32, P, c.K), e.zeros(quant.F32, n, c.K)
				if err := be.Sync(context.Background()); err != nil {
					t.Fatal(err)
				}
				be.MatMul(logits, router, x)
				if !be.RoutedExperts(dst, x, logits, gate, up, down, nil, ids, wts, g, u, d, 1, 1, false, true, 1) {
					t.Fatalf("%s: RoutedExperts declined", name)
				}
				q := strings.Join(cuda.Queued(be), " ")
				if (run == 0) != strings.Contains(q, "mmv_id_q5p") {
					t.Fatalf("%s (q5p %v): launches %s", name, run == 0, q)
				}
				got[run] = [][]uint32{e.bits(d), e.bits(dst)}
				if cnt, _ := be.Q5PCopies(); (run == 0) != (cnt == 1) {
					t.Fatalf("%s (q5p %v): %d packed copies", name, run == 0, cnt)
				}
				if err := be.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for j := range got[0] {
				for i := range got[0][j] {
					if got[0][j][i] != got[1][j][i] {
						t.Fatalf("%s: output %d [%d]: q5p %#x, widened %#x", name, j, i, got[0][j][i], got[1][j][i])
					}
				}
			}
		}
	}
}
