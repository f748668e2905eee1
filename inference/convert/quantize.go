package convert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"ember/inference/gguf"
	"ember/inference/quant"
)

// Options configure QuantizeFile.
type Options struct {
	Type     FileType  // the mix to write
	Threads  int       // goroutines that convert rows; <= 0: one per CPU
	Log      io.Writer // progress and warnings (stderr); nil: silent
	Terminal bool      // Log is a terminal: draw a progress bar instead of plain lines
}

// Result summarizes a conversion.
type Result struct {
	Tensors   int
	Converted int   // tensors whose type changed; the rest were copied
	Elements  int64 // weights in all tensors
	InBytes   int64 // tensor data read
	OutBytes  int64 // tensor data written
	Elapsed   time.Duration
}

// slabFloats bounds the float32 rows held at once per tensor (4 bytes each): 64 MiB.
const slabFloats = 16 << 20

// outputWriter is where QuantizeFile's output goes: the file itself, except in tests
// that make the disk fill up.
var outputWriter = func(f *AtomicFile) io.Writer { return f }

// splitKeys are the keys of a split model, which the single output file must not keep.
var splitKeys = []string{"split.no", "split.count", "split.tensors.count"}

// QuantizeFile reads the GGUF model at inPath and writes it to outPath with its weights
// converted to the mix opt.Type, choosing each tensor's type as llama.cpp does (see
// Plan) and writing tensors in llama.cpp's order, so the output is the file llama.cpp's
// quantizer writes. All metadata is kept; general.quantization_version and
// general.file_type are set. Tensors already of their target type are copied; F32, F16
// and BF16 are quantized; other quantized inputs are dequantized first (a warning, as
// that compounds the rounding). outPath appears only when everything was written (see
// AtomicFile); the input is never changed.
func QuantizeFile(ctx context.Context, inPath, outPath string, opt Options) (Result, error) {
	var res Result
	start := time.Now()
	if opt.Threads <= 0 {
		opt.Threads = runtime.NumCPU()
	}
	if opt.Type.Name == "" {
		return res, errors.New("convert: no target type")
	}
	if sameFile(inPath, outPath) {
		return res, fmt.Errorf("convert: output %s is the input file", outPath)
	}
	f, err := gguf.Open(inPath)
	if err != nil {
		return res, fmt.Errorf("convert: input: %w", err)
	}
	defer f.Close()
	m, err := ModelOf(f)
	if err != nil {
		return res, fmt.Errorf("convert: %s: %w", inPath, err)
	}
	descs := make([]TensorDesc, len(f.Tensors))
	for i, t := range f.Tensors {
		descs[i] = TensorDesc{Name: t.Name, Dims: t.Dims, Type: t.Type}
	}
	types, order, err := Plan(m, opt.Type, descs)
	if err != nil {
		return res, err
	}
	out := make([]TensorDesc, len(order))
	for k, i := range order {
		out[k] = TensorDesc{Name: descs[i].Name, Dims: descs[i].Dims, Type: types[i]}
		if types[i] == descs[i].Type {
			continue
		}
		if !quant.CanDequantize(descs[i].Type) {
			return res, fmt.Errorf("convert: tensor %q: cannot convert %v to %v: no dequantizer for %v",
				descs[i].Name, descs[i].Type, types[i], descs[i].Type)
		}
		if !quant.CanQuantize(types[i]) {
			return res, fmt.Errorf("convert: tensor %q: no quantizer for %v", descs[i].Name, types[i])
		}
	}
	kvs, err := outputKVs(f, opt.Type)
	if err != nil {
		return res, err
	}

	af, err := CreateAtomic(outPath)
	if err != nil {
		return res, err
	}
	defer af.Abort()
	sw, err := NewStreamWriter(outputWriter(af), kvs, out)
	if err != nil {
		return res, err
	}
	prog := NewProgress(opt.Log, opt.Terminal, len(order))
	c := converter{threads: opt.Threads, prog: prog}
	warned := map[quant.Type]bool{}
	for k, i := range order {
		ti := &f.Tensors[i]
		data := f.TensorData(ti)
		if data == nil {
			return res, fmt.Errorf("convert: tensor %q: data outside the input file", ti.Name)
		}
		to := out[k].Type
		prog.Begin(k, ti.Name, ti.Type.String(), to.String(), int64(len(data)))
		if to != ti.Type && isQuantized(ti.Type) && !warned[ti.Type] {
			warned[ti.Type] = true
			prog.Warn("tensor %s and any others in %v are dequantized to be requantized: the rounding errors add up", ti.Name, ti.Type)
		}
		n, err := c.tensor(ctx, sw, ti, data, to)
		if err != nil {
			return res, err
		}
		prog.End(n)
		res.Tensors++
		if to != ti.Type {
			res.Converted++
		}
		res.Elements += int64(ti.Elements)
		res.InBytes += int64(len(data))
		res.OutBytes += n
	}
	if err := sw.Close(); err != nil {
		return res, err
	}
	if err := af.Commit(); err != nil {
		return res, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// outputKVs is the input's metadata with the quantization keys set as llama.cpp sets
// them (moved to the end: the version, then the file type) and the split keys removed.
func outputKVs(f *gguf.File, ft FileType) ([]gguf.KV, error) {
	w := gguf.NewWriter()
	if err := w.CopyKVsFrom(f); err != nil {
		return nil, fmt.Errorf("convert: metadata: %w", err)
	}
	for _, kv := range []struct {
		key string
		val uint32
	}{{"general.quantization_version", QuantVersion}, {"general.file_type", ft.ID}} {
		w.RemoveKV(kv.key) // gguf_set_val_u32 moves the key to the end
		if err := w.AddKV(kv.key, kv.val); err != nil {
			return nil, fmt.Errorf("convert: metadata: %w", err)
		}
	}
	for _, k := range splitKeys {
		w.RemoveKV(k)
	}
	return w.KVs(), nil
}

// converter turns tensors into their target type, row slabs at a time, each slab split
// over threads goroutines by rows.
type converter struct {
	threads int
	prog    *Progress
	floats  []float32 // slab buffer, reused
	outBuf  []byte    // slab output, reused
}

// tensor writes t (its bytes data) as type to and returns the bytes written.
func (c *converter) tensor(ctx context.Context, sw *StreamWriter, t *gguf.TensorInfo, data []byte, to quant.Type) (int64, error) {
	if to == t.Type {
		const chunk = 16 << 20
		for off := 0; off < len(data); off += chunk {
			if err := ctx.Err(); err != nil {
				return 0, fmt.Errorf("convert: %w", err)
			}
			end := min(off+chunk, len(data))
			if _, err := sw.Write(data[off:end]); err != nil {
				return 0, err
			}
			c.prog.Update(int64(end))
		}
		return int64(len(data)), nil
	}
	ne0 := int(t.Dims[0])
	nrows := int(t.Elements) / ne0
	inRow := len(data) / nrows
	outRow64, err := quant.RowBytes(to, uint64(ne0))
	if err != nil {
		return 0, fmt.Errorf("convert: tensor %q: %w", t.Name, err)
	}
	outRow := int(outRow64)
	slabRows := max(1, slabFloats/ne0)
	if n := min(slabRows, nrows) * ne0; len(c.floats) < n {
		c.floats = make([]float32, n)
	}
	if n := min(slabRows, nrows) * outRow; len(c.outBuf) < n {
		c.outBuf = make([]byte, n)
	}
	var written int64
	for r0 := 0; r0 < nrows; r0 += slabRows {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("convert: %w", err)
		}
		rows := min(slabRows, nrows-r0)
		src := data[r0*inRow : (r0+rows)*inRow]
		dst := c.outBuf[:rows*outRow]
		if err := c.rows(t.Type, to, src, dst, c.floats[:rows*ne0], ne0, rows); err != nil {
			return 0, fmt.Errorf("convert: tensor %q: %w", t.Name, err)
		}
		if _, err := sw.Write(dst); err != nil {
			return 0, err
		}
		written += int64(len(dst))
		c.prog.Update(int64((r0 + rows) * inRow))
	}
	return written, nil
}

// rows converts rows rows of ne0 elements from src (type from) to dst (type to), with
// floats as scratch, each goroutine taking a contiguous run of rows.
func (c *converter) rows(from, to quant.Type, src, dst []byte, floats []float32, ne0, rows int) error {
	inRow, outRow := len(src)/rows, len(dst)/rows
	workers := min(c.threads, rows)
	per := (rows + workers - 1) / workers
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, rows)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(w, lo, hi int) {
			defer wg.Done()
			fl := floats[lo*ne0 : hi*ne0]
			if err := quant.Dequantize(from, src[lo*inRow:hi*inRow], fl); err != nil {
				errs[w] = err
				return
			}
			errs[w] = quant.Quantize(to, fl, dst[lo*outRow:hi*outRow])
		}(w, lo, hi)
	}
	wg.Wait()
	return errors.Join(errs...)
}
