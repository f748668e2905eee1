package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"ember/inference/backend/cuda"
)

// TestSplit1Bits: attention_split1 (one launch; with one query row it reads the older
// keys and values before it waits for the kernel before) gives the bits of the
// two-launch split kernels (attention_split_stats, attention_split_pv), which read
// everything after: one row (the early reads) and three (none), a row shorter than a
// chunk, contexts to 5,000 positions, 64- and 128-dim heads, groups of 2 to 6.
func TestSplit1Bits(t *testing.T) {
	for _, c := range []struct{ rows, nhead, nkv, hd, ctx int }{
		{1, 32, 8, 128, 600}, // Llama-3.1-8B decode
		{1, 32, 8, 128, 300},
		{1, 32, 8, 128, 5000},
		{3, 32, 8, 128, 1500},
		{1, 12, 2, 128, 700}, // Qwen2-1.5B: six query heads a KV head
		{1, 8, 4, 64, 2047},
		{2, 16, 8, 64, 40},
	} {
		name := fmt.Sprintf("%d rows %d/%d heads of %d, %d positions", c.rows, c.nhead, c.nkv, c.hd, c.ctx)
		var got [2][]uint32
		for i, want := range []string{"attention_split1", "attention_split_pv"} {
			be := newOrSkip(t)
			cuda.ShortAttention(be, false)
			cuda.SplitAttention(be, true)
			if i == 1 {
				cuda.SplitAttentionTwo(be)
			}
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(7, 8))}
			att, attend := decodeCase(e, c.rows, c.nhead, c.nkv, c.hd, c.ctx, 37)
			if err := be.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			attend()
			if q := cuda.Queued(be); !slices.Contains(q, want) {
				t.Fatalf("%s: queued %v, want %s", name, q, want)
			}
			got[i] = e.bits(att)
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
		}
		for k, w := range got[1] {
			if g := got[0][k]; g != w {
				t.Fatalf("%s: [%d]: attention_split1 %g (%#x), the two launches %g (%#x)", name, k,
					math.Float32frombits(g), g, math.Float32frombits(w), w)
			}
		}
	}
}
