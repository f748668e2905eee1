package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestDec1Cluster: one row's decode attention over 257 to 2,048 positions on
// attention_decD_1c (a KV head's eight blocks one cluster, each a chunk of the row)
// against the split kernels (attention_split1) on the same row: the same values to
// within f16 rounding of the probabilities (the row's softmax sums add in other orders),
// for 64- and 128-dim heads and groups of 1 to 8 query heads, each form (chunks of 64,
// 128 and 256 positions); and the output projection after it, its rounding fused.
func TestDec1Cluster(t *testing.T) {
	for _, h := range []struct{ nhead, nkv, hd int }{{32, 8, 128}, {12, 2, 128}, {8, 4, 64}, {16, 16, 64}, {64, 8, 128}} {
		for _, ctx := range []int{257, 300, 512, 513, 600, 1024, 1500, 2048} {
			name := fmt.Sprintf("%d/%d heads of %d, %d positions", h.nhead, h.nkv, h.hd, ctx)
			var got [2][][]float32
			for i := range 2 {
				be := newOrSkip(t)
				cuda.Dec1Cluster(be, i == 0)
				e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(3, uint64(ctx)))}
				att, attend := decodeCase(e, 1, h.nhead, h.nkv, h.hd, ctx, 1)
				w := e.weight(quant.Q4_K, 256, h.nhead*h.hd)
				out := e.zeros(quant.F32, 1, 256)
				if err := be.Sync(context.Background()); err != nil {
					t.Fatal(err)
				}
				attend()
				be.MatMul(out, w, att)
				q := cuda.Queued(be)
				if c := slices.ContainsFunc(q, func(s string) bool { return strings.Contains(s, "_1c") }); c != (i == 0) {
					t.Fatalf("%s: queued %v (cluster kernel wanted: %v)", name, q, i == 0)
				}
				a, o := make([]float32, h.nhead*h.hd), make([]float32, 256)
				if err := be.ReadF32(context.Background(), att, a); err != nil {
					t.Fatal(err)
				}
				if err := be.ReadF32(context.Background(), out, o); err != nil {
					t.Fatal(err)
				}
				got[i] = [][]float32{a, o}
				if err := be.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for j, what := range []string{"attention", "projection"} {
				for k, w := range got[1][j] {
					g := got[0][j][k]
					if d := math.Abs(float64(g - w)); d > 2e-3+2e-3*math.Abs(float64(w)) || g != g {
						t.Fatalf("%s: %s [%d]: attention_decD_1c %g, attention_split1 %g", name, what, k, g, w)
					}
				}
			}
		}
	}
}
