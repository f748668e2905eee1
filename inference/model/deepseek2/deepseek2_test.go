package deepseek2

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cpu"
	"ember/inference/backend/ref"
	"ember/inference/gguf"
	"ember/inference/model"
	"ember/inference/model/goldentest"
	"ember/inference/synth"
)

// prompt is a fixed token sequence (ids below the tiny vocab of 512).
var prompt = []int32{1, 300, 17, 42, 99, 256, 7, 511, 128, 64, 3, 200, 201, 202, 90, 91, 92, 400, 33}

func load(t *testing.T, name string) model.Model {
	t.Helper()
	return loadOn(t, name, ref.New())
}

func loadOn(t *testing.T, name string, be backend.Backend) model.Model {
	t.Helper()
	return loadPath(t, goldenGGUF(t, name), be)
}

func loadPath(t *testing.T, path string, be backend.Backend) model.Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(f, be)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); m.Backend().Close(); f.Close() })
	return m
}

func positions(start, n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(start + i)
	}
	return p
}

func run(t *testing.T, m model.Model, c *model.Cache, b model.Batch) []float32 {
	t.Helper()
	out, err := m.Forward(context.Background(), c, b)
	if err != nil {
		t.Fatal(err)
	}
	if out == nil {
		return nil
	}
	buf := make([]float32, out.Rows()*out.Cols())
	if err := m.Backend().ReadF32(context.Background(), out, buf); err != nil {
		t.Fatal(err)
	}
	return buf
}

// tokenByToken decodes prompt one token a step into c (positions 0, 1, ...) and returns
// each step's logits row.
func tokenByToken(t *testing.T, m model.Model, c *model.Cache) []float32 {
	t.Helper()
	var out []float32
	for i := range prompt {
		out = append(out, run(t, m, c, model.Batch{Tokens: prompt[i : i+1], Pos: positions(i, 1)})...)
	}
	return out
}

func sameRows(t *testing.T, what string, got, want []float32, nv int) {
	t.Helper()
	sameRowsTol(t, what, got, want, nv, 1e-10)
}

// sameRowsTol compares logits rows; tol allows for kernels whose summation order
// depends on the batch shape (the CPU backend's F16 matmul).
func sameRowsTol(t *testing.T, what string, got, want []float32, nv int, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d logits, want %d", what, len(got), len(want))
	}
	for i := 0; i < len(want)/nv; i++ {
		if e := goldentest.NMSE(got[i*nv:(i+1)*nv], want[i*nv:(i+1)*nv]); e > tol {
			t.Errorf("%s: row %d NMSE %.3g", what, i, e)
		}
	}
}

// TestPrefillShapes: a full prefill, a chunked one and token-by-token decode give the
// same logits, for the MLA layout and the attn_kv_b one.
func TestPrefillShapes(t *testing.T) {
	for _, name := range []string{"deepseek2-tiny-q8_0", "deepseek2-tiny-kvb-f16"} {
		t.Run(name, func(t *testing.T) { prefillShapes(t, load(t, name), 1e-10) })
	}
}

// prefillShapes checks that m gives the same logits (within an NMSE of tol per row) for
// the prompt as one batch, in chunks and token by token.
func prefillShapes(t *testing.T, m model.Model, tol float64) {
	nv, n := m.Params().NVocab, len(prompt)
	cache := func() *model.Cache {
		c, err := m.NewCache(n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Free)
		return c
	}
	want := run(t, m, cache(), model.Batch{Tokens: prompt, Pos: positions(0, n), AllLogits: true})
	c := cache()
	var chunked []float32
	for _, r := range [][2]int{{0, 3}, {3, 4}, {4, 11}, {11, n}} {
		b := model.Batch{Tokens: prompt[r[0]:r[1]], Pos: positions(r[0], r[1]-r[0]), AllLogits: true}
		chunked = append(chunked, run(t, m, c, b)...)
	}
	sameRowsTol(t, "chunked", chunked, want, nv, tol)
	sameRowsTol(t, "token by token", tokenByToken(t, m, cache()), want, nv, tol)
}

// TestPagedBatch: two sequences in one batch over a paged cache, sharing a first block
// (a cached prefix), give the logits each gives alone over a contiguous cache, on ref
// and on the CPU backend.
func TestPagedBatch(t *testing.T) {
	backends := map[string]func() backend.Backend{
		"ref": func() backend.Backend { return ref.New() },
		"cpu": func() backend.Backend { return newCPU(t) },
	}
	for _, name := range []string{"deepseek2-tiny-q4_k_m", "deepseek2-tiny-kvb-f16"} {
		for bn, newBE := range backends {
			tol := 1e-10
			if bn == "cpu" {
				tol = 1e-6
			}
			t.Run(name+"/"+bn, func(t *testing.T) { pagedBatch(t, loadOn(t, name, newBE()), tol) })
		}
	}
}

func pagedBatch(t *testing.T, m model.Model, tol float64) {
	nv, bs := m.Params().NVocab, 4
	a := prompt[:11]
	b := append(append([]int32(nil), prompt[:4]...), prompt[12:19]...) // same first block
	alone := func(toks []int32) []float32 {
		c, err := m.NewCache(len(toks))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		return run(t, m, c, model.Batch{Tokens: toks, Pos: positions(0, len(toks)), AllLogits: true})
	}
	wantA, wantB := alone(a), alone(b)

	c, err := model.NewPagedCache(m.Backend(), m.Params(), 16, bs, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free()
	tables := [][]int32{{5, 2, 9}, {5, 7, 3}}
	// The shared block first, through sequence 0 alone.
	run(t, m, c, model.Batch{Tokens: a[:4], Pos: positions(0, 4), Seq: make([]int32, 4), Tables: tables[:1], Logits: []int32{}})
	var batch model.Batch
	batch.Tables = tables
	for s, toks := range [][]int32{a, b} {
		for i := 4; i < len(toks); i++ {
			batch.Tokens = append(batch.Tokens, toks[i])
			batch.Pos = append(batch.Pos, int32(i))
			batch.Seq = append(batch.Seq, int32(s))
		}
	}
	batch.AllLogits = true
	got := run(t, m, c, batch)
	na := len(a) - 4
	sameRowsTol(t, "sequence 0", got[:na*nv], wantA[4*nv:], nv, tol)
	sameRowsTol(t, "sequence 1", got[na*nv:], wantB[4*nv:], nv, tol)
}

// TestRoute checks top-k selection, tie-breaking, normalisation and scaling.
func TestRoute(t *testing.T) {
	c := config{nExpert: 4, nUsed: 2, sigmoid: true}
	sel, w := make([]int, 2), make([]float32, 2)
	c.route([]float32{0, 1, 1, -1}, nil, sel, w) // a tie: the lower index first
	if sel[0] != 1 || sel[1] != 2 || w[0] != w[1] {
		t.Fatalf("sigmoid top-2 of a tie: %v %v", sel, w)
	}
	c = config{nExpert: 4, nUsed: 2, wNorm: true, wScale: 2}
	c.route([]float32{3, 1, 2, 0}, nil, sel, w)
	if sel[0] != 0 || sel[1] != 2 || abs(w[0]+w[1]-2) > 1e-6 || w[0] <= w[1] {
		t.Fatalf("softmax top-2, normalised and scaled by 2: %v %v", sel, w)
	}
	c = config{nExpert: 4, nUsed: 1}
	c.route([]float32{3, 1, 2, 0}, []float32{0, 0, 0, 1}, sel[:1], w[:1]) // bias steers selection only
	if sel[0] != 3 || w[0] > 0.1 {
		t.Fatalf("biased selection: %v %v", sel[:1], w[:1])
	}
	// Groups {0,1} {2,3} {4,5}: sums of the best two pick groups 2 and 0, so expert 2's
	// high score is masked out.
	c = config{nExpert: 6, nUsed: 2, nGroup: 3, nGroupUsed: 2, sigmoid: true}
	c.route([]float32{1, 1, 3, -3, 1.5, 1.4}, nil, sel, w)
	if sel[0] != 4 || sel[1] != 5 {
		t.Fatalf("group-limited top-2: %v %v", sel, w)
	}
}

func abs(x float32) float32 { return max(x, -x) }

// TestSyntheticVariants loads tiny-deepseek2 files with what the goldens lack: q
// compression (attn_q_a/attn_q_b), sigmoid gating with exp_probs_b, normalised and
// scaled expert weights, and the attn_kv_b layout with q compression; each must give
// finite logits, the same for a full prefill and token-by-token decode on ref, and
// logits close to ref's on the CPU backend.
func TestSyntheticVariants(t *testing.T) {
	variants := []struct {
		name string
		ft   string
		set  func(p *synth.Params)
	}{
		{"preset-q4_k_m", "q4_k_m", func(p *synth.Params) {}},
		{"qlora-sigmoid-bias-norm-f16", "f16", func(p *synth.Params) {
			p.QLoraRank, p.ExpertGating, p.ExpProbsB, p.ExpertWeightsNorm, p.ExpertWeightsScale = 64, "sigmoid", true, true, 2.5
		}},
		{"kvb-qlora-q8_0", "q8_0", func(p *synth.Params) { p.MLALayout, p.QLoraRank = "kv_b", 64 }},
		{"no-yarn-3-shared-q4_0", "q4_0", func(p *synth.Params) { p.RopeScaling, p.NExpertShared = "none", 3 }},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			p, err := synth.Base("tiny-deepseek2", "")
			if err != nil {
				t.Fatal(err)
			}
			v.set(&p)
			path := filepath.Join(t.TempDir(), v.name+".gguf")
			if _, err := synth.Write(context.Background(), path, p, synth.Options{FileType: v.ft, Seed: v.name, Threads: 1}); err != nil {
				t.Fatal(err)
			}
			m := loadPath(t, path, ref.New())
			nv, n := m.Params().NVocab, len(prompt)
			c, err := m.NewCache(n)
			if err != nil {
				t.Fatal(err)
			}
			full := run(t, m, c, model.Batch{Tokens: prompt, Pos: positions(0, n), AllLogits: true})
			c.Free()
			for i, x := range full {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("logit %d is %g", i, x)
				}
			}
			c, err = m.NewCache(n)
			if err != nil {
				t.Fatal(err)
			}
			single := tokenByToken(t, m, c)
			c.Free()
			sameRows(t, "token by token", single, full, nv)

			// The CPU backend within the goldens' bound of ref (its kernels may round a
			// batch's activations in another order, and routing amplifies that).
			mc := loadPath(t, path, newCPU(t))
			c, err = mc.NewCache(n)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Free()
			sameRowsTol(t, "cpu", run(t, mc, c, model.Batch{Tokens: prompt, Pos: positions(0, n), AllLogits: true}), full, nv, 5e-3)
		})
	}
}

func newCPU(t *testing.T) backend.Backend {
	b, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLatentCacheBlocks: an MLA file's cache is one tensor per layer of qk_rope +
// kv_lora_rank values per position, and its blocks move (ReadBlock, WriteBlock,
// CopyBlock) as the engine's prefix cache moves them.
func TestLatentCacheBlocks(t *testing.T) {
	for _, be := range []backend.Backend{ref.New(), newCPU(t)} {
		latentCacheBlocks(t, be)
	}
}

func latentCacheBlocks(t *testing.T, be backend.Backend) {
	m := loadOn(t, "deepseek2-tiny-q8_0", be)
	p, bs := m.Params(), 4
	if !p.SharedKV || p.HeadDim != 80 || p.VHeadDim != 80 || p.NKVHead != 1 {
		t.Fatalf("%s: params %+v, want one shared KV head of 16 + 64 dims", be.Name(), p)
	}
	c, err := model.NewPagedCache(be, p, 8, bs, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.BlockBytes(), p.NLayer*bs*80*2; got != want {
		t.Fatalf("%s: %d bytes per block, want %d", be.Name(), got, want)
	}
	run(t, m, c, model.Batch{Tokens: prompt[:6], Pos: positions(0, 6), Seq: make([]int32, 6), Tables: [][]int32{{5, 1}}, Logits: []int32{}})
	ctx := context.Background()
	blk, err := c.ReadBlock(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteBlock(2, blk); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyBlock(1, 3, 2); err != nil {
		t.Fatal(err)
	}
	// Decode the next token over the moved blocks and over the originals.
	next := model.Batch{Tokens: prompt[6:7], Pos: positions(6, 1), Seq: []int32{0}}
	next.Tables = [][]int32{{5, 1}}
	want := run(t, m, c, next)
	next.Tables = [][]int32{{2, 3}}
	sameRows(t, be.Name()+" moved blocks", run(t, m, c, next), want, p.NVocab)
	c.Free()
}

// TestConfig checks the hyperparameters read from the tiny files, including the
// attention scale llama.cpp computes for V2-Lite's YaRN (README of the goldens:
// 1.2608^2 / sqrt(48) = 0.229443).
func TestConfig(t *testing.T) {
	for name, mla := range map[string]bool{"deepseek2-tiny-f32": true, "deepseek2-tiny-kvb-f16": false} {
		m := load(t, name).(*Model)
		c, p := m.cfg, m.p
		if c.mla != mla || c.qLoRA != 0 || c.kvLoRA != 64 || c.nope != 32 || c.rope != 16 || c.vd != 32 ||
			c.nDense != 1 || c.nExpert != 8 || c.nUsed != 2 || c.nShared != 1 || c.nFFExp != 128 || c.sigmoid || c.wNorm {
			t.Errorf("%s: config %+v", name, c)
		}
		if abs(c.kqScale-0.229443) > 2e-6 {
			t.Errorf("%s: kq scale %g, want 0.229443", name, c.kqScale)
		}
		r := p.RoPE
		if r.Style != backend.RoPENormal || r.Dims != 16 || abs(r.FreqScale-1.0/40) > 1e-9 || r.ExtFactor != 1 ||
			r.OrigCtx != 4096 || r.BetaFast != 32 || r.BetaSlow != 1 || abs(r.AttnFactor-0.730520) > 1e-6 {
			t.Errorf("%s: rope %+v", name, r)
		}
	}
}
