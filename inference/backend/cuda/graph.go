package cuda

/*
#include <stdint.h>
typedef int CUresult;
typedef void *CUcontext;
typedef void *CUfunction;
typedef void *CUgraphExec;
CUresult em_launch_many(CUcontext ctx, int n, CUfunction *fns, unsigned *dims, uint64_t *args, int *nargs, int *failed);
CUresult em_graph_build(CUcontext ctx, int n, CUfunction *fns, unsigned *dims, uint64_t *args, int *nargs, CUgraphExec *exec, int *failed);
CUresult em_graph_launch(CUcontext ctx, CUgraphExec e);
CUresult em_graph_destroy(CUgraphExec e);
*/
import "C"

import (
	"fmt"
	"slices"
	"time"
	"unsafe"
)

// Ops are not launched one by one: they are queued and launched together when the host
// next touches device memory (a write, a read, Sync). A batch of launches equal to the
// one before it (a decode step: same kernels, grids and buffer addresses; positions and
// tokens are read from device memory) is made into a CUDA graph, and later equal batches
// replay the graph, which saves the launch overhead of several hundred small kernels per
// token. Replaying a graph is the same as launching its kernels in order.

// batch is a queue of launches in the layout em_launch_many takes.
type batch struct {
	fns   []C.CUfunction
	dims  []C.uint // 5 per launch: grid x, y, z, block x, shared bytes
	args  []uint64
	nargs []C.int
	names []string
}

func (q *batch) reset() {
	q.fns, q.dims, q.args, q.nargs, q.names = q.fns[:0], q.dims[:0], q.args[:0], q.nargs[:0], q.names[:0]
}

func (q *batch) equal(o *batch) bool {
	return slices.Equal(q.fns, o.fns) && slices.Equal(q.dims, o.dims) && slices.Equal(q.nargs, o.nargs) &&
		slices.Equal(q.args, o.args)
}

func (q *batch) clone() *batch {
	return &batch{fns: slices.Clone(q.fns), dims: slices.Clone(q.dims), args: slices.Clone(q.args),
		nargs: slices.Clone(q.nargs), names: slices.Clone(q.names)}
}

// graph is an instantiated graph and the batch it replays.
type graph struct {
	b    *batch
	exec C.CUgraphExec
}

const (
	maxGraphs    = 16   // graphs kept per backend (batch-size buckets, prefill shapes)
	maxQueued    = 8192 // launches queued before a flush regardless
	minGraphSize = 8    // smaller batches are launched directly
)

// enqueue adds a launch to the queue.
func (b *Backend) enqueue(k *kernel, gx, gy, bx, smem int, args []uint64) {
	q := &b.queue
	q.fns = append(q.fns, k.fn)
	q.dims = append(q.dims, C.uint(gx), C.uint(gy), 1, C.uint(bx), C.uint(smem))
	q.args = append(q.args, args...)
	q.nargs = append(q.nargs, C.int(len(args)))
	q.names = append(q.names, k.name)
	if len(q.fns) >= maxQueued {
		b.flush()
	}
}

// flush launches the queued work: as a graph when the batch was seen before.
func (b *Backend) flush() {
	q := &b.queue
	n := len(q.fns)
	if n == 0 {
		return
	}
	defer q.reset()
	b.epoch++
	if b.err != nil {
		return
	}
	t0 := time.Now()
	defer func() { b.st.tFlush += time.Since(t0) }()
	b.st.flushes++
	b.st.kernels += n
	b.last = q.names[n-1]
	for _, g := range b.graphs {
		if g.b.equal(q) {
			b.st.graphRuns++
			if r := C.em_graph_launch(b.h.ctx, g.exec); r != 0 {
				b.fail(cuErr("cuGraphLaunch", fmt.Sprintf("%d kernels, %s first", n, q.names[0]), r))
			}
			return
		}
	}
	if !b.noGraphs && n >= minGraphSize && b.prev != nil && b.prev.equal(q) && len(b.graphs) < maxGraphs {
		var exec C.CUgraphExec
		var failed C.int
		r := C.em_graph_build(b.h.ctx, C.int(n), &q.fns[0], &q.dims[0], (*C.uint64_t)(unsafe.Pointer(&q.args[0])),
			&q.nargs[0], &exec, &failed)
		if r == 0 {
			b.st.built++
			b.graphs = append(b.graphs, &graph{b: q.clone(), exec: exec})
			if r := C.em_graph_launch(b.h.ctx, exec); r != 0 {
				b.fail(cuErr("cuGraphLaunch", fmt.Sprintf("%d kernels, %s first", n, q.names[0]), r))
			}
			return
		}
		// A graph that cannot be built is no failure: launch the kernels one by one.
	}
	b.st.direct++
	var failed C.int
	if r := C.em_launch_many(b.h.ctx, C.int(n), &q.fns[0], &q.dims[0], (*C.uint64_t)(unsafe.Pointer(&q.args[0])),
		&q.nargs[0], &failed); r != 0 {
		b.fail(cuErr("cuLaunchKernel", q.names[int(failed)], r))
		return
	}
	if n >= minGraphSize {
		if b.prev == nil {
			b.prev = &batch{}
		}
		p := b.prev
		p.fns, p.dims, p.args = append(p.fns[:0], q.fns...), append(p.dims[:0], q.dims...), append(p.args[:0], q.args...)
		p.nargs, p.names = append(p.nargs[:0], q.nargs...), append(p.names[:0], q.names...)
	}
}

func (b *Backend) destroyGraphs() error {
	var err error
	for _, g := range b.graphs {
		if r := C.em_graph_destroy(g.exec); r != 0 && err == nil {
			err = cuErr("cuGraphExecDestroy", "", r)
		}
	}
	b.graphs = nil
	return err
}
