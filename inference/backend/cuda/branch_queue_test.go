package cuda

import (
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// These tests need no GPU: they queue a mixture-of-experts layer's shape of ops with a
// side branch (Beside) on a queue-only backend and check where the branch lies in the
// queue, the graph's edges it gives, and that the side rounds into scratch of its own.
// branch_test.go checks the results of branched graphs on a GPU.

// branchLayer is a MoE layer's FFN reduced to what Beside sees: the residual add and
// norm before it, the shared experts' products (side), two products for the router's
// and routed experts' chain (main), and the sum that joins them.
type branchLayer struct {
	q                                   *queueOnly
	sum, x, res, cur, nw                *tensor
	g, u, so, m1, m2, out               *tensor
	wg, wu, wd, wa, wb                  *tensor
	sideQ8K, mainQ8K, sideAct, mainActs uint64
}

// branchQueue readies q's branches as a device backend has them: the side's and the
// fork's rounding scratch, no streamed products (as without $EMBER_CUDA_MVS), and every
// kernel registered so far waiting for the one before (PDL).
func branchQueue(q *queueOnly) {
	q.br.act = map[quant.Type]*scratch{quant.Q8_K: {ptr: 3 << 40, size: 1 << 30}}
	q.br.pin = scratch{ptr: 4 << 40, size: 1 << 30}
	q.mvsc.off = true
	for _, k := range q.kernels {
		k.pdl = true
	}
}

func newBranchLayer(q *queueOnly) *branchLayer {
	const embd, ffn = 512, 1024
	branchQueue(q)
	return &branchLayer{q: q,
		sum: q.f32(1, embd), x: q.f32(1, embd), res: q.f32(1, embd), cur: q.f32(1, embd), nw: q.f32(1, embd),
		g: q.f32(1, ffn), u: q.f32(1, ffn), so: q.f32(1, embd), m1: q.f32(1, embd), m2: q.f32(1, embd), out: q.f32(1, embd),
		wg: q.tensor(quant.Q4_K, ffn, embd), wu: q.tensor(quant.Q4_K, ffn, embd), wd: q.tensor(quant.Q4_K, embd, ffn),
		wa: q.tensor(quant.Q4_K, embd, embd), wb: q.tensor(quant.Q4_K, embd, embd)}
}

// queue queues the layer; mid, when set, runs at the start of main.
func (l *branchLayer) queue(mid func()) {
	q := l.q
	q.Add(l.sum, l.x, l.res)
	q.RMSNorm(l.cur, l.sum, l.nw, 1e-5)
	q.Beside(1, func() {
		q.MatMulShared(l.cur, []backend.Proj{{Dst: l.g, W: l.wg}, {Dst: l.u, W: l.wu}})
		q.SwiGLU(l.g, l.g, l.u)
		q.MatMul(l.so, l.wd, l.g)
	}, func() {
		if mid != nil {
			mid()
		}
		q.MatMul(l.m1, l.wa, l.cur)
		q.SwiGLU(l.m1, l.m1, l.m1)
		q.MatMul(l.m2, l.wb, l.m1)
	})
	q.Add(l.out, l.m2, l.so)
}

// TestBranchQueue: the side's launches follow the norm, the main run's first launch
// follows the norm too, and the join follows both runs' last launches; the norm's
// rounding (fused into it: the fork's) goes to the pinned scratch, which the main run's
// first product takes too (no quant_q8_k of cur again), and the side's SwiGLU rounding
// to the side's scratch.
func TestBranchQueue(t *testing.T) {
	q := newQueueOnly(false)
	l := newBranchLayer(q)
	l.queue(nil)
	mm := mmvName(quant.Q4_K, 1)
	wantQueue(t, "branched layer", slices.Clone(q.queue.names), "add_rms_norm_q8_k_1", "mmv_multi", "swiglu_q8_k", mm,
		mm, "swiglu_q8_k", mm, "add_f32")
	if want := []branch{{fork: 0, main: 4, join: 7}}; !slices.Equal(q.queue.brs, want) {
		t.Fatalf("branches %v, want %v", q.queue.brs, want)
	}
	a := q.queue.args
	side, main, pin := q.br.act[quant.Q8_K].ptr, q.act[quant.Q8_K].ptr, q.br.pin.ptr
	if side == main || pin == side || pin == main {
		t.Fatalf("Q8_K scratch shared: side %#x, main %#x, pinned %#x", side, main, pin)
	}
	argsOf := func(i int) []uint64 {
		off := 0
		for _, n := range q.queue.nargs[:i] {
			off += int(n)
		}
		return a[off : off+int(q.queue.nargs[i])]
	}
	// add_rms_norm_q8_k_1's arguments end with the Q8_K row; swiglu_q8_k's with the
	// Q8_K rows, their stride, and the f16 rows and their stride (none here: fuseHalf);
	// the mat-vecs' (mmv_multi and mmv_q4_k_1) start with ... the activation rows at
	// index 2 or 1.
	if s := argsOf(0); s[len(s)-1] != pin {
		t.Errorf("the norm rounds into %#x, want the pinned scratch %#x", s[len(s)-1], pin)
	}
	if s := argsOf(2); s[len(s)-4] != side {
		t.Errorf("the side's SwiGLU rounds into %#x, want the side's scratch %#x", s[len(s)-4], side)
	}
	if s := argsOf(5); s[len(s)-4] != main {
		t.Errorf("the main run's SwiGLU rounds into %#x, want the main scratch %#x", s[len(s)-4], main)
	}
	if !slices.Contains(argsOf(4), pin) || !slices.Contains(argsOf(1), pin) {
		t.Errorf("the side's and the main run's first products do not read the pinned rounding %#x: %#x, %#x", pin, argsOf(1), argsOf(4))
	}
	if slices.Contains(argsOf(6), pin) || slices.Contains(argsOf(3), pin) {
		t.Error("a later product reads the pinned rounding")
	}
	if q.br.pinned.out != 0 {
		t.Error("a rounding is still pinned after the branch")
	}
	p0, p1, prog, prog1, ok := q.queue.dag(defaultBranchEdges)
	if !ok {
		t.Fatal("no graph with branches")
	}
	wantP0 := []int{-1, 0, 1, 2, 0, 4, 5, 6}
	wantP1 := []int{-1, -1, -1, -1, -1, -1, -1, 3}
	for i := range p0 {
		if int(p0[i]) != wantP0[i] || int(p1[i]) != wantP1[i] {
			t.Errorf("launch %d (%s) follows %d and %d, want %d and %d", i, q.queue.names[i], p0[i], p1[i], wantP0[i], wantP1[i])
		}
	}
	// By default (edges 1) the side leaves the fork by a programmatic edge and enters the
	// join by a full one, and the main run leaves the fork by a programmatic edge; edges 3
	// makes the join's edge off the side programmatic too; edges 7 makes the main run's
	// edge off the fork a full one; edges 0 makes the side's edges full and keeps the main
	// run's chain programmatic.
	if prog[1] != 1 || prog[4] != 1 || prog[7] != 1 || prog1[7] != 0 {
		t.Errorf("programmatic edges %v and %v", prog, prog1)
	}
	if _, _, prog, prog1, _ = q.queue.dag(3); prog[1] != 1 || prog[4] != 1 || prog[7] != 1 || prog1[7] != 1 {
		t.Errorf("edges 3: programmatic edges %v and %v", prog, prog1)
	}
	if _, _, prog, prog1, _ = q.queue.dag(7); prog[1] != 1 || prog[4] != 0 || prog[7] != 1 || prog1[7] != 1 {
		t.Errorf("edges 7: programmatic edges %v and %v", prog, prog1)
	}
	if _, _, prog, prog1, _ = q.queue.dag(0); prog[1] != 0 || prog[4] != 1 || prog1[7] != 0 {
		t.Errorf("edges 0: programmatic edges %v and %v", prog, prog1)
	}
	if _, _, _, prog1, _ = q.queue.dag(2); prog1[7] != 1 {
		t.Errorf("edges 2: the join's edge off the side is not programmatic: %v", prog1)
	}
}

// TestBranchChunks: a chunk's flush waits until the branch's join is queued.
func TestBranchChunks(t *testing.T) {
	q := newQueueOnly(false)
	l := newBranchLayer(q)
	q.chunk, q.noRamp = 4, true
	var sizes []int
	var oks []bool
	q.dryFlush = func(names []string) {
		_, _, _, _, ok := q.queue.dag(0)
		sizes, oks = append(sizes, len(names)), append(oks, ok)
	}
	l.queue(nil)
	q.Add(l.out, l.m1, l.so)
	if !slices.Equal(sizes, []int{8}) || !oks[0] {
		t.Errorf("chunks of 4: batches of %v launches, with branches %v; want one of 8, branched", sizes, oks)
	}
}

// TestBranchFlushes: a flush inside a branch leaves the batches plain chains, or a
// branch whose fork was in the batch before (a root); without a branch dag declines.
func TestBranchFlushes(t *testing.T) {
	q := newQueueOnly(false)
	l := newBranchLayer(q)
	var brs [][]branch
	var oks []bool
	q.dryFlush = func([]string) {
		brs = append(brs, slices.Clone(q.queue.brs))
		_, _, _, _, ok := q.queue.dag(defaultBranchEdges)
		oks = append(oks, ok)
	}
	l.queue(func() { q.flush() }) // between the side and the main run
	q.flush()
	if len(brs) != 2 || len(brs[0]) != 0 || len(brs[1]) != 1 || oks[0] || oks[1] {
		t.Fatalf("flushed between the runs: branches %v, dag %v", brs, oks)
	}
	if b := brs[1][0]; b.fork != -4 || b.main != 0 || b.join != 3 {
		t.Errorf("the branch in the second batch: %+v, want fork -4, main 0, join 3 (the main run takes the pinned rounding)", b)
	}
	// Flushed at the fork: the side and main runs are roots of the next batch.
	brs, oks = nil, nil
	q.Add(l.sum, l.x, l.res)
	q.RMSNorm(l.cur, l.sum, l.nw, 1e-5)
	q.flush()
	q.Beside(1, func() {
		q.MatMul(l.so, l.wd, l.g)
	}, func() {
		q.MatMul(l.m1, l.wa, l.cur)
	})
	q.Add(l.out, l.m1, l.so)
	q.flush()
	if len(brs) != 2 || len(brs[1]) != 1 || !oks[1] {
		t.Fatalf("flushed at the fork: branches %v, dag %v", brs, oks)
	}
	if b := brs[1][0]; b.fork != -1 || b.main != 2 || b.join != 4 {
		t.Errorf("the branch after the fork's batch: %+v, want fork -1, main 2, join 4", b)
	}
	// No Beside: no branch.
	q.Add(l.out, l.m1, l.so)
	if _, _, _, _, ok := q.queue.dag(0); ok {
		t.Error("a chain gave a graph with branches")
	}
	// Batches of more than one row, and $EMBER_CUDA_NO_BRANCH, queue a chain.
	q.queue.reset()
	q.Beside(2, func() { q.MatMul(l.so, l.wd, l.g) }, func() { q.MatMul(l.m1, l.wa, l.cur) })
	q.Add(l.out, l.m1, l.so)
	q.br.off = true
	q.Beside(1, func() { q.MatMul(l.so, l.wd, l.g) }, func() { q.MatMul(l.m1, l.wa, l.cur) })
	q.Add(l.out, l.m1, l.so)
	if len(q.queue.brs) != 0 || q.br.cur != nil {
		t.Errorf("branches %v queued for two rows or with branches off", q.queue.brs)
	}
}

// TestBranchNoPin: with $EMBER_CUDA_NO_PIN the main run rounds cur itself (quant_q8_k
// into the main scratch) and nothing is pinned.
func TestBranchNoPin(t *testing.T) {
	t.Setenv(NoPinEnv, "1")
	q := newQueueOnly(false)
	l := newBranchLayer(q)
	q.br.noPin = branchFromEnv().noPin
	l.queue(nil)
	mm := mmvName(quant.Q4_K, 1)
	wantQueue(t, "branched layer, no pin", slices.Clone(q.queue.names), "add_rms_norm_q8_k_1", "mmv_multi", "swiglu_q8_k", mm,
		"quant_q8_k", mm, "swiglu_q8_k", mm, "add_f32")
}
