package cuda

import (
	"context"
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

var _ backend.ArgMaxer = (*Backend)(nil)

// argmaxThreads is the block size of argmax_f32 (kernels/cuda/sample.cuh, ARGMAX_THREADS).
const argmaxThreads = 1024

// ArgMax implements backend.ArgMaxer: argmaxTo writes the ids into a device scratch
// buffer that stays put between calls (so a decode step's launches stay equal and keep
// replaying as a graph), and only the ids are copied back. The buffer is kept among the
// activation scratches under I32, which no MatMul rounds to.
func (b *Backend) ArgMax(ctx context.Context, src backend.Tensor, dst []int32) error {
	t := want(src, quant.F32)
	if len(dst) != t.rows {
		return fmt.Errorf("cuda: ArgMax of %d rows into %d ids", t.rows, len(dst))
	}
	s := b.act[quant.I32]
	if s == nil {
		s = &scratch{}
		b.act[quant.I32] = s
	}
	out := b.scratchFor(s, 4*t.rows)
	if out != 0 {
		b.argmaxTo(out, t)
	}
	if out == 0 {
		return b.Sync(ctx) // the scratch failure is recorded
	}
	return b.read(ctx, out, bytesOf(dst))
}

// ArgMaxOneEnv names an environment variable: when set, every row's argmax is one block's
// (argmax_f32), not a cluster's (for timing).
const ArgMaxOneEnv = "EMBER_CUDA_ARGMAX_ONE"

// argmaxParts is argmax_f32_c's cluster size (kernels/cuda/sample.cu, ARGMAX_PARTS), and
// argmaxClusterCols the narrowest row it takes: from there each of its blocks has at
// least a 16-byte chunk a thread.
const (
	argmaxParts       = 8
	argmaxClusterCols = 4 * argmaxThreads * argmaxParts
)

// argmaxTo queues the argmax of each row of t into the ids at out: argmax_f32_c (a
// cluster of argmaxParts blocks a row) for wide rows of whole 16-byte chunks at a 16-byte
// boundary on Hopper, else argmax_f32 (one block a row). Both give sample.Greedy's index.
func (b *Backend) argmaxTo(out uint64, t *tensor) {
	if !b.amOne && t.cols >= argmaxClusterCols && t.cols%4 == 0 && ptr(t)%16 == 0 && t.stride%16 == 0 {
		b.launch("argmax_f32_c", t.rows*argmaxParts, 1, argmaxThreads, 0, out, ptr(t), i64(t.stride/4), i64(t.cols))
		return
	}
	b.launch("argmax_f32", t.rows, 1, argmaxThreads, 0, out, ptr(t), i64(t.stride/4), i64(t.cols))
}
