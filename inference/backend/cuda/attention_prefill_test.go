package cuda_test

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestPrefillAttentionTime measures one layer's attention of a Llama-3.1-8B prompt
// (32 query heads, 8 KV heads, head dim 128, paged F16 cache of block size 16) of 512 and
// 2048 rows, with the tensor-core kernel and with attention_smem. It runs only with
// EMBER_CUDA_BENCH set: go test -run PrefillAttentionTime -v with a GPU.
func TestPrefillAttentionTime(t *testing.T) {
	if os.Getenv("EMBER_CUDA_BENCH") == "" {
		t.Skip("set EMBER_CUDA_BENCH=1 to measure")
	}
	const nh, nkv, hd, bs, cacheRows = 32, 8, 128, 16, 4096
	rng := rand.New(rand.NewPCG(8, 9))
	randn := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for _, rows := range []int{512, 2048} {
		for _, on := range []bool{true, false} {
			be := newOrSkip(t)
			cuda.PrefillAttention(be, on)
			up := func(typ quant.Type, r, c int, f32 []float32, i32 []int32) backend.Tensor {
				x, err := be.New(typ, r, c)
				if err != nil {
					t.Fatal(err)
				}
				if i32 != nil {
					be.WriteI32(x, i32)
				} else if f32 != nil {
					be.WriteF32(x, f32)
				}
				return x
			}
			all := make([]int32, cacheRows)
			for i := range all {
				all[i] = int32(i)
			}
			idx := up(quant.I32, cacheRows, 1, nil, all)
			kc, vc := up(quant.F16, cacheRows, nkv*hd, nil, nil), up(quant.F16, cacheRows, nkv*hd, nil, nil)
			be.SetRows(kc, up(quant.F32, cacheRows, nkv*hd, randn(cacheRows*nkv*hd), nil), idx)
			be.SetRows(vc, up(quant.F32, cacheRows, nkv*hd, randn(cacheRows*nkv*hd), nil), idx)
			table := make([]int32, cacheRows/bs)
			for i, b := range rng.Perm(cacheRows / bs) {
				table[i] = int32(b)
			}
			pos, seq := make([]int32, rows), make([]int32, rows)
			for i := range pos {
				pos[i] = int32(i)
			}
			a := backend.Attention{NHead: nh, NKVHead: nkv, HeadDim: hd, VHeadDim: hd, Scale: 0.088388,
				Table: up(quant.I32, 1, len(table), nil, table), Seq: up(quant.I32, rows, 1, nil, seq),
				BlockSize: bs, MaxLen: rows}
			q, pt := up(quant.F32, rows, nh*hd, randn(rows*nh*hd), nil), up(quant.I32, rows, 1, nil, pos)
			d := up(quant.F32, rows, nh*hd, nil, nil)
			run := func(reps int) time.Duration {
				t0 := time.Now()
				for r := 0; r < reps; r++ {
					be.Attention(d, q, kc, vc, pt, a)
				}
				if err := be.Sync(context.Background()); err != nil {
					t.Fatal(err)
				}
				return time.Since(t0)
			}
			run(2)
			const reps = 20
			el := run(reps)
			t.Logf("%d rows, tensor cores %v: %.1f us a layer", rows, on, el.Seconds()/reps*1e6)
			be.Close()
		}
	}
}
