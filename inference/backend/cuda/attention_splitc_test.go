package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestSplitClusterBits: attention_splitc (a (row, KV head)'s eight chunks as one
// cluster's blocks) gives attention_split1's bits with eight splits, in the attention
// output and in the output projection whose Q8_K rounding each fuses: one to three rows,
// caches from a row shorter than one chunk (blocks of a cluster with nothing to do) to
// 5,000 positions, 64- and 128-dim heads, groups of 2 to 6 query heads.
func TestSplitClusterBits(t *testing.T) {
	for _, c := range []struct{ rows, nhead, nkv, hd, ctx int }{
		{1, 32, 8, 128, 600}, // Llama-3.1-8B decode
		{1, 32, 8, 128, 300},
		{2, 32, 8, 128, 1500},
		{3, 32, 8, 128, 5000},
		{1, 12, 2, 128, 700}, // Qwen2-1.5B: six query heads a KV head
		{1, 8, 4, 64, 2047},
		{2, 16, 8, 64, 40}, // one chunk: seven blocks of each cluster idle
	} {
		name := fmt.Sprintf("%d rows %d/%d heads of %d, %d positions", c.rows, c.nhead, c.nkv, c.hd, c.ctx)
		var got [2][][]uint32
		for i := range 2 {
			be := newOrSkip(t)
			cuda.ShortAttention(be, false)
			cuda.SplitAttention(be, true)
			want := "attention_splitc"
			if i == 1 {
				cuda.SplitCount(be, 8)
				want = "attention_split1"
			}
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(7, 8))}
			att, attend := decodeCase(e, c.rows, c.nhead, c.nkv, c.hd, c.ctx, 37)
			w := e.weight(quant.Q4_K, 256, c.nhead*c.hd)
			out := e.zeros(quant.F32, c.rows, 256)
			if err := be.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			attend()
			be.MatMul(out, w, att)
			if q := cuda.Queued(be); !slices.Contains(q, want) {
				t.Fatalf("%s: queued %v, want %s", name, q, want)
			}
			got[i] = [][]uint32{e.bits(att), e.bits(out)}
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for j, what := range []string{"attention", "projection"} {
			for k, w := range got[1][j] {
				if g := got[0][j][k]; g != w {
					t.Fatalf("%s: %s [%d]: attention_splitc %g (%#x), attention_split1 %g (%#x)", name, what, k,
						math.Float32frombits(g), g, math.Float32frombits(w), w)
				}
			}
		}
	}
}
