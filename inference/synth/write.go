package synth

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"time"

	"ember/inference/convert"
	"ember/inference/quant"
)

// Options are the settings of a file besides the model's shape.
type Options struct {
	FileType  string // a name of FileTypes(): "q4_k_m", "q8_0", "f16", ...
	Seed      string // keys the random stream; equal seeds give equal files
	GainLog2  int    // multiplies every random weight by 2^GainLog2
	Alignment int    // tensor data alignment; 0: 32
	Threads   int    // goroutines making random blocks; <= 0: one per CPU
}

// Summary describes a written file.
type Summary struct {
	Tensors int
	Params  int64            // weights in all tensors
	Bytes   int64            // file size
	ByType  map[string]int64 // weights of each type
	Elapsed time.Duration
}

// Write writes the synthetic model p to path (atomically: see convert.AtomicFile),
// streaming the tensors: memory stays at a few chunks of 32 MiB whatever the model size.
func Write(ctx context.Context, path string, p Params, opt Options) (Summary, error) {
	start := time.Now()
	af, err := convert.CreateAtomic(path)
	if err != nil {
		return Summary{}, err
	}
	defer af.Abort()
	sum, err := WriteTo(ctx, af, p, opt)
	if err != nil {
		return sum, err
	}
	if err := af.Commit(); err != nil {
		return sum, err
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// WriteTo writes the synthetic model p to w; see Write.
func WriteTo(ctx context.Context, w io.Writer, p Params, opt Options) (Summary, error) {
	start := time.Now()
	sum := Summary{ByType: map[string]int64{}}
	if err := p.check(); err != nil {
		return sum, err
	}
	if opt.Alignment == 0 {
		opt.Alignment = 32
	}
	if opt.Alignment < 0 || opt.Alignment > math.MaxInt32 || opt.Alignment&(opt.Alignment-1) != 0 {
		return sum, fmt.Errorf("synth: alignment %d is not a power of two", opt.Alignment)
	}
	if opt.Threads <= 0 {
		opt.Threads = runtime.NumCPU()
	}
	if opt.FileType == "" {
		opt.FileType = "q4_k_m"
	}
	ts, fileType, err := plan(&p, opt.FileType)
	if err != nil {
		return sum, err
	}
	fl, err := newFiller(opt.Seed, opt.GainLog2)
	if err != nil {
		return sum, err
	}
	kvs, err := metadata(&p, fileType, uint32(opt.Alignment))
	if err != nil {
		return sum, err
	}
	descs := make([]convert.TensorDesc, len(ts))
	for i := range ts {
		descs[i] = ts[i].TensorDesc
	}
	cw := &countWriter{w: w}
	sw, err := convert.NewStreamWriter(cw, kvs, descs)
	if err != nil {
		return sum, err
	}
	if err := stream(ctx, sw, ts, fl, opt.Threads); err != nil {
		return sum, err
	}
	if err := sw.Close(); err != nil {
		return sum, err
	}
	for _, t := range ts {
		n := int64(1)
		for _, d := range t.Dims {
			n *= int64(d)
		}
		sum.Params += n
		sum.ByType[t.Type.String()] += n
	}
	sum.Tensors, sum.Bytes, sum.Elapsed = len(ts), cw.n, time.Since(start)
	return sum, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// job is one chunk of random blocks: made by a worker, written in order.
type job struct {
	typ     quant.Type
	counter uint64
	size    int         // bytes
	ones    bool        // F32 1.0 instead of random
	done    chan []byte // the chunk, once made
}

// stream writes every tensor's data: the chunks are made by threads goroutines and
// written in order. Chunk c of the file uses random counter c (1, 2, ...), counted over
// the random tensors only, exactly as the script counts.
func stream(ctx context.Context, sw *convert.StreamWriter, ts []tensor, fl *filler, threads int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending := make(chan *job, 2*threads)
	work := make(chan *job)
	// Chunk buffers go back here once written: fresh 32 MiB allocations would cost a page
	// fault per 4 KiB each time.
	free := make(chan []byte, 3*threads+1)
	go func() { // dispatch, in file order
		defer close(pending)
		defer close(work)
		counter := uint64(0)
		for _, t := range ts {
			size, _ := quant.RowBytes(t.Type, elements(t.Dims))
			bsz := uint64(t.Type.TypeSize())
			step := max(1, chunkBytes/bsz) * bsz
			for off := uint64(0); off < size; off += step {
				j := &job{typ: t.Type, size: int(min(step, size-off)), ones: t.fill == fillOnes, done: make(chan []byte, 1)}
				if !j.ones {
					counter++
					j.counter = counter
				}
				select {
				case pending <- j:
				case <-ctx.Done():
					return
				}
				select {
				case work <- j:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				var buf []byte
				select {
				case buf = <-free:
				default:
				}
				if cap(buf) < j.size {
					buf = make([]byte, j.size)
				}
				buf = buf[:j.size]
				if j.ones {
					for i := 0; i < len(buf); i += 4 {
						binary.LittleEndian.PutUint32(buf[i:], math.Float32bits(1))
					}
				} else {
					fl.blocks(j.typ, j.counter, buf)
				}
				j.done <- buf
			}
		}()
	}
	defer wg.Wait()
	for j := range pending {
		var buf []byte
		select {
		case buf = <-j.done:
		case <-ctx.Done():
			return fmt.Errorf("synth: %w", ctx.Err())
		}
		if _, err := sw.Write(buf); err != nil {
			cancel()
			return err
		}
		select {
		case free <- buf:
		default:
		}
	}
	return ctx.Err()
}

func elements(dims []uint64) uint64 {
	n := uint64(1)
	for _, d := range dims {
		n *= d
	}
	return n
}
