package cpu

import (
	"context"

	"ember/inference/backend"
	"ember/inference/quant"
	"ember/inference/sample"
)

var _ backend.TopKer = (*Backend)(nil)

// TopK implements backend.TopKer: sample.TopK of each row, rows split across the
// workers as ArgMax's are.
func (b *Backend) TopK(ctx context.Context, src backend.Tensor, k int, ids []int32, vals []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := want(src, quant.F32)
	if err := backend.CheckTopK("cpu", t.rows, k, ids, vals); err != nil {
		return err
	}
	cols := t.cols
	size, chunks := chunking(t.rows, b.threads, 1, 1, 1)
	b.pool.run(chunks, func(_, c int) {
		for r := c * size; r < min((c+1)*size, t.rows); r++ {
			sample.TopK(t.f32[r*cols:(r+1)*cols], ids[r*k:(r+1)*k], vals[r*k:(r+1)*k])
		}
	})
	return nil
}
