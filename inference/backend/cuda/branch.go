package cuda

/*
#include <stdlib.h>
#include "launch.h"

// em_graph_build_dag makes an executable graph of a batch of launches (no cuBLASLt
// products) whose dependencies are given: launch i follows launch p0[i] (none where
// negative), programmatically where prog[i] is set and the driver has
// cuGraphAddDependencies_v2, and also follows launch p1[i] (none where negative),
// programmatically where prog1[i] is set. Every p0[i] and p1[i] is below i.
CUresult em_graph_build_dag(CUcontext ctx, int n, CUfunction *fns, unsigned *dims, uint64_t *args, int *nargs,
                            const int *p0, const int *p1, const unsigned char *prog, const unsigned char *prog1, CUgraphExec *exec,
                            int *failed) {
	CUresult r = em_ctx_current(ctx);
	if (r) return r;
	CUgraph g;
	if ((r = p_cuGraphCreate(&g, 0))) return r;
	CUgraphNode *nodes = (CUgraphNode *)malloc(sizeof(CUgraphNode) * (n > 0 ? n : 1));
	if (!nodes) { p_cuGraphDestroy(g); return (CUresult)2; } // CUDA_ERROR_OUT_OF_MEMORY
	size_t off = 0;
	for (int i = 0; i < n; i++) {
		void *ptrs[EM_MAX_ARGS];
		em_arg_ptrs(ptrs, args, &off, nargs[i]);
		unsigned *d = dims + 5 * i;
		em_knp p = {fns[i], d[0], d[1], d[2], d[3], 1, 1, d[4], ptrs, 0};
		int pg = p0[i] >= 0 && prog[i] && p_cuGraphAddDependencies_v2;
		int pg1 = p1[i] >= 0 && prog1[i] && p_cuGraphAddDependencies_v2;
		CUgraphNode deps[2];
		int nd = 0;
		if (p0[i] >= 0 && !pg) deps[nd++] = nodes[p0[i]];
		if (p1[i] >= 0 && !pg1) deps[nd++] = nodes[p1[i]];
		r = p_cuGraphAddKernelNode(&nodes[i], g, nd ? deps : 0, nd, &p);
		em_edge e = {1, 0, 1, {0, 0, 0, 0, 0}};
		if (!r && pg) r = p_cuGraphAddDependencies_v2(g, &nodes[p0[i]], &nodes[i], &e, 1);
		if (!r && pg1) r = p_cuGraphAddDependencies_v2(g, &nodes[p1[i]], &nodes[i], &e, 1);
		if (r) { *failed = i; free(nodes); p_cuGraphDestroy(g); return r; }
	}
	free(nodes);
	r = p_cuGraphInstantiateWithFlags(exec, g, 0);
	p_cuGraphDestroy(g);
	return r;
}
*/
import "C"

import (
	"os"
	"strconv"
	"unsafe"

	"ember/inference/quant"
)

// Branches. A decode step is a chain: each kernel waits for the one before. Some ops do
// not depend on the ops queued right before them: DeepSeek-V2's shared experts read the
// FFN's normed input, as the router and the routed experts do, and only the sum of both
// reads their output. Beside (backend.Brancher) queues such a side run of ops, then the
// main run, and in a graph the side's launches form a branch off the last launch before
// them, which the main run's first launch follows too; the first launch after Beside
// (the join) follows both the main run's last launch and the side's. The side's kernels
// then run while the main run's chain of small kernels does, off its critical path.
//
// Only batch-1 steps branch (rows n == 1): there every product is a mat-vec kernel
// whose only scratch is the rounded activation row, and the side rounds into buffers of
// its own (branchState.act), so neither run writes what the other reads. Larger batches use
// cuBLASLt and the tensor-core products' shared scratch, and stay chains. A batch
// launched directly, not as a graph, runs its launches in order, as without branches.

// NoBranchEnv names an environment variable: when set, Beside queues the side and the
// main run as one chain (for timing the branches against it; the results are the same).
const NoBranchEnv = "EMBER_CUDA_NO_BRANCH"

// branch is a side branch's place in the queue, as launch indices: fork, the last launch
// before the side (negative: none in this batch); main, the main run's first launch (the
// side's launches are fork+1 .. main-1); join, the first launch after Beside.
type branch struct{ fork, main, join int }

// branchState is the branch being queued.
type branchState struct {
	off     bool                    // $EMBER_CUDA_NO_BRANCH
	edges   int                     // $EMBER_CUDA_BRANCH_EDGES (dag)
	cur     *branch                 // the branch queued, until its join is
	prev    *branch                 // a branch whose join is the main run's first launch of cur (chained Besides)
	pending int                     // pendMain or pendJoin: which index of cur the next launch takes
	act     map[quant.Type]*scratch // the side's activation scratch (swapped with Backend.act)
	side    bool                    // the side run is being queued
	noPin   bool                    // $EMBER_CUDA_NO_PIN: the main run rounds its inputs itself
	pin     scratch                 // the fork's rounding (pinned), in scratch neither run rounds into
	pinned  pinnedAct               // the rounding the main run may take from the fork
}

// pinnedAct is a rounding of x's rows to vt that the fork launch writes (fused into it
// when the side's first product rounded x): the main run's products of x take it, so
// that a second rounding of the same rows (DeepSeek-V2's routed experts' quant_q8_k,
// after the router) is not launched. x is unchanged until the join: the side reads it,
// so the main run may not write it (Beside). out is 0 when there is none.
type pinnedAct struct {
	x      tensor // x's place and shape (ptr, rows, cols, stride)
	vt     quant.Type
	out    uint64
	stride int
}

// pinAt reports whether a rounding queued now would be written by the fork launch if
// fused into it: the side is being queued and has queued nothing yet (queued: the
// launches in the queue), and no rounding is pinned.
func (s *branchState) pinAt(queued int) bool {
	return !s.noPin && s.side && s.cur != nil && s.pinned.out == 0 && queued == s.cur.fork+1 && s.cur.fork >= 0
}

// take returns the pinned rounding of x to vt for the main run, if there is one.
func (s *branchState) take(x *tensor, vt quant.Type) (uint64, int, bool) {
	p := &s.pinned
	if s.side || s.cur == nil || p.out == 0 || p.vt != vt || p.x.ptr != x.ptr || p.x.rows != x.rows || p.x.cols != x.cols || p.x.stride != x.stride {
		return 0, 0, false
	}
	return p.out, p.stride, true
}

const (
	pendNone = iota
	pendMain // the next launch is the main run's first
	pendJoin // the next launch is the join
)

// NoPinEnv names an environment variable: when set, a branch's main run rounds its
// inputs itself instead of taking the rounding fused into the fork (pinnedAct), as
// before session 26 (for timing; the results are the same).
const NoPinEnv = "EMBER_CUDA_NO_PIN"

// BranchEdgesEnv names an environment variable: which of a branch's edges are
// programmatic where their kernel waits for them (dag), as bits: 1 the side's first
// launch's off the fork, 2 the join's off the side's last launch, 4 makes the main run's
// first edge off the fork a full one. defaultBranchEdges is the default.
const BranchEdgesEnv = "EMBER_CUDA_BRANCH_EDGES"

// defaultBranchEdges: the side's edge off the fork and the main run's programmatic, the
// join's off the side full (until session 62: all three programmatic, 3). H200,
// DeepSeek-V2-Lite Q4_K_M tg128. Session 22, the main run opening with the router's
// product (then a kernel that loaded nothing before its wait): with the shared experts a
// branch, two rounds, 0 452 / 455, 1 471 / 460, 2 446 / 455, 3 468 / 469, 5 473 / 477,
// one chain 452 / 459; with the MLA cache write a branch too, 5 484 / 492, 1 483 / 483,
// 3 496 / 490, 7 516 / 515; then 7 509 / 509 against one chain 466 / 466: 7 was the
// default. Session 56 (the router's product, mmv_f32_1w since session 52, loads its
// weights before its wait), medians of six or seven rounds, the order rotated each
// round: 3 649.8 against 7 639.1 (six of six; the same call's norm-and-router fusion
// lost, build/wip/norm-router.patch), then 3 647.8, 1 647.0, 7 641.6 (3 ahead of 7 in
// five of six), 2 640.5, 0 629.9; then 3 645.3, 1 646.1, 3 with the main run rounding
// cur again (NoPinEnv) 633.1, one chain 558.5 (build/wip/s56-call2.sh .. s56-call4.sh).
// Session 62, with the router's logits beside the norm (a second branch chained to the
// shared experts' one, session 61): the routed gate/up, the join of the router's branch,
// arrived ~0.6 us after the norm ended with 3, and before it with 1 (the join's edge off
// the side full); 1 713.7 against 3 709.8 (five of five rounds, build/wip/s62-call3.sh),
// 7 708.9; then, 1 the default, 1 715.8 against 3 709.9 (1 ahead in five of seven) and 5
// 718.3 (5 ahead in five of seven, by 0.35%; build/wip/s62-call4.sh); then 1 714.3
// against 5 709.6 (1 ahead in eight of ten, s62-call6.sh).
const defaultBranchEdges = 1

func branchFromEnv() branchState {
	e, err := strconv.Atoi(os.Getenv(BranchEdgesEnv))
	if err != nil || e < 0 || e > 7 {
		e = defaultBranchEdges
	}
	return branchState{off: os.Getenv(NoBranchEnv) != "", edges: e, noPin: os.Getenv(NoPinEnv) != ""}
}

// Beside queues side's ops, then main's, as calling them in turn would; in a graph of a
// batch-1 step the side's launches run beside the main run's (see above). side's ops
// must neither read nor write what main's write, nor write what main's read.
//
// A Beside called right after another (no launch between: the first's join pending)
// chains them: the first's join becomes the second's main run's first launch instead of
// the second's first launch, so that the second's side (which may read the first's
// main run's output) need not wait for the first's side. DeepSeek-V2's MoE layers: the
// router's product beside the norm (NormRouter), then the shared experts beside the
// routed ones, whose first launch reads both the norm's row and the router's logits.
func (b *Backend) Beside(n int, side, main func()) {
	chain := b.br.cur != nil && b.br.pending == pendJoin && b.br.prev == nil
	if n != 1 || b.br.off || (b.br.cur != nil && !chain) || b.noGraphs || b.prof != nil || !b.mvsc.off {
		side()
		main()
		return
	}
	if chain {
		b.br.prev, b.br.cur, b.br.pending = b.br.cur, nil, pendNone
	}
	b.br.cur = &branch{fork: len(b.queue.fns) - 1, main: -1, join: -1}
	b.br.pending = pendNone
	if b.br.act == nil {
		b.br.act = map[quant.Type]*scratch{}
	}
	b.act, b.br.act = b.br.act, b.act
	b.br.side, b.br.pinned = true, pinnedAct{}
	side()
	b.br.side = false
	b.act, b.br.act = b.br.act, b.act
	b.fuse = fusable{cfg: b.fuse.cfg} // no main op joins a side launch
	b.br.pending = pendMain
	main()
	b.br.pinned = pinnedAct{}
	if b.br.pending == pendMain { // main queued nothing: nothing to branch
		b.br.cur, b.br.pending = nil, pendNone
		if b.br.prev != nil { // the chained branch's join is the next launch after all
			b.br.cur, b.br.prev, b.br.pending = b.br.prev, nil, pendJoin
		}
		return
	}
	b.br.pending = pendJoin
}

// noteLaunch is called by enqueue before it queues launch i: it places the branch's
// main run and join. A launch a fusion pops and queues again takes the same index.
func (s *branchState) noteLaunch(q *batch, i int) {
	switch s.pending {
	case pendMain:
		s.cur.main, s.pending = i, pendNone
		if p := s.prev; p != nil {
			p.join = i
			q.brs = append(q.brs, *p)
			s.prev = nil
		}
	case pendJoin:
		s.cur.join, s.pending = i, pendNone
		q.brs = append(q.brs, *s.cur)
		s.cur = nil
	}
}

// flushed moves the branch being queued past a flush of n launches: indices before the
// new batch are negative.
func (s *branchState) flushed(n int) {
	if c := s.cur; c != nil {
		c.fork -= n
		if s.pending != pendMain {
			c.main -= n
		}
	}
	if p := s.prev; p != nil {
		p.fork, p.main = p.fork-n, p.main-n
	}
}

// dag gives each launch of q its predecessors when q holds a branch it can keep: p0
// (the launch it follows; -1: none), whether that edge may be programmatic (prog: the
// kernel waits for it, as in a chain), p1 (a second launch it follows: the join's off
// the side; -1: none) and whether that one may be (prog1), as edges (BranchEdgesEnv)
// says. ok is false when q is a plain chain: no branch, or cuBLASLt products
// in it (their child graphs sit in the chain: em_graph_build).
func (q *batch) dag(edges int) (p0, p1 []C.int, prog, prog1 []C.uchar, ok bool) {
	n := len(q.fns)
	if len(q.brs) == 0 || len(q.lts) > 0 {
		return nil, nil, nil, nil, false
	}
	p0, p1, prog, prog1 = make([]C.int, n), make([]C.int, n), make([]C.uchar, n), make([]C.uchar, n)
	for i := range n {
		p0[i], p1[i], prog[i] = C.int(i-1), -1, q.pdl[i]
	}
	prog[0] = 0
	for _, r := range q.brs {
		s0, last := max(r.fork+1, 0), r.main-1
		if last < s0 || r.join <= r.main || r.join >= n {
			continue // the side, or the main run, is not in this batch: a chain
		}
		ok = true
		p0[s0] = C.int(max(r.fork, -1))
		if edges&1 == 0 || r.fork < 0 {
			prog[s0] = 0 // the side: a full edge off the fork
		}
		p0[r.main] = C.int(max(r.fork, -1))
		if r.fork < 0 || edges&4 != 0 {
			prog[r.main] = 0
		}
		p1[r.join] = C.int(last)
		if edges&2 != 0 {
			prog1[r.join] = q.pdl[r.join]
		}
	}
	return p0, p1, prog, prog1, ok
}

// buildDAG makes q's graph with its branches (em_graph_build_dag); false when q has none
// or the driver refused it.
func (b *Backend) buildDAG(q *batch, exec *C.CUgraphExec) bool {
	p0, p1, prog, prog1, ok := q.dag(b.br.edges)
	if !ok {
		return false
	}
	var failed C.int
	if r := C.em_graph_build_dag(b.h.ctx, C.int(len(q.fns)), first(q.fns), first(q.dims), (*C.uint64_t)(unsafe.Pointer(first(q.args))),
		first(q.nargs), first(p0), first(p1), first(prog), first(prog1), exec, &failed); r != 0 {
		return false
	}
	b.st.dags++
	return true
}
