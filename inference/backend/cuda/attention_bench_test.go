package cuda_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestBatchedDecodeAttention times one batched decode step's attention over a paged
// cache (block size 16, blocks shuffled): Llama-3.1-8B's shapes (1 to 64 sequences, 32
// query heads on 8 KV heads of 128 dims) and DeepSeek-V2-Lite's latent attention (one
// 576-dim KV head shared by 16 query heads; the model's head-major rows, one a (head,
// token)), with the kernel the backend picks; for grouped-query rows with the scores
// computed twice ($EMBER_CUDA_DEC_TWO_PASS), the tensor-core decode kernels off
// (attention_dec.go), split attention forced, attention_dec forced, and its rings of two
// and three tiles forced ($EMBER_CUDA_DEC_STAGES); for latent rows
// with attention_mla forced (its split off), attention_mla_split forced, both off, and
// split attention forced with both off; and for both with attention_short forced on and
// off. It runs only with EMBER_CUDA_BENCH set.
func TestBatchedDecodeAttention(t *testing.T) {
	if os.Getenv("EMBER_CUDA_BENCH") == "" {
		t.Skip("set EMBER_CUDA_BENCH=1 to measure")
	}
	cases := []struct {
		name             string
		seqs, heads, nkv int
		hd, vhd, pos     int
		headMajor        bool // rows h*seqs+i: head h of sequence i, one head each
	}{
		{"llama8b", 64, 32, 8, 128, 128, 600, false},
		{"llama8b-2k", 64, 32, 8, 128, 128, 2000, false},
		{"llama8b", 16, 32, 8, 128, 128, 600, false},
		{"llama8b", 4, 32, 8, 128, 128, 600, false},
		{"llama8b", 1, 32, 8, 128, 128, 600, false},
		{"llama8b", 1, 32, 8, 128, 128, 100, false}, // tg128's rows: short
		{"llama8b", 1, 32, 8, 128, 128, 250, false},
		{"llama8b", 4, 32, 8, 128, 128, 100, false},
		{"mla", 64, 16, 1, 576, 576, 600, true},
		{"mla", 1, 16, 1, 576, 576, 600, true},
		{"mla", 1, 16, 1, 576, 576, 100, true},
		{"mla", 1, 16, 1, 576, 576, 250, true},
		{"mla", 4, 16, 1, 576, 576, 600, true},
		{"mla prompt-like", 512, 16, 1, 576, 576, 300, true},
	}
	off := func(be *cuda.Backend) {
		cuda.MLAAttention(be, false)
		cuda.DecodeAttention(be, false)
		cuda.ShortAttention(be, false)
	}
	setups := map[string]func(be *cuda.Backend){
		"picked":   func(*cuda.Backend) {},
		"two-pass": func(be *cuda.Backend) { cuda.DecTwoPass(be, true) },
		"dec off":  off,
		"split":    func(be *cuda.Backend) { off(be); cuda.SplitAttention(be, true) },
		"dec on": func(be *cuda.Backend) {
			cuda.DecodeAttention(be, true)
			cuda.SplitAttention(be, false)
			cuda.ShortAttention(be, false)
		},
		"ring 2":    func(be *cuda.Backend) { cuda.DecStages(be, 2, 0, 0, 0) },
		"ring 3":    func(be *cuda.Backend) { cuda.DecStages(be, 3, 0, 0, 0) },
		"short on":  func(be *cuda.Backend) { cuda.ShortAttention(be, true) },
		"short off": func(be *cuda.Backend) { cuda.ShortAttention(be, false) },
		"mla": func(be *cuda.Backend) {
			cuda.MLAAttention(be, true)
			cuda.MLASplit(be, false, 0)
			cuda.ShortAttention(be, false)
		},
		"mla split":      func(be *cuda.Backend) { cuda.MLASplit(be, true, 0) },
		"mla off":        off,
		"split, mla off": func(be *cuda.Backend) { off(be); cuda.SplitAttention(be, true) },
	}
	for _, c := range cases {
		modes := []string{"picked", "ring 2", "ring 3", "two-pass", "dec off", "split", "dec on", "short on", "short off"}
		if c.headMajor {
			modes = []string{"picked", "mla", "mla split", "mla off", "split, mla off", "short on", "short off"}
		}
		for _, mode := range modes {
			be := newWith(t, cuda.Options{})
			setups[mode](be)
			us := timeAttention(t, be, c.seqs, c.heads, c.nkv, c.hd, c.vhd, c.pos, c.headMajor)
			kv := float64(c.seqs) * float64(c.pos) * float64(c.nkv) * float64(c.hd+c.vhd) * 2
			if c.headMajor {
				kv /= 2 // K is V
			}
			t.Logf("%s (%d sequences at ~%d positions), %s: %.1f us (KV read once: %.2f TB/s)", c.name, c.seqs, c.pos,
				mode, us, kv/us/1e6)
			be.Close()
		}
	}
}

func timeAttention(t *testing.T, be backend.Backend, seqs, heads, nkv, hd, vhd, pos int, headMajor bool) float64 {
	run, _ := decodeAttentionCase(t, be, seqs, heads, nkv, hd, vhd, pos, headMajor)
	return timeQueued(t, be, run)
}

// decodeAttentionCase sets up one batched decode step's attention on be (a paged cache
// of random keys and values, block size 16, blocks shuffled; each sequence a few
// positions short of pos) and returns the launch and its output.
func decodeAttentionCase(t *testing.T, be backend.Backend, seqs, heads, nkv, hd, vhd, pos int,
	headMajor bool) (func(), backend.Tensor) {
	const bs = 16
	rng := rand.New(rand.NewPCG(3, 4))
	per := (pos + bs) / bs
	nblocks := seqs * per
	rows := nblocks * bs
	perm := rng.Perm(nblocks)
	mk := func(typ quant.Type, r, c int) backend.Tensor {
		x, err := be.New(typ, r, c)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	randn := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	all := make([]int32, rows)
	for i := range all {
		all[i] = int32(i)
	}
	idx := mk(quant.I32, rows, 1)
	be.WriteI32(idx, all)
	k := mk(quant.F16, rows, nkv*hd)
	src := mk(quant.F32, rows, nkv*hd)
	be.WriteF32(src, randn(rows*nkv*hd))
	be.SetRows(k, src, idx)
	v := k
	if !(headMajor && hd == vhd) {
		v = mk(quant.F16, rows, nkv*vhd)
		vs := mk(quant.F32, rows, nkv*vhd)
		be.WriteF32(vs, randn(rows*nkv*vhd))
		be.SetRows(v, vs, idx)
	}
	table := make([]int32, seqs*per)
	for i := range table {
		table[i] = int32(perm[i])
	}
	tt := mk(quant.I32, seqs, per)
	be.WriteI32(tt, table)
	qrows, nh, qnkv := seqs, heads, nkv
	if headMajor {
		qrows, nh, qnkv = seqs*heads, 1, 1
	}
	seqv, posv := make([]int32, qrows), make([]int32, qrows)
	for r := range seqv {
		seqv[r], posv[r] = int32(r%seqs), int32(pos-1-r%7)
	}
	st, pt := mk(quant.I32, qrows, 1), mk(quant.I32, qrows, 1)
	be.WriteI32(st, seqv)
	be.WriteI32(pt, posv)
	q := mk(quant.F32, qrows, nh*hd)
	be.WriteF32(q, randn(qrows*nh*hd))
	d := mk(quant.F32, qrows, nh*vhd)
	a := backend.Attention{NHead: nh, NKVHead: qnkv, HeadDim: hd, VHeadDim: vhd, Scale: 1 / float32(math.Sqrt(float64(hd))),
		Table: tt, Seq: st, BlockSize: bs, MaxLen: pos}
	if headMajor {
		a.HeadGroups = heads
	}
	return func() { be.Attention(d, q, k, v, pt, a) }, d
}

// TestDecodeAttentionKeptScores: the tensor-core decode kernels keeping pass 1's scores
// in shared memory (decScap) give bit for bit what computing them again gives
// ($EMBER_CUDA_DEC_TWO_PASS), for grouped-query heads (Llama-3.1-8B's) and latent
// attention (DeepSeek-V2-Lite's), at lengths that keep the scores.
func TestDecodeAttentionKeptScores(t *testing.T) {
	newOrSkip(t).Close()
	for _, c := range []struct {
		name             string
		seqs, heads, nkv int
		hd, pos          int
		headMajor        bool
	}{
		{"gqa", 64, 32, 8, 128, 600, false},
		{"gqa-64", 20, 8, 2, 64, 70, false},
		{"mla", 9, 16, 1, 576, 300, true},
	} {
		var out [2][]float32
		for i, two := range []bool{false, true} {
			be := newOrSkip(t)
			cuda.MLAAttention(be, true)
			cuda.DecodeAttention(be, true)
			cuda.SplitAttention(be, false)
			cuda.PrefillAttention(be, false)
			cuda.DecTwoPass(be, two)
			kept := cuda.DecScap(be, c.hd, c.headMajor, c.pos, min(16, c.heads/c.nkv), c.seqs*c.nkv) > 0
			if !kept && !two && cuda.SmemLimited(be) {
				be.Close()
				break // this GPU's shared memory does not keep them
			}
			if kept == two {
				t.Fatalf("%s: scores kept %v with the two-pass switch %v", c.name, kept, two)
			}
			out[i] = decodeAttentionOut(t, be, c.seqs, c.heads, c.nkv, c.hd, c.pos, c.headMajor)
		}
		if out[1] == nil {
			t.Logf("%s: this GPU's shared memory keeps no scores", c.name)
			continue
		}
		if j := firstOtherBits(out[0], out[1]); j >= 0 {
			t.Fatalf("%s: element %d: %v with the scores kept, %v computed twice", c.name, j, out[0][j], out[1][j])
		}
	}
}

// TestDecodeAttentionStages: attention_dec64/128 gives bit for bit the same output with
// rings of two, three and four tiles (the load order changes, the arithmetic does not),
// with the scores kept and computed twice, over one tile, short caches and long ones.
func TestDecodeAttentionStages(t *testing.T) {
	newOrSkip(t).Close()
	for _, c := range []struct {
		name             string
		seqs, heads, nkv int
		hd, pos          int
		two              bool
	}{
		{"gqa", 64, 32, 8, 128, 600, false},
		{"gqa two-pass", 64, 32, 8, 128, 600, true},
		{"gqa long", 8, 32, 8, 128, 2000, false},
		{"one token", 1, 32, 8, 128, 100, false},
		{"one tile", 3, 32, 8, 128, 40, false},
		{"gqa-64", 20, 8, 2, 64, 70, false},
		{"gqa-64 two-pass", 20, 8, 2, 64, 300, true},
	} {
		var ref []float32
		for _, ns := range []int{2, 3, 4} {
			be := newOrSkip(t)
			cuda.DecodeAttention(be, true)
			cuda.SplitAttention(be, false)
			cuda.ShortAttention(be, false)
			cuda.PrefillAttention(be, false)
			cuda.DecTwoPass(be, c.two)
			scap := cuda.DecScap(be, c.hd, false, c.pos, c.heads/c.nkv, c.seqs*c.nkv)
			if got := cuda.DecStages(be, ns, c.hd, scap, c.heads/c.nkv); got != ns {
				if got < ns && cuda.SmemLimited(be) {
					be.Close()
					t.Logf("%s: %d tiles forced, %d fit this GPU's shared memory", c.name, ns, got)
					break
				}
				t.Fatalf("%s: %d tiles forced, %d taken", c.name, ns, got)
			}
			out := decodeAttentionOut(t, be, c.seqs, c.heads, c.nkv, c.hd, c.pos, false)
			if ref == nil {
				ref = out
				continue
			}
			if j := firstOtherBits(out, ref); j >= 0 {
				t.Fatalf("%s: element %d: %v with %d tiles a ring, %v with 2", c.name, j, out[j], ns, ref[j])
			}
		}
	}
}

// decodeAttentionOut runs decodeAttentionCase once on be (V of K's width) and returns its
// output; be is closed.
func decodeAttentionOut(t *testing.T, be *cuda.Backend, seqs, heads, nkv, hd, pos int, headMajor bool) []float32 {
	t.Helper()
	defer be.Close()
	run, d := decodeAttentionCase(t, be, seqs, heads, nkv, hd, hd, pos, headMajor)
	run()
	out := make([]float32, d.Rows()*d.Cols())
	if err := be.ReadF32(context.Background(), d, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// firstOtherBits is the first index where a and b (of one length) differ in their bits,
// or -1.
func firstOtherBits(a, b []float32) int {
	for j := range a {
		if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
			return j
		}
	}
	return -1
}
