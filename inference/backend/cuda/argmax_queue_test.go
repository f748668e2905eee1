package cuda

import (
	"fmt"
	"slices"
	"testing"
)

// TestArgMaxQueue: a row's argmax queues argmax_f32_c (a cluster of argmaxParts blocks a
// row) for rows of at least argmaxClusterCols whole 16-byte chunks at a 16-byte boundary,
// and argmax_f32 (one block a row) for narrower rows, rows off the boundary or of a
// float count that is not a multiple of four, with ArgMaxOneEnv, and on the
// compatibility kernels (compatOff).
func TestArgMaxQueue(t *testing.T) {
	const out = 7 << 40
	for _, c := range []struct {
		rows, cols  int
		off         uint64 // the row pointer's bytes past a 16-byte boundary
		one, compat bool
		want        string
	}{
		{1, 128256, 0, false, false, "argmax_f32_c"},
		{3, 152064, 0, false, false, "argmax_f32_c"},
		{1, argmaxClusterCols, 0, false, false, "argmax_f32_c"},
		{1, argmaxClusterCols - 4, 0, false, false, "argmax_f32"},
		{2, 128258, 0, false, false, "argmax_f32"}, // the second row off the boundary
		{1, 128257, 0, false, false, "argmax_f32"},
		{1, 128256, 4, false, false, "argmax_f32"},
		{1, 128256, 0, true, false, "argmax_f32"},
		{1, 128256, 0, false, true, "argmax_f32"},
	} {
		name := fmt.Sprintf("%dx%d off %d one %v compat %v", c.rows, c.cols, c.off, c.one, c.compat)
		t.Run(name, func(t *testing.T) {
			q := newQueueOnly(false)
			for _, n := range []string{"argmax_f32", "argmax_f32_c"} {
				q.kernels[n] = &kernel{name: n}
			}
			q.amOne = c.one
			if c.compat {
				q.compatOff()
			}
			x := q.f32(c.rows, c.cols)
			x.ptr += c.off
			q.argmaxTo(out, x)
			args, dims := slices.Clone(q.queue.args[:q.queue.nargs[0]]), slices.Clone(q.queue.dims[:5])
			wantQueue(t, name, q.names(), c.want)
			grid := c.rows
			if c.want == "argmax_f32_c" {
				grid *= argmaxParts
			}
			if int(dims[0]) != grid || dims[1] != 1 || dims[3] != argmaxThreads || dims[4] != 0 {
				t.Errorf("dims %v, want %d blocks of %d threads, no dynamic shared memory", dims, grid, argmaxThreads)
			}
			if want := []uint64{out, x.ptr, uint64(c.cols), uint64(c.cols)}; !slices.Equal(args, want) {
				t.Errorf("args %v, want %v", args, want)
			}
		})
	}
}

// TestArgMaxConstsMatchSample: the host's argmax block and cluster sizes are the kernels'
// (sample.cuh's ARGMAX_THREADS, sample.cu's ARGMAX_PARTS): the grid argmaxTo gives
// argmax_f32_c is rows times the cluster, which only a GPU would show wrong.
func TestArgMaxConstsMatchSample(t *testing.T) {
	if n := kernelDefine(t, "sample.cuh", "ARGMAX_THREADS"); n != argmaxThreads {
		t.Errorf("ARGMAX_THREADS %d, argmaxThreads %d", n, argmaxThreads)
	}
	if n := kernelDefine(t, "sample.cu", "ARGMAX_PARTS"); n != argmaxParts {
		t.Errorf("ARGMAX_PARTS %d, argmaxParts %d", n, argmaxParts)
	}
}
