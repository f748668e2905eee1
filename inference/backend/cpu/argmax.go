package cpu

import (
	"context"
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
	"ember/inference/sample"
)

var _ backend.ArgMaxer = (*Backend)(nil)

// ArgMax implements backend.ArgMaxer: sample.Greedy of each row, rows split across the
// workers (a row of a 128k vocabulary is half a megabyte to scan).
func (b *Backend) ArgMax(ctx context.Context, src backend.Tensor, dst []int32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := want(src, quant.F32)
	if len(dst) != t.rows {
		return fmt.Errorf("cpu: ArgMax of %d rows into %d ids", t.rows, len(dst))
	}
	cols := t.cols
	size, chunks := chunking(t.rows, b.threads, 1, 1, 1)
	b.pool.run(chunks, func(_, c int) {
		for r := c * size; r < min((c+1)*size, t.rows); r++ {
			dst[r] = sample.Greedy(t.f32[r*cols : (r+1)*cols])
		}
	})
	return nil
}
