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

// TestDec1Cluster: one row's decode attention (and three, each its sequence's one new
// position: Attention.OneNew) over 257 to 2,048 positions on
// attention_decD_1c (a KV head's eight blocks one cluster, each a chunk of the row), and
// over 2,049 to 12,345 on attention_decD_1l2, _1l4 and _1l8 (the chunks in tiles of 256
// positions on 16 warps; _1l8 forced for 128-dim heads, which take split1 there by default),
// against the split kernels (attention_split1) on the same row: the same values to
// within f16 rounding of the probabilities (the row's softmax sums add in other orders),
// for 64- and 128-dim heads and groups of 1 to 8 query heads, each form (chunks of 64,
// 128 and 256 positions, tiles of 256); and the output projection after it, its rounding
// fused; and attention_decD_1l1 in attention_decD_1c's place up to 2,048 positions.
func TestDec1Cluster(t *testing.T) {
	skipCompat(t)
	for _, h := range []struct{ nhead, nkv, hd int }{{32, 8, 128}, {12, 2, 128}, {8, 4, 64}, {16, 16, 64}, {64, 8, 128}} {
		for _, ctx := range []int{257, 600, 1500, 2048, 2049, 2500, 4097, 5555, 8192, 12345} {
			rows := 1 + 2*(ctx%2) // odd contexts: three rows
			name := fmt.Sprintf("%d rows, %d/%d heads of %d, %d positions", rows, h.nhead, h.nkv, h.hd, ctx)
			// runs: the default (attention_decD_1c or _1l), the split kernels, and
			// attention_decD_1l1 in attention_decD_1c's place
			var got [3][][]float32
			for i := range 3 {
				if i == 2 && ctx > 2048 {
					break
				}
				be := newOrSkip(t)
				cuda.Dec1Cluster(be, i != 1)
				cuda.Dec1L1(be, i == 2)
				cuda.Dec1LTiles(be, 8) // every form of _1l, the eight-tile ones too (128-dim heads leave them by default)
				got[i] = attendProject(t, be, 3, rows, h.nhead, h.nkv, h.hd, ctx, func(q []string) {
					want := []string{"_1c", "", "_1l1"}[i]
					if ctx > 2048 && i == 0 {
						want = "_1l"
					}
					if c := slices.ContainsFunc(q, func(s string) bool { return strings.Contains(s, "_1c") || strings.Contains(s, "_1l") }); c != (i != 1) ||
						want != "" && !slices.ContainsFunc(q, func(s string) bool { return strings.Contains(s, want) }) {
						t.Fatalf("%s: queued %v (wanted a kernel named *%s*, or none of the cluster's for the split run)", name, q, want)
					}
				})
			}
			for _, i := range []int{0, 2} {
				if got[i] == nil {
					continue
				}
				for j, what := range []string{"attention", "projection"} {
					for k, w := range got[1][j] {
						g := got[i][j][k]
						if d := math.Abs(float64(g - w)); d > 2e-3+2e-3*math.Abs(float64(w)) || g != g {
							t.Fatalf("%s: %s [%d]: run %d (cluster) %g, attention_split1 %g", name, what, k, i, g, w)
						}
					}
				}
			}
		}
	}
}

// attendProject writes decodeCaseNew's cache and rows (rng seed (seed, ctx)) on be, runs
// their attention and a Q4_K product of it to 256 columns (the output projection, its
// rounding fused where the kernel allows), hands the queued kernels' names to check (when
// not nil), reads both back and closes be: the attention rows, then the projection.
func attendProject(t *testing.T, be *cuda.Backend, seed uint64, rows, nhead, nkv, hd, ctx int, check func([]string)) [][]float32 {
	t.Helper()
	e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(seed, uint64(ctx)))}
	att, attend := decodeCaseNew(e, rows, nhead, nkv, hd, ctx, 1, true)
	w := e.weight(quant.Q4_K, 256, nhead*hd)
	out := e.zeros(quant.F32, rows, 256)
	if err := be.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	attend()
	be.MatMul(out, w, att)
	if check != nil {
		check(cuda.Queued(be))
	}
	a, o := make([]float32, rows*nhead*hd), make([]float32, rows*256)
	if err := be.ReadF32(context.Background(), att, a); err != nil {
		t.Fatal(err)
	}
	if err := be.ReadF32(context.Background(), out, o); err != nil {
		t.Fatal(err)
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	return [][]float32{a, o}
}
