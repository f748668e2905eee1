package cuda

import (
	"context"
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

// NoFusion makes b run every op as its own launches (fuse.go), as $EMBER_CUDA_NO_FUSE
// does, so that tests can compare the fused kernels with the separate ones.
func NoFusion(b *Backend) { b.fuse = fusable{cfg: fuseCfg{read: true, off: true}} }

// DefaultFusion undoes NoFusion: b fuses as its environment says again (read at its next
// launch), so that a test can run both ways on one backend.
func DefaultFusion(b *Backend) { b.fuse = fusable{} }

// Launches is the number of kernels b has launched or queued so far.
func Launches(b *Backend) int { return b.st.kernels + len(b.queue.fns) }

// Queued is the names of the launches queued and not yet flushed.
func Queued(b *Backend) []string { return append([]string(nil), b.queue.names...) }

// ReadI32 reads the I32 tensor src into dst (the routing's expert ids, for tests).
func ReadI32(ctx context.Context, b *Backend, src backend.Tensor, dst []int32) error {
	t := want(src, quant.I32)
	if len(dst) != t.rows*t.cols {
		return fmt.Errorf("cuda: ReadI32 of %d values into %d", t.rows*t.cols, len(dst))
	}
	return b.read(ctx, t.ptr, bytesOf(dst))
}
