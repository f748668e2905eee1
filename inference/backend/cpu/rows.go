package cpu

import (
	"context"

	"ember/inference/backend"
)

// rawRows is t's bytes for backend.RawRows (non-nil raw: a Q8_0 KV cache).
func rawRows(bt backend.Tensor) backend.RawRows {
	t := get(bt)
	return backend.RawRows{Who: "cpu", Raw: t.raw, RowBytes: t.rowBytes, T: bt}
}

// ReadRows implements backend.RowCopier for tensors stored as raw bytes (a Q8_0 KV
// cache).
func (*Backend) ReadRows(ctx context.Context, bt backend.Tensor, row0, n int) ([]byte, error) {
	return rawRows(bt).Read(ctx, row0, n)
}

// WriteRows implements backend.RowCopier: data is whole rows from row0 on.
func (*Backend) WriteRows(bt backend.Tensor, row0 int, data []byte) error {
	return rawRows(bt).Write(row0, data)
}
