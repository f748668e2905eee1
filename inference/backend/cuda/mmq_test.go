package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// These tests need no GPU: they check which products the tensor-core kernels take and
// queue on a backend with stand-in kernels and no device (as fuse_queue_test.go does).
// backendtest's MatMulTiles and deepseek2's TestCUDAGroupedMoE check their results on a
// GPU.

// mmqQueue is a backend that queues launches of the named kernels and can do nothing
// else; its scratch buffers are stand-in addresses, and its tensors get addresses from
// mem.
type mmqQueue struct {
	*Backend
	mem uint64
}

func newMMQQueue(names ...string) *mmqQueue {
	b := &Backend{kernels: map[string]*kernel{}, act: map[quant.Type]*scratch{}}
	for _, n := range names {
		b.kernels[n] = &kernel{name: n}
	}
	b.act[quant.Q8_0] = &scratch{ptr: 1 << 40, size: 1 << 30}
	b.act[quant.Q8_K] = &scratch{ptr: 2 << 40, size: 1 << 30}
	b.mmqPart = scratch{ptr: 3 << 40, size: 1 << 30}
	b.moeGroup = scratch{ptr: 4 << 40, size: 1 << 30}
	b.fuse.cfg = fuseCfg{read: true, off: true}
	return &mmqQueue{Backend: b, mem: 1 << 20}
}

// tensor is a rows x cols tensor of typ in GGUF row layout (F32 and I32: 4 bytes an
// element), 256-byte aligned as the driver's allocations are.
func (q *mmqQueue) tensor(t *testing.T, typ quant.Type, rows, cols int) *tensor {
	t.Helper()
	stride := 4 * cols
	if typ != quant.F32 && typ != quant.I32 {
		rb, err := quant.RowBytes(typ, uint64(cols))
		if err != nil {
			t.Fatal(err)
		}
		stride = int(rb)
	}
	x := &tensor{typ: typ, rows: rows, cols: cols, stride: stride, ptr: q.mem, size: rows * stride}
	q.mem += uint64((rows*stride + 255) / 256 * 256)
	return x
}

// queued is one launch of the queue as the batch holds it.
type queued struct {
	name           string
	gx, gy, bx, sm int
	args           []uint64
}

// launches lists the queued launches (without resetting the queue).
func (q *mmqQueue) launches() []queued {
	var out []queued
	a := 0
	for i, name := range q.queue.names {
		d := q.queue.dims[5*i:]
		n := int(q.queue.nargs[i])
		out = append(out, queued{name, int(d[0]), int(d[1]), int(d[3]), int(d[4]), q.queue.args[a : a+n]})
		a += n
	}
	return out
}

func (q *mmqQueue) names() []string {
	n := slices.Clone(q.queue.names)
	q.queue.reset()
	return n
}

// TestMMQTakesLegacy: Q5_0 and Q4_0 matrices go to the tensor-core kernels when their
// rows are whole 128-element halves at an 8-byte aligned address and stride (the kernels
// copy them in 8-byte pieces), as DeepSeek-V2-Lite's down experts (1408) and attn_k_b
// heads (128) are, views included; other widths, addresses and types do not.
func TestMMQTakesLegacy(t *testing.T) {
	for _, c := range []struct {
		typ          quant.Type
		cols, stride int
		ptr          uint64
		noMMQ, want  bool
	}{
		{quant.Q5_0, 1408, 968, 1 << 20, false, true},       // down expert rows
		{quant.Q5_0, 1408, 968, 1<<20 + 5*968, false, true}, // expert 5 of a stack
		{quant.Q5_0, 128, 88, 1<<20 + 3*88, false, true},    // a head view 3 rows in
		{quant.Q5_0, 4096, 2816, 1 << 20, false, true},
		{quant.Q4_0, 1408, 792, 1<<20 + 792, false, true},
		{quant.Q4_0, 128, 72, 1 << 20, false, true},
		{quant.Q5_0, 128, 88, 1<<20 + 4, false, false}, // not 8-byte aligned
		{quant.Q5_0, 160, 110, 1 << 20, false, false},  // not whole halves (and odd stride)
		{quant.Q5_0, 1408, 968, 1 << 20, true, false},  // $EMBER_CUDA_NO_MMQ
		{quant.Q4_1, 1408, 880, 1 << 20, false, false}, // no kernel
		{quant.Q5_1, 1408, 1056, 1 << 20, false, false},
		{quant.Q8_0, 1408, 1408 + 88, 1 << 20, false, true},
	} {
		b := &Backend{noMMQ: c.noMMQ}
		w := &tensor{typ: c.typ, rows: 576, cols: c.cols, stride: c.stride, ptr: c.ptr}
		if got := b.mmqTakes(w); got != c.want {
			t.Errorf("mmqTakes(%v, %d cols, stride %d, at %#x, noMMQ %v) = %v, want %v",
				c.typ, c.cols, c.stride, c.ptr, c.noMMQ, got, c.want)
		}
	}
	for _, c := range []struct {
		typ  quant.Type
		want int
	}{{quant.Q5_0, 3 * (128*176 + 64*(272+32))}, {quant.Q4_0, 3 * (128*144 + 64*(272+32))},
		{quant.Q4_K, 3 * (128*144 + 64*(272+80))}, {quant.Q6_K, 3 * (128*240 + 64*(272+16))}} {
		if got := mmqStages * mmqStageBytes(c.typ, mmqTN); got != c.want || got > mmqSmemMax {
			t.Errorf("%v: %d bytes of shared memory, want %d (at most %d)", c.typ, got, c.want, mmqSmemMax)
		}
	}
}

// TestMMQQueueHeadProducts: DeepSeek-V2-Lite's attn_k_b products of a batch (per head,
// n rows of q_nope against the head's 576 Q5_0 rows of 128) go to one mmq_run_q5_0
// launch for all heads, after one rounding of the activation to Q8_0; Q4_0 likewise.
// A head's matrices not equally spaced take one mmq launch a head.
func TestMMQQueueHeadProducts(t *testing.T) {
	const H, M, K = 16, 576, 128
	for _, n := range []int{64, 100} {
		for _, typ := range []quant.Type{quant.Q5_0, quant.Q4_0} {
			mm, run := mmqDenseKernel((&Backend{}).mmqTile(n))+suffix[typ], "mmq_run_"+suffix[typ]
			q := newMMQQueue("quant_q8", mm, run)
			w, x, d := q.tensor(t, typ, (H+1)*M, K), q.tensor(t, quant.F32, H*n, K), q.tensor(t, quant.F32, H*n, M)
			groups := make([]backend.Group, H)
			for h := range groups {
				groups[h] = backend.Group{Dst: q.View(d, h*n, n), W: q.View(w, h*M, M), Row0: h * n}
			}
			q.MatMulGroups(x, groups)
			if got, want := q.names(), []string{"quant_q8", run}; !slices.Equal(got, want) {
				t.Errorf("%v heads of %d rows: queued %v, want %v", typ, n, got, want)
			}
			q.queue.reset()
			groups[H-1].W = q.View(w, H*M, M) // a gap before the last head's matrix
			q.MatMulGroups(x, groups)
			want := []string{"quant_q8"}
			for range H {
				want = append(want, mm)
			}
			if got := q.names(); !slices.Equal(got, want) {
				t.Errorf("%v heads of %d rows, not equally spaced: queued %v, want %v", typ, n, got, want)
			}
		}
	}
}

// headProjs is the per-head projections of n rows of DeepSeek's interleaved query
// matrix w (H heads of a + c rows): head h's first a rows into rows h*n.. of d1, its
// next c into those of d2.
func (q *mmqQueue) headProjs(w, d1, d2 *tensor, H, a, c, n int) []backend.Proj {
	var projs []backend.Proj
	for h := 0; h < H; h++ {
		projs = append(projs, backend.Proj{Dst: q.View(d1, h*n, n), W: q.View(w, h*(a+c), a)},
			backend.Proj{Dst: q.View(d2, h*n, n), W: q.View(w, h*(a+c)+a, c)})
	}
	return projs
}

// TestMMQQueueSharedHeadProjections: DeepSeek-V2-Lite's per-head q_nope and q_pe
// projections of a batch (views of attn_q interleaved, every head reading the same rows)
// are two mmq_run launches after one rounding, not two launches a head; 16 heads of 64
// rows are 16 tiles, so each run's K steps are split and summed by mmq_reduce.
func TestMMQQueueSharedHeadProjections(t *testing.T) {
	const H, nope, rope, K, n = 16, 128, 64, 2048, 64
	q := newMMQQueue("quant_q8_k", "mmq_q4_k", "mmq_run_q4_k", "mmq_reduce")
	w, x := q.tensor(t, quant.Q4_K, H*(nope+rope), K), q.tensor(t, quant.F32, n, K)
	qn, qp := q.tensor(t, quant.F32, H*n, nope), q.tensor(t, quant.F32, H*n, rope)
	q.MatMulShared(x, q.headProjs(w, qn, qp, H, nope, rope, n))
	if got, want := q.names(), []string{"quant_q8_k", "mmq_run_q4_k", "mmq_reduce", "mmq_run_q4_k", "mmq_reduce"}; !slices.Equal(got, want) {
		t.Errorf("queued %v, want %v", got, want)
	}
}

// TestMMQQueueGroupedMoE: a batch of more than moeMaxPairs pairs whose down experts are
// Q5_0 (or Q4_0) rows of 1408 runs grouped on the device (moe_group, mmq_id for gate, up
// and down) instead of declining to the host, which would read the router logits back;
// in tiles as wide as moeTile picks for the pairs an expert (or $EMBER_CUDA_MOE_TILE
// fixes), each width with its kernels and moe_group told the width.
func TestMMQQueueGroupedMoE(t *testing.T) {
	const E, F, k = 256, 1408, 4
	for _, c := range []struct{ n, X, fixed, tn int }{{20, 32, 0, 8}, {20, 16, 0, 16}, {32, 8, 0, 16}, {200, 8, 0, 64}, {200, 8, 8, 8}, {20, 16, 64, 64}} {
		for _, down := range []quant.Type{quant.Q5_0, quant.Q4_0} {
			t.Run(fmt.Sprintf("%v/%d-rows/tile-%d", down, c.n, c.fixed), func(t *testing.T) {
				id := mmqIDKernel(c.tn)
				mmDown := id + suffix[down]
				q := newMMQQueue("moe_topk", "moe_group", "quant_q8_k", "quant_q8", id+"q4_k", mmDown, "swiglu_f32", "moe_sum")
				q.moeTN = c.fixed
				n, X := c.n, c.X
				x, logits := q.tensor(t, quant.F32, n, E), q.tensor(t, quant.F32, n, X)
				gate, up, dw := q.tensor(t, quant.Q4_K, X*F, E), q.tensor(t, quant.Q4_K, X*F, E), q.tensor(t, down, X*E, F)
				ids, wts := q.tensor(t, quant.I32, n, k), q.tensor(t, quant.F32, n, k)
				g, u, d := q.tensor(t, quant.F32, n*k, F), q.tensor(t, quant.F32, n*k, F), q.tensor(t, quant.F32, n*k, E)
				var ok bool
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("RoutedExperts with %v down experts: %v", down, r)
						}
					}()
					ok = q.RoutedExperts(x, x, logits, gate, up, dw, nil, ids, wts, g, u, d, 1, 1, false, true, 1)
				}()
				if !ok {
					t.Fatalf("RoutedExperts declined %d pairs with %v down experts of %d", n*k, down, F)
				}
				ls := q.launches()
				got := q.names()
				want := []string{"moe_topk", "moe_group", "quant_q8_k", id + "q4_k", id + "q4_k", "swiglu_f32", "quant_q8", mmDown, "moe_sum"}
				if !slices.Equal(got, want) {
					t.Errorf("queued %v, want %v", got, want)
				}
				for _, l := range ls {
					switch name := l.name; {
					case name == "moe_group":
						if tn := int(l.args[len(l.args)-1]); tn != c.tn {
							t.Errorf("moe_group groups tiles of %d pairs, want %d", tn, c.tn)
						}
					case strings.HasPrefix(name, "mmq_id"):
						if smem, want := l.sm, mmqStages*mmqStageBytes(gate.typ, c.tn); name == id+"q4_k" && smem != want {
							t.Errorf("%s: %d bytes of shared memory, want %d", name, smem, want)
						}
						if gy, want := l.gy, (n*k+c.tn-1)/c.tn+X; gy != want {
							t.Errorf("%s: %d tiles, want %d", name, gy, want)
						}
					}
				}
			})
		}
	}
}

// TestMMQKernelsDeclared: every type mmqTakes has its mmq_ and mmq_id_ kernels, named
// as mmq.go launches them, in kernels/cuda/mmq.cu (MMQ(suffix, T_type)).
func TestMMQKernelsDeclared(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "kernels", "cuda", "mmq.cu"))
	if err != nil {
		t.Fatalf("reading the mmq kernels' source: %v", err)
	}
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.Q5_0, quant.Q4_0} {
		s, ok := suffix[typ]
		if !ok {
			t.Fatalf("%v: no kernel suffix", typ)
		}
		decl := fmt.Sprintf("\nMMQ(%s, T_%s)\n", s, typ)
		if !strings.Contains(string(src), decl) {
			t.Errorf("%v: kernels/cuda/mmq.cu has no %q (kernels mmq_%s, mmq_id_%s)", typ, strings.TrimSpace(decl), s, s)
		}
		if run := fmt.Sprintf("\nMMQ_RUN(%s, T_%s)\n", s, typ); !strings.Contains(string(src), run) {
			t.Errorf("%v: kernels/cuda/mmq.cu has no %q", typ, strings.TrimSpace(run))
		}
	}
}

// TestMMVQueuePairedRuns: at one row (a decode step) DeepSeek-V2-Lite's per-head q_nope
// and q_pe projections are one mmv_id launch (the q_pe run as its y = 1 blocks: its
// matrix, output, row stride, rows and row blocks), and a token's gate and up experts
// one more (beside moe_topk's routing; with rte, the default, the two as
// mmv_route_q4_k_64s: eight experts), and the weighted sum with the shared experts'
// output added one; with fusion off, two launches each.
func TestMMVQueuePairedRuns(t *testing.T) {
	const H, nope, rope, K = 16, 128, 64, 2048
	for _, c := range []struct{ off, rte bool }{{false, false}, {false, true}, {true, true}} {
		off := c.off
		q := newMMQQueue("quant_q8_k", "mmv_id_q4_k", "moe_topk", "mmv_route_q4_k_64s", "swiglu_f32", "swiglu_q8_k", "moe_sum", "moe_sum_add", "add_f32")
		q.fuse.cfg = fuseCfg{read: true, off: off, rte: c.rte}
		w, x := q.tensor(t, quant.Q4_K, H*(nope+rope), K), q.tensor(t, quant.F32, 1, K)
		qn, qp := q.tensor(t, quant.F32, H, nope), q.tensor(t, quant.F32, H, rope)
		q.MatMulShared(x, q.headProjs(w, qn, qp, H, nope, rope, 1))
		ls := q.launches()
		names := q.names()
		if off {
			if want := []string{"quant_q8_k", "mmv_id_q4_k", "mmv_id_q4_k"}; !slices.Equal(names, want) {
				t.Errorf("heads, fusion off: queued %v, want %v", names, want)
			}
		} else {
			if want := []string{"quant_q8_k", "mmv_id_q4_k"}; !slices.Equal(names, want) {
				t.Fatalf("heads: queued %v, want %v", names, want)
			}
			l := ls[1]
			nrb, nrb2 := nope/rowsPerBlock(quant.Q4_K, 1, 0), rope/rowsPerBlock(quant.Q4_K, 1, 0)
			if l.gx != nrb*H || l.gy != 2 || !slices.Equal(l.args[14:], []uint64{w.ptr + uint64(nope*w.stride), qp.ptr, rope, rope, uint64(nrb2)}) {
				t.Errorf("heads: mmv_id grid %dx%d, second product %v", l.gx, l.gy, l.args[14:])
			}
		}

		// One token's 4 of 8 experts: gate and up (Q4_K stacks alike) in one launch.
		const E, X, F, k = 256, 8, 512, 4
		xe, logits := q.tensor(t, quant.F32, 1, E), q.tensor(t, quant.F32, 1, X)
		gate, up, down := q.tensor(t, quant.Q4_K, X*F, E), q.tensor(t, quant.Q4_K, X*F, E), q.tensor(t, quant.Q4_K, X*E, F)
		ids, wts := q.tensor(t, quant.I32, 1, k), q.tensor(t, quant.F32, 1, k)
		g, u, d := q.tensor(t, quant.F32, k, F), q.tensor(t, quant.F32, k, F), q.tensor(t, quant.F32, k, E)
		mo, sh := q.tensor(t, quant.F32, 1, E), q.tensor(t, quant.F32, 1, E)
		if !q.RoutedExperts(mo, xe, logits, gate, up, down, nil, ids, wts, g, u, d, 1, 1, false, true, 1) {
			t.Fatal("RoutedExperts declined one token")
		}
		q.Add(xe, mo, sh) // the shared experts' output added: one launch with moe_sum
		ls = q.launches()
		names = q.names()
		want := []string{"moe_topk", "quant_q8_k", "mmv_id_q4_k", "swiglu_q8_k", "mmv_id_q4_k", "moe_sum_add"}
		switch {
		case off:
			want = []string{"moe_topk", "quant_q8_k", "mmv_id_q4_k", "mmv_id_q4_k", "swiglu_f32", "quant_q8_k", "mmv_id_q4_k", "moe_sum", "add_f32"}
		case c.rte:
			want = []string{"quant_q8_k", "mmv_route_q4_k_64s", "swiglu_q8_k", "mmv_id_q4_k", "moe_sum_add"}
		}
		if !slices.Equal(names, want) {
			t.Errorf("experts, %+v: queued %v, want %v", c, names, want)
			continue
		}
		if !off && c.rte {
			// the routing's arguments, then gate, up, row stride, expert stride, the Q8_K
			// row, g, u, g's row stride, rows an expert and columns, the guess (on);
			// 2 x 4 pairs x 128 four-row tasks on 256 blocks
			l := ls[1]
			if l.gx != 256 || l.gy != 1 || len(l.args) != 22 || l.args[0] != ids.ptr || l.args[1] != wts.ptr || l.args[2] != logits.ptr ||
				!slices.Equal(l.args[4:6], []uint64{X, k}) || !slices.Equal(l.args[11:15], []uint64{gate.ptr, up.ptr, uint64(gate.stride), uint64(F * gate.stride)}) ||
				!slices.Equal(l.args[16:], []uint64{g.ptr, u.ptr, F, F, E, 1}) {
				t.Errorf("experts: mmv_route_q4_k_64s grid %dx%d, args %v", l.gx, l.gy, l.args)
			}
			if l := ls[4]; !slices.Equal(l.args, []uint64{mo.ptr, d.ptr, wts.ptr, k, E, 1, xe.ptr, sh.ptr}) {
				t.Errorf("moe_sum_add args %v", l.args)
			}
		}
		if !off && !c.rte {
			l := ls[2]
			nrb := F / rowsPerBlock(quant.Q4_K, 1, 0)
			if l.gy != 2 || !slices.Equal(l.args[14:], []uint64{up.ptr, u.ptr, F, F, uint64(nrb)}) {
				t.Errorf("experts: mmv_id grid y %d, second product %v", l.gy, l.args[14:])
			}
			if l := ls[5]; !slices.Equal(l.args, []uint64{mo.ptr, d.ptr, wts.ptr, k, E, 1, xe.ptr, sh.ptr}) {
				t.Errorf("moe_sum_add args %v", l.args)
			}
		}
	}
}

// TestMMVQueueLeadAndRuns: one row's latent and rope-key projections ahead of the
// per-head q_nope and q_pe runs (DeepSeek-V2-Lite's decode step) round the row once:
// mmv_multi for the two, one paired mmv_id for the heads; a lead of another dot partner,
// or fusion off, keeps the lists apart (each projection then on its own launch).
func TestMMVQueueLeadAndRuns(t *testing.T) {
	const H, nope, rope, K = 16, 128, 64, 2048
	for _, c := range []struct {
		name    string
		off, q8 bool
		want    []string
	}{
		{"fused", false, false, []string{"quant_q8_k", "mmv_multi", "mmv_id_q4_k"}},
		{"lead of Q8_0", false, true, nil},
		{"fusion off", true, false, nil},
	} {
		q := newMMQQueue("quant_q8_k", "quant_q8", "mmv_multi", "mmv_id_q4_k", "mmv_q4_k_1", "mmv_q8_0_1")
		q.act[quant.Q8_0] = &scratch{ptr: 6 << 40, size: 1 << 30}
		q.fuse.cfg = fuseCfg{read: true, off: c.off}
		lt := quant.Q4_K
		if c.q8 {
			lt = quant.Q8_0
		}
		w, x := q.tensor(t, quant.Q4_K, H*(nope+rope), K), q.tensor(t, quant.F32, 1, K)
		kvA, kPE := q.tensor(t, lt, 512, K), q.tensor(t, lt, 64, K)
		kv, kpe := q.tensor(t, quant.F32, 1, 512), q.tensor(t, quant.F32, 1, 64)
		qn, qp := q.tensor(t, quant.F32, H, nope), q.tensor(t, quant.F32, H, rope)
		projs := append([]backend.Proj{{Dst: kv, W: kvA}, {Dst: kpe, W: kPE}}, q.headProjs(w, qn, qp, H, nope, rope, 1)...)
		q.MatMulShared(x, projs)
		got := q.names()
		if c.want != nil {
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: queued %v, want %v", c.name, got, c.want)
			}
			continue
		}
		if len(got) < 2+2*H {
			t.Errorf("%s: queued %v, want a launch a projection", c.name, got)
		}
	}
}

// TestMMVQueueUnpairedTypes: runs of weights whose mmv_id is the generic kernel (Q5_0,
// F16) are not paired (that kernel's y blocks are activation row groups): two launches.
func TestMMVQueueUnpairedTypes(t *testing.T) {
	const H, a, c, K = 4, 128, 64, 256
	for _, typ := range []quant.Type{quant.Q5_0, quant.F16} {
		q := newMMQQueue("quant_q8", "quant_half", "mmv_id_q5_0", "mmv_id_f16")
		q.act[quant.Q8_0] = &scratch{ptr: 6 << 40, size: 1 << 30}
		q.act[quant.F16] = &scratch{ptr: 7 << 40, size: 1 << 30}
		w, x := q.tensor(t, typ, H*(a+c), K), q.tensor(t, quant.F32, 1, K)
		d1, d2 := q.tensor(t, quant.F32, H, a), q.tensor(t, quant.F32, H, c)
		q.MatMulShared(x, q.headProjs(w, d1, d2, H, a, c, 1))
		got := q.names()
		mm := "mmv_id_" + suffix[typ]
		if len(got) != 3 || got[1] != mm || got[2] != mm {
			t.Errorf("%v heads: queued %v, want a rounding and two %s", typ, got, mm)
		}
	}
}

// TestRunKernelWeights: a run of per-head products takes mmv_idw (its first weight loads
// before the PDL wait) only when every matrix is a weight or a view of one, and the type
// has an mv1 kernel; EMBER_CUDA_NO_IDW's switch and an activation matrix keep mmv_id.
func TestRunKernelWeights(t *testing.T) {
	b := &Backend{}
	w := &tensor{typ: quant.Q4_K, rows: 8, cols: 256, stride: 144, ptr: 1 << 20, weight: true}
	v := get(b.View(w, 4, 4))
	act := &tensor{typ: quant.Q4_K, rows: 8, cols: 256, stride: 144, ptr: 2 << 20}
	run := func(ws ...*tensor) []product {
		var ps []product
		for _, m := range ws {
			ps = append(ps, product{w: m})
		}
		return ps
	}
	for _, c := range []struct {
		name    string
		typ     quant.Type
		ps, ps2 []product
		noIDW   bool
		want    string
	}{
		{"views", quant.Q4_K, run(v, v), nil, false, "mmv_idw_q4_k"},
		{"weights and views", quant.Q4_K, run(w, v), run(v), false, "mmv_idw_q4_k"},
		{"an activation", quant.Q4_K, run(v, act), nil, false, "mmv_id_q4_k"},
		{"an activation in the second run", quant.Q4_K, run(v, v), run(act), false, "mmv_id_q4_k"},
		{"switched off", quant.Q4_K, run(v, v), nil, true, "mmv_id_q4_k"},
		{"Q5_0", quant.Q5_0, run(v, v), nil, false, "mmv_idw_q5_0"},
		{"F16", quant.F16, run(v, v), nil, false, "mmv_idw_f16"},
		{"Q3_K", quant.Q3_K, run(v, v), nil, false, "mmv_idw_q3_k"},
		{"Q4_1", quant.Q4_1, run(v, v), nil, false, "mmv_idw_q4_1"},
		{"F32 (no mv1 kernel)", quant.F32, run(v, v), nil, false, "mmv_id_f32"},
	} {
		b.noIDW = c.noIDW
		if got := b.runKernel(c.typ, c.ps, c.ps2); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if v.weight || !v.ofWeight || get(b.View(v, 0, 2)).ofWeight != true {
		t.Errorf("a view of a weight (or of such a view) must be marked ofWeight, not weight")
	}
}
