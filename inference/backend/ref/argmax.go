package ref

import (
	"context"
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
	"ember/inference/sample"
)

var _ backend.ArgMaxer = (*Backend)(nil)

// ArgMax implements backend.ArgMaxer: sample.Greedy of each row.
func (*Backend) ArgMax(ctx context.Context, src backend.Tensor, dst []int32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := want(src, quant.F32)
	if len(dst) != t.rows {
		return fmt.Errorf("ref: ArgMax of %d rows into %d ids", t.rows, len(dst))
	}
	for r := range dst {
		dst[r] = sample.Greedy(t.f32[r*t.cols : (r+1)*t.cols])
	}
	return nil
}
