package cuda

import (
	"context"
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

var _ backend.TopKer = (*Backend)(nil)

// topkThreads is the block size of topk_f32 (kernels/cuda/sample.cuh, TOPK_THREADS); the
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
		b.topkTo(out, out+uint64(4*n), t, k, &b.topk1)
	}
	if out == 0 {
		return b.Sync(ctx) // the scratch failure is recorded
	}
	if err := b.read(ctx, out, bytesOf(ids[:n]), bytesOf(vals[:n])); err != nil {
		return fmt.Errorf("cuda: TopK ids and values: %w", err)
	}
	return nil
}

// Top-k of a few rows in two passes: one block a row would leave the GPU idle while it
// reads a vocabulary's logits several times, so the first pass splits each row into
// parts of at least topkPart logits over about topkBlocks blocks, each writing its part's
// k first candidates, and the second takes the k first of those (a part's candidates as
// its slots: parts in column order, each sorted, so equal values keep their column
// order) and writes their columns.
const (
	topkPart   = 2048
	topkBlocks = 256
)

// topkTo queues topk_f32 for t's rows: k ids a row at ids and k values at vals; s1 holds
// the first pass's candidates when there are two.
func (b *Backend) topkTo(ids, vals uint64, t *tensor, k int, s1 *scratch) {
	parts := min((t.cols+topkPart-1)/topkPart, max(1, topkBlocks/t.rows))
	if parts <= 1 {
		b.launch("topk_f32", t.rows, 1, topkThreads, 0, ids, vals, ptr(t), i64(t.stride/4), i64(t.cols), i64(k), i64(t.cols), uint64(0))
		return
	}
	chunk := (t.cols + parts - 1) / parts
	parts = (t.cols + chunk - 1) / chunk // no part left empty
	n := t.rows * parts * k
	c := b.scratchFor(s1, 8*n) // the parts' ids, then their values
	if c == 0 {
		return // the failure is recorded
	}
	cv := c + uint64(4*n)
	b.launch("topk_f32", t.rows, parts, topkThreads, 0, c, cv, ptr(t), i64(t.stride/4), i64(t.cols), i64(k), i64(chunk), uint64(0))
	w := parts * k
	b.launch("topk_f32", t.rows, 1, topkThreads, 0, ids, vals, cv, i64(w), i64(w), i64(k), i64(w), c)
}
