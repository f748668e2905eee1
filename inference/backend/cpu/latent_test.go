package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"ember/inference/quant"
	kern "ember/kernels/cpu"
)

// latRuns lays out tokens (sequence, position) as latent Attention's head-major rows: h
// heads of each, row h*n+i holding head h of token i (runs of one position each).
func latRuns(h int, toks [][2]int32) [][3]int32 {
	var runs [][3]int32
	for range h {
		for _, tk := range toks {
			runs = append(runs, [3]int32{tk[0], tk[1], tk[1]})
		}
	}
	return runs
}

// TestLatentPaths requires latent Attention (Attention.HeadGroups over one KV head, an
// f16 cache) to give the same bits row by row and split in phases among the workers
// (latent.go), on every instruction-set path here, over paged caches: one decode token
// and several (positions at block edges and not), 16 heads of DeepSeek's 576 values,
// odd heads and dims, and more tokens than latGroup (two groups).
func TestLatentPaths(t *testing.T) {
	cases := []struct {
		h, hd, vhd int
		toks       [][2]int32
	}{
		{16, 576, 576, [][2]int32{{0, 300}}},
		{16, 72, 72, [][2]int32{{0, 0}, {1, 5}, {2, 131}}},
		{5, 37, 21, [][2]int32{{2, 64}, {0, 3}}},
		{3, 24, 40, [][2]int32{{0, 1}, {1, 2}, {2, 3}, {0, 9}, {1, 100}, {2, 17}, {0, 33}, {1, 250}, {2, 64}}},
	}
	const bs, nseq, cacheRows = 16, 3, 16 * 24
	for _, isa := range kern.Supported() {
		for ci, c := range cases {
			name := fmt.Sprintf("%v h=%d hd=%d vhd=%d tokens=%d", isa, c.h, c.hd, c.vhd, len(c.toks))
			var want []float32
			for _, mode := range []attnMode{attnPerHead, attnAuto} {
				got, latent := latRun(t, isa, mode, c.h, c.hd, c.vhd, c.toks, bs, nseq, cacheRows, rand.New(rand.NewPCG(uint64(ci), 91)))
				if wantLatent := mode == attnAuto; latent != wantLatent {
					t.Fatalf("%s mode %d: latent path %v", name, mode, latent)
				}
				if want == nil {
					want = got
					continue
				}
				for j := range want {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s: out[%d] = %g, row by row %g", name, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// latRun runs one paged latent Attention on a fresh 3-thread backend of isa and returns
// its output and whether it took the latent path.
func latRun(t *testing.T, isa kern.ISA, mode attnMode, h, hd, vhd int, toks [][2]int32, bs, nseq, cacheRows int,
	rng *rand.Rand) ([]float32, bool) {
	t.Helper()
	b := modeBackend(t, isa, mode)
	a := newGQAAttn(t, b, 1, quant.F16, 1, 1, hd, vhd, latRuns(h, toks), bs, nseq, cacheRows, rng)
	a.p.HeadGroups = h
	a.run(0)
	out := make([]float32, len(a.pos)*vhd)
	if err := b.ReadF32(context.Background(), a.dst, out); err != nil {
		t.Fatal(err)
	}
	return out, b.t.kind == opLatValues
}

// BenchmarkLatentAttention: DeepSeek-V2-Lite's latent attention (16 heads over one row
// of 576 values that is both K and V) of one decode token, or of a prompt's chunk of 128
// tokens, over a paged cache, 2 threads ($EMBER_BENCH_THREADS),
// row by row and in phases (latent.go). Each iteration takes the next of 8 layers'
// caches.
func BenchmarkLatentAttention(bm *testing.B) {
	const h, d, layers, bs = 16, 576, 8, 16
	for _, c := range []struct {
		name    string
		ctx, nq int
	}{{"decode", 1500, 1}, {"decode", 3000, 1}, {"prefill", 1500, 128}} {
		b, err := New(Options{Threads: benchThreads(), MapWeights: true})
		if err != nil {
			bm.Fatal(err)
		}
		rows := (c.ctx + bs - 1) / bs * bs
		var toks [][2]int32
		for p := c.ctx - c.nq; p < c.ctx; p++ {
			toks = append(toks, [2]int32{0, int32(p)})
		}
		a := newGQAAttn(bm, b, layers, quant.F16, 1, 1, d, d, latRuns(h, toks), bs, 1, rows, rand.New(rand.NewPCG(1, 2)))
		a.p.HeadGroups = h
		for _, mode := range []attnMode{attnPerHead, attnAuto} {
			name := map[attnMode]string{attnPerHead: "rows", attnAuto: "phases"}[mode]
			bm.Run(fmt.Sprintf("%s/nkv=%d/%s", c.name, c.ctx, name), func(bm *testing.B) {
				b.gqaMode = mode
				for i := 0; bm.Loop(); i++ {
					a.run(i % layers)
				}
			})
		}
		b.Close()
	}
}

// benchThreads is $EMBER_BENCH_THREADS, or 2.
func benchThreads() int {
	if n, err := strconv.Atoi(os.Getenv("EMBER_BENCH_THREADS")); err == nil && n > 0 {
		return n
	}
	return 2
}
