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
func (b *Backend) write(dst uint64, src unsafe.Pointer, n int) { b.stageWrite(dst, src, n, true) }

// stageWrite is write; without flush, the copy goes on the stream at once, before the
// kernels queued but not yet flushed, which the caller knows do not touch dst.
func (b *Backend) stageWrite(dst uint64, src unsafe.Pointer, n int, flush bool) {
	if flush {
		b.flush()
	}
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

// A read to the host (logits, sampled token ids) is copied into pinned host memory on
// the stream, right after the kernels that produce it, and from there into the caller's
// slice once the device is idle, instead of a synchronous copy into pageable Go memory
// (which goes through the driver's own staging while the device waits). On the H200,
// tg128 with each token's logits read (session 17, runs interleaved in one call, against
// $EMBER_CUDA_SYNC_READS=1): Llama-3.1-8B Q4_K_M 420 / 426 tok/s against 413 / 419,
// Q8_0 308 against 303, DeepSeek-V2-Lite 340 / 366 against 318 / 331; 64 streams
// (sampled ids read each step) 7,728 against 7,576. Reads past readStageMax, or all with
// $EMBER_CUDA_SYNC_READS, stay synchronous.
const readStageMax = 64 << 20

// readStage is the pinned buffer of reads, grown to the largest read so far.
type readStage struct {
	ptr  unsafe.Pointer
	size int
	off  bool // pinned memory could not be had, or $EMBER_CUDA_SYNC_READS
}

// read copies the device bytes at src to host memory after all queued work, and waits
// for them: dsts in turn take consecutive parts (one copy and one sync for all).
func (b *Backend) read(ctx context.Context, src uint64, dsts ...[]byte) error {
	n := 0
	for _, d := range dsts {
		n += len(d)
	}
	b.flush()
	r := &b.rstage
	if n > r.size && !r.off && n <= readStageMax {
		if r.ptr != nil {
			if err := b.Sync(ctx); err != nil { // no copy into the old buffer in flight
				return err
			}
			if err := b.h.hostFree(r.ptr); err != nil {
				b.fail(err)
				return b.err
			}
			r.ptr, r.size = nil, 0
		}
		if os.Getenv("EMBER_CUDA_SYNC_READS") == "" {
			size := align16(max(n, 1<<20))
			if p, err := b.h.hostAlloc(size); err == nil {
				r.ptr, r.size = p, size
			}
		}
		r.off = r.ptr == nil
	}
	staged := r.ptr != nil && n <= r.size
	if staged && b.err == nil {
		b.fail(b.h.dtohAsync(r.ptr, src, n))
	}
	if err := b.Sync(ctx); err != nil {
		return err
	}
	t0 := time.Now()
	defer func() { b.st.tCopy += time.Since(t0) }()
	off := 0
	for _, d := range dsts {
		if len(d) == 0 {
			continue
		}
		if staged {
			copy(d, unsafe.Slice((*byte)(unsafe.Add(r.ptr, off)), len(d)))
		} else if err := b.h.dtoh(unsafe.Pointer(&d[0]), src+uint64(off), len(d)); err != nil {
			return err
		}
		off += len(d)
	}
	return nil
}

// bytesOf is the memory of s as bytes.
func bytesOf[T int32 | float32](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}

// freeStage releases the pinned buffers (at Close, after the device is idle).
func (b *Backend) freeStage() error {
	var err error
	if p := b.rstage.ptr; p != nil {
		b.rstage.ptr, b.rstage.size = nil, 0
		err = b.h.hostFree(p)
	}
	if b.stage.ptr == nil {
		return err
	}
	p := b.stage.ptr
	b.stage.ptr = nil
	if e := b.h.hostFree(p); err == nil {
		err = e
	}
	return err
}
