package cuda

import (
	"context"
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

var _ backend.TopKer = (*Backend)(nil)

// topkThreads is the block size of topk_f32 (kernels/cuda/sample.cu, TOPK_THREADS); the
// kernel takes k up to TOPK_MAX, which is backend.MaxTopK.
const topkThreads = 1024

// TopK implements backend.TopKer: topk_f32, one block per row, writes the rows' k ids
// and then their k values into the device scratch ArgMax uses (I32 among the activation
// scratches), which only grows, so a decode step's launches stay equal from step to
// step and keep replaying as a graph; then only the ids and values are copied back.
func (b *Backend) TopK(ctx context.Context, src backend.Tensor, k int, ids []int32, vals []float32) error {
	t := want(src, quant.F32)
	if err := backend.CheckTopK("cuda", t.rows, k, ids, vals); err != nil {
		return err
	}
	n := t.rows * k // ids, then as many values
	if n == 0 {
		return b.Sync(ctx)
	}
	s := b.act[quant.I32]
	if s == nil {
		s = &scratch{}
		b.act[quant.I32] = s
	}
	out := b.scratchFor(s, 8*n)
	if out != 0 {
		b.launch("topk_f32", t.rows, 1, topkThreads, 0, out, out+uint64(4*n), ptr(t), i64(t.stride/4), i64(t.cols), i64(k))
	}
	if out == 0 {
		return b.Sync(ctx) // the scratch failure is recorded
	}
	if err := b.read(ctx, out, bytesOf(ids[:n]), bytesOf(vals[:n])); err != nil {
		return fmt.Errorf("cuda: TopK ids and values: %w", err)
	}
	return nil
}
