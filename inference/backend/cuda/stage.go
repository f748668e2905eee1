package cuda

import (
	"context"
	"os"
	"time"
	"unsafe"
)

// A write from the host (token ids, positions, a mixture-of-experts model's routing
// tables, several times per layer) is copied into pinned host memory and queued on the
// stream (cuMemcpyHtoDAsync), in order with the kernels around it, instead of a
// synchronous copy that waits for the device to drain first. A region of the stage is
// reused only after a Sync has seen every copy from it complete: when the stage is
// full, write syncs first. $EMBER_CUDA_SYNC_WRITES turns this off.

// stageSize is the pinned buffer's size; larger writes are copied synchronously.
const stageSize = 64 << 20

// stage is the pinned buffer; off is where the next write goes (bytes since the last
// Sync).
type stage struct {
	ptr     unsafe.Pointer
	off     int
	checked bool // ptr was asked for: nil when pinned memory could not be had or is off
}

// write copies n bytes from src (host memory the caller may reuse at once) to device
// address dst, after the work queued before it.
func (b *Backend) write(dst uint64, src unsafe.Pointer, n int) {
	b.flush()
	t0 := time.Now()
	defer func() { b.st.tCopy += time.Since(t0) }()
	s := &b.stage
	if !s.checked {
		s.checked = true
		if os.Getenv("EMBER_CUDA_SYNC_WRITES") == "" {
			s.ptr, _ = b.h.hostAlloc(stageSize) // without it, writes wait as before
		}
	}
	if s.ptr == nil || n > stageSize {
		b.fail(b.h.htod(dst, src, n))
		return
	}
	if s.off+n > stageSize && b.Sync(context.Background()) != nil {
		return
	}
	p := unsafe.Add(s.ptr, s.off)
	copy(unsafe.Slice((*byte)(p), n), unsafe.Slice((*byte)(src), n))
	b.fail(b.h.htodAsync(dst, p, n))
	s.off += align16(n)
}

// freeStage releases the pinned buffer (at Close, after the device is idle).
func (b *Backend) freeStage() error {
	if b.stage.ptr == nil {
		return nil
	}
	p := b.stage.ptr
	b.stage.ptr = nil
	return b.h.hostFree(p)
}
