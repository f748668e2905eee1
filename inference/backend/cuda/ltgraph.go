package cuda

/*
#include <stdint.h>
typedef int CUresult;
typedef void *CUcontext;
typedef void *CUfunction;
typedef void *CUgraph;
typedef void *CUstream;
CUresult em_launch_many(CUcontext ctx, int n, CUfunction *fns, unsigned *dims, uint64_t *args, int *nargs, const unsigned char *pdl, int *failed);
int em_can_capture(void);
CUresult em_stream_create(CUcontext ctx, CUstream *s);
CUresult em_stream_destroy(CUstream s);
CUresult em_capture_begin(CUcontext ctx, CUstream s);
CUresult em_capture_end(CUstream s, CUgraph *g);
CUresult em_graph_free(CUgraph g);
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// cuBLASLt's products in the launch queue.
//
// A product on cuBLASLt is queued like a launch (an ltCall before the launch at its
// position), so a batch of Ember's kernels and cuBLASLt products is one batch: launched
// directly, the kernels go out in segments with each product called between them; seen
// again, it becomes one graph, each product a child graph captured from a stream (the
// library's kernels as cublasLtMatmul queues them) with full edges around it, and the
// kernels between keep their programmatic edges. Batched decode over the f16 weight
// copies (f16copy.go) was otherwise a chain of small direct batches, one per product:
// 32,767 direct launches and no graph replays in an 8B 64-stream run (session 12).

// ltCall is one cuBLASLt product of a batch: D = A^T B for plan with workspace ws, before
// launch pos of the batch (after its last launch where pos is the batch's length).
type ltCall struct {
	pos         int
	plan        *ltPlan
	a, b, d, ws uint64
}

// LtNoGraphsEnv names an environment variable that keeps batches holding cuBLASLt
// products out of graphs (launched directly, as before products were queued).
const LtNoGraphsEnv = "EMBER_CUDA_LT_NO_GRAPHS"

// ltCapture is a backend's stream for capturing products into graphs.
type ltCapture struct {
	stream C.CUstream
	failed bool // the stream could not be made, or $EMBER_CUDA_LT_NO_GRAPHS: batches with products go out directly
}

// queueLt adds a cuBLASLt product to the queue (after the launches queued so far).
func (b *Backend) queueLt(l ltCall) {
	l.pos = len(b.queue.fns)
	b.queue.lts = append(b.queue.lts, l)
	b.last = "cublasLtMatmul"
	// The last launch is no longer the last op: a fusion must not move it past l.
	b.fuse = fusable{cfg: b.fuse.cfg}
}

// canCapture reports whether products can become child graphs here.
func (b *Backend) canCapture() bool {
	return !b.capt.failed && C.em_can_capture() != 0
}

// captureLts captures each product of lts into a child graph, with the positions
// em_graph_build takes; false (having made nothing) when one cannot be captured.
func (b *Backend) captureLts(lts []ltCall) ([]C.CUgraph, []C.int, bool) {
	if len(lts) == 0 {
		return nil, nil, true
	}
	if b.capt.stream == nil {
		if r := C.em_stream_create(b.h.ctx, &b.capt.stream); r != 0 {
			b.capt.failed = true
			return nil, nil, false
		}
	}
	var gs []C.CUgraph
	var pos []C.int
	for _, l := range lts {
		g, ok := b.captureLt(l)
		if !ok {
			freeGraphs(gs)
			return nil, nil, false
		}
		gs, pos = append(gs, g), append(pos, C.int(l.pos))
	}
	return gs, pos, true
}

// captureLt records product l on the capture stream as a graph.
func (b *Backend) captureLt(l ltCall) (C.CUgraph, bool) {
	// The capture's calls stay on one OS thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := C.em_capture_begin(b.h.ctx, b.capt.stream); r != 0 {
		return nil, false
	}
	err := b.lt.lib.matmul(b.h.ctx, l.plan, l.a, l.b, l.d, l.ws, unsafe.Pointer(b.capt.stream))
	var g C.CUgraph
	if r := C.em_capture_end(b.capt.stream, &g); r != 0 || err != nil {
		if g != nil {
			C.em_graph_free(g)
		}
		return nil, false
	}
	return g, true
}

func freeGraphs(gs []C.CUgraph) {
	for _, g := range gs {
		C.em_graph_free(g)
	}
}

// launchDirect launches the queued batch kernel by kernel, calling its cuBLASLt
// products between them.
func (b *Backend) launchDirect() {
	q := &b.queue
	n, k0, off := len(q.fns), 0, 0
	for i := 0; i <= len(q.lts); i++ {
		k1 := n
		if i < len(q.lts) {
			k1 = q.lts[i].pos
		}
		if k1 > k0 {
			var failed C.int
			if r := C.em_launch_many(b.h.ctx, C.int(k1-k0), &q.fns[k0], &q.dims[5*k0], (*C.uint64_t)(unsafe.Pointer(first(q.args[off:]))),
				&q.nargs[k0], &q.pdl[k0], &failed); r != 0 {
				b.fail(cuErr("cuLaunchKernel", q.names[k0+int(failed)], r))
				return
			}
			for _, a := range q.nargs[k0:k1] {
				off += int(a)
			}
		}
		if i < len(q.lts) {
			l := q.lts[i]
			if err := b.lt.lib.matmul(b.h.ctx, l.plan, l.a, l.b, l.d, l.ws, nil); err != nil {
				b.fail(fmt.Errorf("%w (product %d of the batch)", err, i))
				return
			}
		}
		k0 = k1
	}
}

// describe names a batch in errors.
func (q *batch) describe() string {
	if len(q.fns) == 0 {
		return fmt.Sprintf("%d cuBLASLt products", len(q.lts))
	}
	return fmt.Sprintf("%d kernels and %d cuBLASLt products, %s first", len(q.fns), len(q.lts), q.names[0])
}

// closeCapture destroys the capture stream.
func (b *Backend) closeCapture() error {
	if b.capt.stream == nil {
		return nil
	}
	r := C.em_stream_destroy(b.capt.stream)
	b.capt.stream = nil
	if r != 0 {
		return cuErr("cuStreamDestroy", "", r)
	}
	return nil
}

// first is the address of s's first element, nil when s is empty.
func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
