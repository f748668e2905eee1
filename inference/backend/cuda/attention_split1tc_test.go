package cuda_test

import (
	"fmt"
	"math"
	"testing"

	"ember/inference/backend/cuda"
)

// TestSplit1TC: one row's decode attention (and three, each its sequence's one new
// position) forced onto the split kernels, attention_split1 with its scores and p * V on
// the tensor cores against the same kernel's SIMT form (attention_smem's bits, which
// TestSplitAttention holds to the reference) on the same rows: the same values to within
// f16 rounding of the probabilities (a score's products add in the tensor cores' order),
// for 64- and 128-dim heads and groups of 1 to 8 query heads over 300 to 12,345
// positions; and the output projection after it, its rounding fused. The two forms must
// differ somewhere (else the tensor-core form did not run).
func TestSplit1TC(t *testing.T) {
	if !split1Runs(t) {
		t.Skip("attention_split1 does not fit this GPU's shared memory")
	}
	differ := 0
	for _, h := range []struct{ nhead, nkv, hd int }{{32, 8, 128}, {28, 4, 128}, {12, 2, 128}, {8, 4, 64}, {16, 16, 64}, {64, 8, 128}} {
		for _, ctx := range []int{300, 1999, 4097, 9000, 12345} {
			rows := 1 + 2*(ctx%2) // odd contexts: three rows
			name := fmt.Sprintf("%d rows, %d/%d heads of %d, %d positions", rows, h.nhead, h.nkv, h.hd, ctx)
			var got [2][][]float32 // tensor cores, SIMT
			for i := range 2 {
				be := newOrSkip(t)
				cuda.Dec1Cluster(be, false)
				cuda.SplitAttention(be, true)
				cuda.SplitTC(be, i == 0)
				got[i] = attendProject(t, be, 5, rows, h.nhead, h.nkv, h.hd, ctx, nil)
			}
			for j, what := range []string{"attention", "projection"} {
				for k, w := range got[1][j] {
					g := got[0][j][k]
					if g != w {
						differ++
					}
					if d := math.Abs(float64(g - w)); d > 2e-3+2e-3*math.Abs(float64(w)) || g != g {
						t.Fatalf("%s: %s [%d]: tensor cores %g, SIMT %g", name, what, k, g, w)
					}
				}
			}
		}
	}
	if differ == 0 {
		t.Fatal("the tensor-core and SIMT forms gave the same bits everywhere: the tensor-core form did not run")
	}
	t.Logf("%d values differ in their bits", differ)
}

// split1Runs reports whether attention_split1 may run on GPU 0 (two of its blocks fit an
// SM's shared memory; not on an RTX card or under a lower $EMBER_CUDA_SMEM_LIMIT).
func split1Runs(t *testing.T) bool {
	t.Helper()
	be := newOrSkip(t)
	defer be.Close()
	return cuda.Split1Fits(be)
}
