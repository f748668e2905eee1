package backend

import (
	"context"
	"fmt"
)

// RawRows is the raw bytes of a tensor stored as rows of rowBytes bytes (a host backend's
// quantized KV cache), for RowCopier implementations; who names the backend in errors.
type RawRows struct {
	Who      string
	Raw      []byte
	RowBytes int
	T        Tensor
}

// Read returns a copy of rows [row0, row0+n).
func (r RawRows) Read(ctx context.Context, row0, n int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.Raw == nil || row0 < 0 || n < 0 || row0+n > r.T.Rows() {
		return nil, fmt.Errorf("%s: ReadRows of rows [%d,%d) of a %dx%d %v tensor", r.Who, row0, row0+n, r.T.Rows(), r.T.Cols(), r.T.Type())
	}
	return append([]byte(nil), r.Raw[row0*r.RowBytes:(row0+n)*r.RowBytes]...), nil
}

// Write copies data, whole rows, over the rows from row0 on.
func (r RawRows) Write(row0 int, data []byte) error {
	if r.Raw == nil || r.RowBytes == 0 || len(data)%r.RowBytes != 0 || row0 < 0 || row0+len(data)/r.RowBytes > r.T.Rows() {
		return fmt.Errorf("%s: WriteRows of %d bytes at row %d of a %dx%d %v tensor", r.Who, len(data), row0, r.T.Rows(), r.T.Cols(), r.T.Type())
	}
	copy(r.Raw[row0*r.RowBytes:], data)
	return nil
}
