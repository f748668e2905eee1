package ref

import (
	"context"
	"fmt"

	"ember/inference/backend"
)

// ReadRows implements backend.RowCopier for tensors stored as raw bytes (a Q8_0 KV
// cache).
func (*Backend) ReadRows(ctx context.Context, bt backend.Tensor, row0, n int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := get(bt)
	if t.raw == nil || row0 < 0 || n < 0 || row0+n > t.rows {
		return nil, fmt.Errorf("ref: ReadRows of rows [%d,%d) of a %dx%d %v tensor", row0, row0+n, t.rows, t.cols, t.typ)
	}
	return append([]byte(nil), t.raw[row0*t.rowBytes:(row0+n)*t.rowBytes]...), nil
}

// WriteRows implements backend.RowCopier: data is whole rows from row0 on.
func (*Backend) WriteRows(bt backend.Tensor, row0 int, data []byte) error {
	t := get(bt)
	if t.raw == nil || t.rowBytes == 0 || len(data)%t.rowBytes != 0 || row0 < 0 || row0+len(data)/t.rowBytes > t.rows {
		return fmt.Errorf("ref: WriteRows of %d bytes at row %d of a %dx%d %v tensor", len(data), row0, t.rows, t.cols, t.typ)
	}
	copy(t.raw[row0*t.rowBytes:], data)
	return nil
}
