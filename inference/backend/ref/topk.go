package ref

import (
	"context"

	"ember/inference/backend"
	"ember/inference/quant"
	"ember/inference/sample"
)

var _ backend.TopKer = (*Backend)(nil)

// TopK implements backend.TopKer: sample.TopK of each row.
func (*Backend) TopK(ctx context.Context, src backend.Tensor, k int, ids []int32, vals []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := want(src, quant.F32)
	if err := backend.CheckTopK("ref", t.rows, k, ids, vals); err != nil {
		return err
	}
	for r := range t.rows {
		sample.TopK(t.f32[r*t.cols:(r+1)*t.cols], ids[r*k:(r+1)*k], vals[r*k:(r+1)*k])
	}
	return nil
}
