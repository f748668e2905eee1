package cuda

import (
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestAttentionLatentChoice: DeepSeek-V2-Lite's latent attention of one or a few
// tokens over a short cache (attention_short576's cases) writes the latent dims alone
// (ocol 64), one token's rows copying their older cache rows before the kernel's wait
// (pre), and attn_v_b's Q8_K rounding joins it: no get_rows_q8_k, no quant_q8_k,
// and with fusion off the rounding is its own launch. Cases on other kernels (a long
// cache, many tokens, the MLA kernels forced) and shapes it does not take (no dims
// left out, grouped heads) are declined with nothing queued, for Attention and the
// gather to run.
func TestAttentionLatentChoice(t *testing.T) {
	const hd, heads, skip = 576, 16, 64
	const mm = "mmv_id_q4_k" // the heads' run (groups.go)
	for _, c := range []struct {
		name            string
		tokens, maxLen  int
		noFuse, mlaOn   bool
		skip, nhead, hg int
		want            []string // nil: declined
	}{
		{"1 token, 100 positions", 1, 100, false, false, skip, 1, heads, []string{"attention_short576w", mm}},
		{"5 tokens, 256 positions", 5, 256, false, false, skip, 1, heads, []string{"attention_short576w", mmvName(quant.Q4_K, 8)}},
		{"1 token, fusion off", 1, 100, true, false, skip, 1, heads, []string{"attention_short576w", "quant_q8_k", mm}},
		{"1 token, 600 positions", 1, 600, false, false, skip, 1, heads, nil},
		{"6 tokens", 6, 100, false, false, skip, 1, heads, nil},
		{"MLA kernels forced", 1, 100, false, true, skip, 1, heads, nil},
		{"nothing left out", 1, 100, false, false, 0, 1, heads, nil},
		{"two KV heads' rows", 1, 100, false, false, skip, 2, heads, nil},
	} {
		q := newAttentionQueue(c.noFuse)
		q.kernels[mm] = &kernel{name: mm}
		if c.mlaOn {
			q.dec.mla = splitOn
		}
		rows := c.tokens * heads
		p := backend.Attention{NHead: c.nhead, NKVHead: c.nhead, HeadDim: hd, VHeadDim: hd, Scale: 0.1, MaxLen: c.maxLen,
			HeadGroups: c.hg}
		qt, lat := q.f32(rows, c.nhead*hd), q.f32(rows, c.nhead*(hd-c.skip))
		k, pos := q.tensor(quant.F16, 1024, c.nhead*hd), q.tensor(quant.I32, rows, 1)
		took := q.AttentionLatent(lat, qt, k, k, pos, p, c.skip)
		if took != (c.want != nil) {
			t.Errorf("%s: AttentionLatent took it: %v", c.name, took)
			continue
		}
		if !took {
			wantQueue(t, c.name, q.names())
			continue
		}
		na := int(q.queue.nargs[0])
		tail := slices.Clone(q.queue.args[na-3 : na]) // ocol, the Q8_K rows and their stride
		// pre: one token's head rows copy the older cache rows before the kernel's wait;
		// several tokens (not said to be of distinct sequences) do not
		if pre, want := q.queue.args[na-4], c.tokens == 1; (pre == 1) != want {
			t.Errorf("%s: attention_short576's pre %d, want it %v", c.name, pre, want)
		}
		// attn_v_b's heads, a row each (the model's MatMulGroups)
		w, out := q.tensor(quant.Q4_K, heads*128, hd-c.skip), q.f32(rows, 128)
		var gs []backend.Group
		for h := range heads {
			gs = append(gs, backend.Group{Dst: q.View(out, h*c.tokens, c.tokens), W: q.View(w, h*128, 128), Row0: h * c.tokens})
		}
		backend.MatMulGroups(q, lat, gs)
		fused := q.queue.args[na-3 : na]
		got := q.names()
		if c.tokens > 1 { // a run of c.tokens rows a head: a launch a head
			got = slices.Compact(got)
		}
		wantQueue(t, c.name, got, c.want...)
		if int(tail[0]) != c.skip || tail[1] != 0 || tail[2] != 0 {
			t.Errorf("%s: attention_short576's last arguments %v before the product, want [%d 0 0]", c.name, tail, c.skip)
		}
		if !c.noFuse && (int(fused[0]) != c.skip || fused[1] == 0 || fused[2] == 0) {
			t.Errorf("%s: fused attention_short576's last arguments %v, want [%d, the Q8_K rows, their stride]", c.name, fused, c.skip)
		}
	}
}
