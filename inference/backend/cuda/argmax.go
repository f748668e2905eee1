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

// ArgMax implements backend.ArgMaxer: argmax_f32, one block per row, writes the ids into
// a device scratch buffer that stays put between calls (so a decode step's launches stay
// equal and keep replaying as a graph), and only the ids are copied back. The buffer is
// kept among the activation scratches under I32, which no MatMul rounds to.
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

// argmaxTo queues argmax_f32: one block a row of t writes the row's argmax id at out.
func (b *Backend) argmaxTo(out uint64, t *tensor) {
	b.launch("argmax_f32", t.rows, 1, argmaxThreads, 0, out, ptr(t), i64(t.stride/4), i64(t.cols))
}
