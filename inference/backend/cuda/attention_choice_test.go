package cuda

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// newAttentionQueue is a queue-only backend (fuse_queue_test.go) that can also queue the
// attention kernels: their shared memory limits taken as raised, the split kernels'
// scratch and counters already large enough, an H200's SM count.
func newAttentionQueue(noFuse bool) *queueOnly {
	q := newQueueOnly(noFuse)
	b := q.Backend
	for _, n := range []string{"attention_smem", "attention_split1", "attention_dec64", "attention_dec128",
		"attention_dec64_q8", "attention_dec128_q8", "attention_mla", "attention_mla_split", "attention_short64", "attention_short128", "attention_short576", "attention_short576w",
		"attention_dec64_1", "attention_dec128_1", "attention_dec64_1_q8", "attention_dec128_1_q8",
		"attention_dec64_1c", "attention_dec128_1c", "attention_dec64_1c_q8", "attention_dec128_1c_q8",
		"attention_dec64_1l2", "attention_dec128_1l2", "attention_dec64_1l2_q8", "attention_dec128_1l2_q8",
		"attention_dec64_1l4", "attention_dec128_1l4", "attention_dec64_1l4_q8", "attention_dec128_1l4_q8",
		"attention_dec64_1l8", "attention_dec128_1l8", "attention_dec64_1l8_q8", "attention_dec128_1l8_q8"} {
		for _, f := range []string{"", "_64", "_128"} {
			m := strings.Replace(n, "_1", "_1"+f, 1)
			if strings.Contains(n, "_1c") {
				m = strings.Replace(n, "_1c", "_1c"+f, 1)
			}
			b.kernels[m] = &kernel{name: m}
		}
	}
	b.dev.SMs, b.attnSmem, b.split.one = 132, smemMax, 1
	b.dec.smem = map[string]int{}
	for _, n := range []string{"attention_dec64", "attention_dec128", "attention_dec64_q8", "attention_dec128_q8",
		"attention_mla", "attention_mla_split", "attention_short64", "attention_short128", "attention_short576", "attention_short576w",
		"attention_dec64_1", "attention_dec128_1", "attention_dec64_1_q8", "attention_dec128_1_q8",
		"attention_dec64_1c", "attention_dec128_1c", "attention_dec64_1c_q8", "attention_dec128_1c_q8",
		"attention_dec64_1l2", "attention_dec128_1l2", "attention_dec64_1l2_q8", "attention_dec128_1l2_q8",
		"attention_dec64_1l4", "attention_dec128_1l4", "attention_dec64_1l4_q8", "attention_dec128_1l4_q8",
		"attention_dec64_1l8", "attention_dec128_1l8", "attention_dec64_1l8_q8", "attention_dec128_1l8_q8"} {
		for _, f := range []string{"", "_64", "_128"} {
			m := strings.Replace(n, "_1", "_1"+f, 1)
			if strings.Contains(n, "_1c") {
				m = strings.Replace(n, "_1c", "_1c"+f, 1)
			}
			b.dec.smem[m] = 227 << 10
		}
	}
	b.split.work = scratch{ptr: 3 << 40, size: 1 << 30}
	b.split.count = scratch{ptr: 4 << 40, size: 1 << 20}
	b.dec.work = scratch{ptr: 5 << 40, size: 1 << 30}
	b.short.read, b.short.tile = true, shortMaxTile
	return q
}

// TestAttentionChoice: the decode attention kernel each shape gets in auto mode (and with
// attention_short forced on), and whether the output projection's Q8_K rounding joins
// it: Llama-3.1-8B's one token over a short cache on attention_dec128_1's form for its
// positions (rounding fused;
// attention_dec128 with $EMBER_CUDA_NO_DEC1 or several rows),
// over 600 positions on attention_dec128_1c's form for its chunks (rounding fused), over
// 3,000 and 4,096 on attention_dec128_1l2, over 5,000 on _1l4, over 9,000 and
// 16,385 and four rows over 600 (64-dim heads over 9,000 too)
// (no Attention.OneNew) on attention_split1; forced,
// attention_short128 (fused); DeepSeek-V2-Lite's latent rows of one or a few tokens over
// a short cache on attention_short576, of one over a long one on attention_mla_split, of
// 64 tokens on attention_mla_split; with $EMBER_CUDA_NO_MMQ, one row as a batch's rows
// attend (attention_smem); with fusion off, the rounding a launch of its own.
func TestAttentionChoice(t *testing.T) {
	mm := mmvName(quant.Q4_K, 1)
	for _, c := range []struct {
		name                 string
		tokens, nhead, nkv   int
		hd, maxLen, cacheLen int
		mla, shortOn, noMMQ  bool
		noFuse               bool
		want                 []string
	}{
		{"8B, 1 token, 100 positions", 1, 32, 8, 128, 100, 1024, false, false, false, false, []string{"attention_dec128_1_128", mm}},
		{"8B, 1 token, 256 positions", 1, 32, 8, 128, 256, 1024, false, false, false, false, []string{"attention_dec128_1", mm}},
		{"8B, 1 token, 100 positions, fusion off", 1, 32, 8, 128, 100, 1024, false, false, false, true, []string{"attention_dec128_1_128", "quant_q8_k", mm}},
		{"8B, 1 token, 600 positions", 1, 32, 8, 128, 600, 1024, false, false, false, false, []string{"attention_dec128_1c_128", mm}},
		{"8B, 1 token, 100 positions, short on", 1, 32, 8, 128, 100, 1024, false, true, false, false, []string{"attention_short128", mm}},
		{"8B, 1 token, 600 positions, fusion off", 1, 32, 8, 128, 600, 1024, false, false, false, true, []string{"attention_dec128_1c_128", "quant_q8_k", mm}},
		{"8B, 1 token, 100 positions, short on, fusion off", 1, 32, 8, 128, 100, 1024, false, true, false, true, []string{"attention_short128", "quant_q8_k", mm}},
		{"8B, 4 rows (a draft's verify), 100 positions", 4, 32, 8, 128, 100, 1024, false, false, false, false, []string{"attention_dec128", mmvName(quant.Q4_K, 4)}},
		{"8B, 4 rows, 600 positions", 4, 32, 8, 128, 600, 1024, false, false, false, false, []string{"attention_split1", mmvName(quant.Q4_K, 4)}},
		{"8B, 1 token, 2,000 positions", 1, 32, 8, 128, 2000, 4096, false, false, false, false, []string{"attention_dec128_1c", mm}},
		{"8B, 1 token, 3,000 positions", 1, 32, 8, 128, 3000, 4096, false, false, false, false, []string{"attention_dec128_1l2", mm}},
		{"8B, 1 token, 4,096 positions, fusion off", 1, 32, 8, 128, 4096, 8192, false, false, false, true, []string{"attention_dec128_1l2", "quant_q8_k", mm}},
		{"8B, 1 token, 5,000 positions", 1, 32, 8, 128, 5000, 8192, false, false, false, false, []string{"attention_dec128_1l4", mm}},
		{"8B, 1 token, 9,000 positions", 1, 32, 8, 128, 9000, 16384, false, false, false, false, []string{"attention_split1", mm}},
		{"1B (64-dim heads), 1 token, 9,000 positions", 1, 32, 8, 64, 9000, 16384, false, false, false, false, []string{"attention_split1", mm}},
		{"1B (64-dim heads), 1 token, 5,000 positions", 1, 32, 8, 64, 5000, 8192, false, false, false, false, []string{"attention_dec64_1l4", mm}},
		{"8B, 1 token, 16,385 positions", 1, 32, 8, 128, 16385, 32768, false, false, false, false, []string{"attention_split1", mm}},
		{"1B (64-dim heads), 1 token, 300 positions", 1, 32, 8, 64, 300, 1024, false, false, false, false, []string{"attention_dec64_1c_64", mm}},
		{"8B, 1 token, no mmq", 1, 32, 8, 128, 100, 1024, false, false, true, false, []string{"attention_smem", "quant_q8_k", mm}},
		{"1B (64-dim heads), 1 token, 100 positions", 1, 32, 8, 64, 100, 1024, false, false, false, false, []string{"attention_dec64_1_128", mm}},
		{"V2-Lite, 1 token, 100 positions", 1, 16, 1, 576, 100, 1024, true, false, false, false, []string{"attention_short576w"}},
		{"V2-Lite, 5 tokens, 200 positions", 5, 16, 1, 576, 200, 1024, true, false, false, false, []string{"attention_short576w"}},
		{"V2-Lite, 1 token, 600 positions", 1, 16, 1, 576, 600, 1024, true, false, false, false, []string{"attention_mla_split"}},
		{"V2-Lite, 64 tokens, 100 positions", 64, 16, 1, 576, 100, 1024, true, false, false, false, []string{"attention_mla_split"}},
	} {
		q := newAttentionQueue(c.noFuse)
		q.noMMQ = c.noMMQ
		if c.shortOn {
			q.short.mode = splitOn
		}
		p := backend.Attention{NHead: c.nhead, NKVHead: c.nkv, HeadDim: c.hd, VHeadDim: c.hd, Scale: 0.1, MaxLen: c.maxLen}
		rows, qcols := c.tokens, c.nhead*c.hd
		if c.mla { // head-major rows of one latent KV head
			rows, qcols = c.tokens*c.nhead, c.hd
			p.NHead, p.HeadGroups = 1, c.nhead
		}
		qt, dst := q.f32(rows, qcols), q.f32(rows, qcols)
		k := q.tensor(quant.F16, c.cacheLen, c.nkv*c.hd)
		v := k
		if !c.mla {
			v = q.tensor(quant.F16, c.cacheLen, c.nkv*c.hd)
		}
		pos := q.tensor(quant.I32, rows, 1)
		q.Attention(dst, qt, k, v, pos, p)
		if !c.mla {
			q.MatMul(q.f32(rows, 256), q.tensor(quant.Q4_K, 256, qcols), dst)
		}
		wantQueue(t, c.name, q.names(), c.want...)
	}
}

// TestAttentionChoiceDec1: one row's decode attention over at most 256 positions runs on
// attention_dec128_1's form for its positions (_64, _128, or the one for 256; that one
// with $EMBER_CUDA_DEC1_FULL) with 128 threads and the form's shared memory (a1_smem),
// its Q8_0 twin for a Q8_0 output projection, and attention_dec128 (256 threads) with
// $EMBER_CUDA_NO_DEC1.
func TestAttentionChoiceDec1(t *testing.T) {
	for _, c := range []struct {
		name         string
		no1, full    bool
		maxLen       int
		wt           quant.Type
		want         string
		threads, cap int
	}{
		{"Q4_K projection", false, false, 200, quant.Q4_K, "attention_dec128_1", dec1Threads, 256},
		{"Q8_0 projection", false, false, 200, quant.Q8_0, "attention_dec128_1_q8", dec1Threads, 256},
		{"1 position", false, false, 1, quant.Q4_K, "attention_dec128_1_64", dec1Threads, 64},
		{"64 positions, Q8_0", false, false, 64, quant.Q8_0, "attention_dec128_1_64_q8", dec1Threads, 64},
		{"65 positions", false, false, 65, quant.Q4_K, "attention_dec128_1_128", dec1Threads, 128},
		{"128 positions", false, false, 128, quant.Q4_K, "attention_dec128_1_128", dec1Threads, 128},
		{"129 positions", false, false, 129, quant.Q4_K, "attention_dec128_1", dec1Threads, 256},
		{"1 position, full", false, true, 1, quant.Q4_K, "attention_dec128_1", dec1Threads, 256},
		{"no dec1", true, false, 200, quant.Q4_K, "attention_dec128", decThreads, 0},
	} {
		q := newAttentionQueue(false)
		q.dec.no1, q.dec.full1 = c.no1, c.full
		q.kernels[mmvName(quant.Q8_0, 1)] = &kernel{name: mmvName(quant.Q8_0, 1)}
		p := backend.Attention{NHead: 32, NKVHead: 8, HeadDim: 128, VHeadDim: 128, Scale: 0.1, MaxLen: c.maxLen}
		qt, dst := q.f32(1, 4096), q.f32(1, 4096)
		k, v, pos := q.tensor(quant.F16, 1024, 1024), q.tensor(quant.F16, 1024, 1024), q.tensor(quant.I32, 1, 1)
		q.Attention(dst, qt, k, v, pos, p)
		q.MatMul(q.f32(1, 256), q.tensor(c.wt, 256, 4096), dst)
		d := slices.Clone(q.queue.dims[:5])
		got := q.names()
		if len(got) != 2 || got[0] != c.want {
			t.Errorf("%s: queued %v, want %s and the product", c.name, got, c.want)
			continue
		}
		if d[0] != 1 || d[1] != 8 || int(d[3]) != c.threads || (c.threads == dec1Threads && int(d[4]) != dec1Smem(128, c.cap)) {
			t.Errorf("%s: dims %v, want shared memory %d", c.name, d, dec1Smem(128, c.cap))
		}
	}
}

// TestDec1MatchesAttentionOne: the host's position bound and shared memory for
// attention_decD_1's forms (dec1MaxPositions, dec1Smem) are attention_one.cuh's A1_N and
// a1_smem, and attention_dec.cu has the forms dec1Form names.
func TestDec1MatchesAttentionOne(t *testing.T) {
	if n := kernelDefine(t, "attention_one.cuh", "A1_N"); n != dec1MaxPositions {
		t.Errorf("A1_N %d, dec1MaxPositions %d", n, dec1MaxPositions)
	}
	src, err := os.ReadFile("../../../kernels/cuda/attention_one.cuh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"return 2 * 16 * d + 2 * (2 * cap * d) + 16 * a1_pld(cap) + 16 * d * 4;",
		"a1_pld(int cap) { return 2 * cap + 16; }"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("attention_one.cuh no longer has %q: change dec1Smem with it", want)
		}
	}
	cu, err := os.ReadFile("../../../kernels/cuda/attention_dec.cu")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 64, 65, 128, 129, 256} {
		suf, cap := dec1Form(n, false)
		for _, d := range []int{64, 128} {
			c := map[int]string{64: "64", 128: "128", dec1MaxPositions: "A1_N"}[cap]
			if want := fmt.Sprintf("A1_KERNEL(%d, %s, attention_dec%d_1%s)", d, c, d, suf); !strings.Contains(string(cu), want) {
				t.Errorf("%d positions: attention_dec.cu has no %s", n, want)
			}
		}
	}
}

// TestAttentionChoiceOneNew: rows that are each their sequence's one new position
// (Attention.OneNew) over 600 positions take attention_decD_1c like one row; without the
// flag, or past dec1cMaxBlocks, attention_split1 or the batched kernels.
func TestAttentionChoiceOneNew(t *testing.T) {
	for _, c := range []struct {
		rows   int
		oneNew bool
		want   string
	}{{4, true, "attention_dec128_1c_128"}, {4, false, "attention_split1"}, {40, true, "attention_dec128"}} {
		q := newAttentionQueue(false)
		p := backend.Attention{NHead: 32, NKVHead: 8, HeadDim: 128, VHeadDim: 128, Scale: 0.1, MaxLen: 600, OneNew: c.oneNew}
		qt, dst := q.f32(c.rows, 4096), q.f32(c.rows, 4096)
		k, v := q.tensor(quant.F16, 1024, 1024), q.tensor(quant.F16, 1024, 1024)
		q.Attention(dst, qt, k, v, q.tensor(quant.I32, c.rows, 1), p)
		if names := q.names(); len(names) == 0 || names[0] != c.want {
			t.Errorf("%d rows, one new %v: queued %v, want %s first", c.rows, c.oneNew, names, c.want)
		}
	}
}
