package cuda

/*
#include <string.h>
#include "launch.h"

// Not static: ltgraph.go calls em_launch_many too.

// A batch of launches: fns[i] with dims[5i..5i+4] = grid x, grid y, grid z, block x,
// shared bytes, and nargs[i] parameter slots taken in order from args.
// em_launch_many launches a batch's kernels on the legacy default stream, in order;
// launch i may overlap the kernel before it where pdl[i] is set (and the driver has
// cuLaunchKernelEx).
CUresult em_launch_many(CUcontext ctx, int n, CUfunction *fns, unsigned *dims, uint64_t *args, int *nargs,
                        const unsigned char *pdl, int *failed) {
	CUresult r = em_ctx_current(ctx);
	if (r) return r;
	size_t off = 0;
	for (int i = 0; i < n; i++) {
		void *ptrs[EM_MAX_ARGS];
		em_arg_ptrs(ptrs, args, &off, nargs[i]);
		unsigned *d = dims + 5 * i;
		if (pdl[i] && p_cuLaunchKernelEx) {
			em_attr a;
			memset(&a, 0, sizeof(a));
			a.id = 6;
			a.value.allowed = 1;
			em_launch_cfg c = {d[0], d[1], d[2], d[3], 1, 1, d[4], 0, &a, 1};
			r = p_cuLaunchKernelEx(&c, fns[i], ptrs, 0);
		} else {
			r = p_cuLaunchKernel(fns[i], d[0], d[1], d[2], d[3], 1, 1, d[4], 0, ptrs, 0);
		}
		if (r) { *failed = i; return r; }
	}
	return 0;
}

// em_can_capture reports whether the driver has what capturing cuBLASLt's products into
// child graphs takes.
int em_can_capture(void) {
	return p_cuStreamCreate && p_cuStreamDestroy && p_cuStreamBeginCapture && p_cuStreamEndCapture &&
	       p_cuGraphAddChildGraphNode;
}
// em_stream_create makes a non-blocking stream (only ever captured, never run).
CUresult em_stream_create(CUcontext ctx, CUstream *s) {
	CUresult r = em_ctx_current(ctx);
	return r ? r : p_cuStreamCreate(s, 1);
}
CUresult em_stream_destroy(CUstream s) { return p_cuStreamDestroy(s); }
// em_capture_begin starts capturing s (relaxed: other threads' calls are not checked).
CUresult em_capture_begin(CUcontext ctx, CUstream s) {
	CUresult r = em_ctx_current(ctx);
	return r ? r : p_cuStreamBeginCapture(s, 2);
}
CUresult em_capture_end(CUstream s, CUgraph *g) { return p_cuStreamEndCapture(s, g); }
CUresult em_graph_free(CUgraph g) { return p_cuGraphDestroy(g); }

// em_graph_build makes an executable graph of a batch of launches, each depending on
// the one before (the stream's order); the edge into launch i is programmatic where
// pdl[i] is set (its kernel waits for the one before with griddepcontrol.wait) and the
// node before is a kernel. Child graph ci (a captured cuBLASLt product) comes before
// launch pos[ci] (after the last launch where pos[ci] = n), in order, with full edges.
CUresult em_graph_build(CUcontext ctx, int n, CUfunction *fns, unsigned *dims, uint64_t *args, int *nargs,
                               const unsigned char *pdl, int nchild, const int *pos, CUgraph *children,
                               CUgraphExec *exec, int *failed) {
	CUresult r = em_ctx_current(ctx);
	if (r) return r;
	CUgraph g;
	if ((r = p_cuGraphCreate(&g, 0))) return r;
	CUgraphNode prev = 0;
	int prevKernel = 0, ci = 0;
	size_t off = 0;
	for (int i = 0; i <= n; i++) {
		while (ci < nchild && pos[ci] == i) {
			CUgraphNode node;
			r = p_cuGraphAddChildGraphNode(&node, g, prev ? &prev : 0, prev ? 1 : 0, children[ci]);
			if (r) { *failed = i; p_cuGraphDestroy(g); return r; }
			prev = node;
			prevKernel = 0;
			ci++;
		}
		if (i == n) break;
		void *ptrs[EM_MAX_ARGS];
		em_arg_ptrs(ptrs, args, &off, nargs[i]);
		unsigned *d = dims + 5 * i;
		em_knp p = {fns[i], d[0], d[1], d[2], d[3], 1, 1, d[4], ptrs, 0};
		CUgraphNode node;
		int prog = prev && prevKernel && pdl[i] && p_cuGraphAddDependencies_v2;
		r = p_cuGraphAddKernelNode(&node, g, prev && !prog ? &prev : 0, prev && !prog ? 1 : 0, &p);
		if (!r && prog) {
			em_edge e = {1, 0, 1, {0, 0, 0, 0, 0}};
			r = p_cuGraphAddDependencies_v2(g, &prev, &node, &e, 1);
		}
		if (r) { *failed = i; p_cuGraphDestroy(g); return r; }
		prev = node;
		prevKernel = 1;
	}
	r = p_cuGraphInstantiateWithFlags(exec, g, 0);
	p_cuGraphDestroy(g);
	return r;
}
CUresult em_graph_launch(CUcontext ctx, CUgraphExec e) {
	CUresult r = em_ctx_current(ctx);
	return r ? r : p_cuGraphLaunch(e, 0);
}
CUresult em_graph_destroy(CUgraphExec e) { return p_cuGraphExecDestroy(e); }

*/
import "C"

import (
	"os"
	"slices"
	"strconv"
	"time"
	"unsafe"
)

// Ops are not launched one by one: they are queued and launched together when the host
// next touches device memory (a write, a read, Sync). A batch of launches equal to one
// launched before (a decode step: same kernels, grids and buffer addresses; positions and
// tokens are read from device memory) is made into a CUDA graph, and later equal batches
// replay the graph, which saves the launch overhead of several hundred small kernels per
// token. Replaying a graph is the same as launching its kernels in order.
//
// A step may be several batches: a mixture-of-experts model reads its router logits back
// once per layer, so each layer's attention (the same every step) is a batch of its own
// between expert batches that differ. So batches are remembered by a hash of their
// launches (seen), a batch whose hash was seen before becomes a graph, and graphs are
// kept per hash, the least recently replayed destroyed when there are too many.

// A long batch is also flushed in chunks (ChunkEnv): without that a decode step's
// launches all wait for the step's read, and the device sat idle while the host built
// the step (the event clock of EMBER_CUDA_STATS: ~0.2 ms a token for Llama-3.1-8B,
// ~0.5 ms for DeepSeek-V2-Lite's 617 launches, on an H200). Chunks of a step repeat
// like whole steps do, so each becomes a graph. The flush comes at the start of a launch,
// never between an op's launch and the next op, so every fusion (fuse.go) still sees
// the launch it joins: an op takes its fusable launch before it launches anything.

// ChunkEnv names an environment variable: the launches a batch holds before the next
// launch flushes it (0: a batch ends only at a read, a write or a sync).
const ChunkEnv = "EMBER_CUDA_CHUNK"

// ChunkRampEnv names an environment variable: 0 makes the first batches after a sync
// whole chunks too (chunkNow).
const ChunkRampEnv = "EMBER_CUDA_CHUNK_RAMP"

// defaultChunk is the chunk without ChunkEnv. H200, session 18, one call, two rounds
// (chunk:ramp): tg128 8B Q4_K_M 434/446 (128:0), 451/449 (64:0), 464/465 (64:1),
// 456/464 (128:1); V2-Lite 437/445, 450/452, 475/462, 458/458; 8B Q8_0 325/323,
// 334/329, 336/337, 336/338; 64 streams 8B 8,200, 8,370, 8,457, 8,364.
const defaultChunk = 64

// chunkFlush flushes a batch of a chunk's launches (called before a launch: then no
// fusion is lost), but not inside a side branch (branch.go): a branch split over two
// batches is a chain. Nor while a step decoded ahead is on the device (feed.go): the
// device has work until the host flushes, and a graph boundary costs the kernels after
// it their early start (H200, session 36: DeepSeek-V2-Lite tg128 ahead 573.8 with no
// chunks against 558.1 in chunks of 64; Llama-3.1-8B 513.0 against 512.9).
func (b *Backend) chunkFlush() {
	if b.chunk > 0 && b.br.cur == nil && len(b.queue.fns) >= b.chunkNow() && !b.fd.waiting() {
		b.flush()
	}
}

// chunkNow is the chunk of the next flush: after a sync the device waits for the first
// one, so the first two batches are a quarter and a half of a chunk (at least 8
// launches), the device then starting while the host builds the rest.
func (b *Backend) chunkNow() int {
	if b.sinceSync >= 2 || b.noRamp {
		return b.chunk
	}
	return max(minGraphSize, b.chunk>>(2-b.sinceSync))
}

func chunkFromEnv() int {
	if v, err := strconv.Atoi(os.Getenv(ChunkEnv)); err == nil && v >= 0 {
		return v
	}
	return defaultChunk
}

// batch is a queue of launches in the layout em_launch_many takes.
type batch struct {
	fns   []C.CUfunction
	dims  []C.uint // 5 per launch: grid x, y, z, block x, shared bytes
	args  []uint64
	nargs []C.int
	names []string
	pdl   []C.uchar // 1 where the kernel waits for the one before (kernel.pdl)
	lts   []ltCall  // cuBLASLt products, each before the launch at its pos (ltgraph.go)
	brs   []branch  // side branches whose join is in the batch (branch.go)
}

func (q *batch) reset() {
	q.fns, q.dims, q.args, q.nargs, q.names, q.pdl = q.fns[:0], q.dims[:0], q.args[:0], q.nargs[:0], q.names[:0], q.pdl[:0]
	q.lts, q.brs = q.lts[:0], q.brs[:0]
}

// size is the batch's work: its launches and cuBLASLt products.
func (q *batch) size() int { return len(q.fns) + len(q.lts) }

func (q *batch) equal(o *batch) bool {
	return slices.Equal(q.fns, o.fns) && slices.Equal(q.dims, o.dims) && slices.Equal(q.nargs, o.nargs) &&
		slices.Equal(q.args, o.args) && slices.Equal(q.lts, o.lts) && slices.Equal(q.brs, o.brs)
}

// hash is FNV-1a over the launches' functions, dimensions and arguments.
func (q *batch) hash() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) { h = (h ^ v) * 1099511628211 }
	for i, f := range q.fns {
		mix(uint64(uintptr(unsafe.Pointer(f))))
		mix(uint64(q.nargs[i]))
	}
	for _, d := range q.dims {
		mix(uint64(d))
	}
	for _, a := range q.args {
		mix(a)
	}
	for _, l := range q.lts {
		for _, v := range []uint64{uint64(l.pos), uint64(uintptr(unsafe.Pointer(l.plan))), l.a, l.b, l.d, l.ws} {
			mix(v)
		}
	}
	for _, r := range q.brs {
		mix(uint64(r.fork)<<42 ^ uint64(r.main)<<21 ^ uint64(r.join))
	}
	return h
}

func (q *batch) clone() *batch {
	return &batch{fns: slices.Clone(q.fns), dims: slices.Clone(q.dims), args: slices.Clone(q.args),
		nargs: slices.Clone(q.nargs), names: slices.Clone(q.names), pdl: slices.Clone(q.pdl), lts: slices.Clone(q.lts),
		brs: slices.Clone(q.brs)}
}

// graph is an instantiated graph and the batch it replays.
type graph struct {
	b    *batch
	exec C.CUgraphExec
	used int // the flush epoch of its last replay
}

const (
	maxGraphs    = 128  // graphs kept per backend (batch-size buckets, per-layer batches)
	maxSeen      = 4096 // batch hashes remembered before the memory is cleared
	maxQueued    = 8192 // launches queued before a flush regardless
	minGraphSize = 8    // smaller batches are launched directly
)

// enqueue adds a launch to the queue.
func (b *Backend) enqueue(k *kernel, gx, gy, bx, smem int, args []uint64) {
	q := &b.queue
	b.br.noteLaunch(q, len(q.fns))
	q.fns = append(q.fns, k.fn)
	q.dims = append(q.dims, C.uint(gx), C.uint(gy), 1, C.uint(bx), C.uint(smem))
	q.args = append(q.args, args...)
	q.nargs = append(q.nargs, C.int(len(args)))
	q.names = append(q.names, k.name)
	var pdl C.uchar
	if k.pdl && !b.noPDL {
		pdl = 1
	}
	q.pdl = append(q.pdl, pdl)
	if len(q.fns) >= maxQueued {
		b.flush()
	}
}

// flush launches the queued work: as a graph when the batch was seen before.
func (b *Backend) flush() {
	q := &b.queue
	n := len(q.fns)
	if q.size() == 0 {
		return
	}
	defer q.reset()
	defer b.br.flushed(n)
	b.epoch++
	b.sinceSync++
	if b.dryFlush != nil { // a queue-only Backend of the tests: no device
		b.dryFlush(q.names)
		return
	}
	b.st.rng.at(b.h.ctx, b.epoch)
	if b.err != nil {
		return
	}
	if b.timelineAt() {
		b.timelineBegin()
		defer b.timelineEnd()
	}
	t0 := time.Now()
	defer func() { b.st.tFlush += time.Since(t0) }()
	b.st.flushes++
	b.st.kernels += n
	if b.st.on {
		b.st.note(n)
		b.st.keep(q.names)
	}
	if n > 0 {
		b.last = q.names[n-1]
	}
	if b.st.on {
		e0, d0 := b.st.clock.event(b.h.ctx), b.st.direct
		defer func() { b.st.clock.mark(e0, b.st.clock.event(b.h.ctx), b.st.direct == d0) }()
	}
	var h uint64
	if !b.noGraphs && q.size() >= minGraphSize && (len(q.lts) == 0 || b.canCapture()) {
		h = q.hash()
		for _, g := range b.graphs[h] {
			if g.b.equal(q) {
				b.st.graphRuns++
				g.used = b.epoch
				if r := C.em_graph_launch(b.h.ctx, g.exec); r != 0 {
					b.fail(cuErr("cuGraphLaunch", q.describe(), r))
				}
				return
			}
		}
		if b.seen[h] && b.buildGraph(h) {
			return
		}
		if len(b.seen) >= maxSeen {
			clear(b.seen)
		}
		b.seen[h] = true
	}
	b.st.direct++
	b.launchDirect()
}

// buildGraph makes the queued batch (of hash h) a graph, evicting the least recently
// replayed graph when there are maxGraphs, and launches it; false when it cannot be
// built (no failure: the caller launches the kernels one by one).
func (b *Backend) buildGraph(h uint64) bool {
	q := &b.queue
	if b.nGraphs >= maxGraphs {
		b.evictGraph()
	}
	children, pos, ok := b.captureLts(q.lts)
	if !ok {
		return false
	}
	defer freeGraphs(children)
	var exec C.CUgraphExec
	if !b.buildDAG(q, &exec) {
		var failed C.int
		if r := C.em_graph_build(b.h.ctx, C.int(len(q.fns)), first(q.fns), first(q.dims), (*C.uint64_t)(unsafe.Pointer(first(q.args))),
			first(q.nargs), first(q.pdl), C.int(len(children)), first(pos), first(children), &exec, &failed); r != 0 {
			return false
		}
	}
	b.st.built++
	b.graphs[h] = append(b.graphs[h], &graph{b: q.clone(), exec: exec, used: b.epoch})
	b.nGraphs++
	if r := C.em_graph_launch(b.h.ctx, exec); r != 0 {
		b.fail(cuErr("cuGraphLaunch", q.describe(), r))
	}
	return true
}

// evictGraph destroys the least recently replayed graph (one still running is freed
// by the driver when it completes).
func (b *Backend) evictGraph() {
	var oh uint64
	oi := -1
	for h, gs := range b.graphs {
		for i, g := range gs {
			if oi < 0 || g.used < b.graphs[oh][oi].used {
				oh, oi = h, i
			}
		}
	}
	if oi < 0 {
		return
	}
	gs := b.graphs[oh]
	if r := C.em_graph_destroy(gs[oi].exec); r != 0 {
		b.fail(cuErr("cuGraphExecDestroy", "", r))
	}
	b.graphs[oh] = append(gs[:oi], gs[oi+1:]...)
	if len(b.graphs[oh]) == 0 {
		delete(b.graphs, oh)
	}
	b.nGraphs--
}

func (b *Backend) destroyGraphs() error {
	var err error
	for _, gs := range b.graphs {
		for _, g := range gs {
			if r := C.em_graph_destroy(g.exec); r != 0 && err == nil {
				err = cuErr("cuGraphExecDestroy", "", r)
			}
		}
	}
	clear(b.graphs)
	b.nGraphs = 0
	return err
}
