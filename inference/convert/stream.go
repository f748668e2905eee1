package convert

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"

	"ember/inference/gguf"
	"ember/inference/quant"
)

// StreamWriter writes a GGUF v3 file whose tensor data arrives piece by piece, tensor
// after tensor, so that a model larger than memory can be written: the header (metadata
// and tensor infos with their offsets) first, then each tensor's bytes, each tensor
// padded to the alignment. Its output is byte for byte what gguf.Writer.WriteTo writes
// for the same metadata and tensors. Not safe for concurrent use.
type StreamWriter struct {
	w       *bufio.Writer
	tensors []TensorDesc
	sizes   []uint64 // data bytes of each tensor
	align   uint64
	cur     int    // the tensor being written
	left    uint64 // bytes of tensor cur still to come
	err     error  // the first write error; sticky
}

// NewStreamWriter writes the header for kvs (in order; general.alignment, if present,
// sets the alignment) and the tensors (names, dims in ggml order, types), and returns
// the writer for their data. A bad key, value, name, shape or type is an error here,
// before anything is written.
func NewStreamWriter(w io.Writer, kvs []gguf.KV, tensors []TensorDesc) (*StreamWriter, error) {
	meta := gguf.NewWriter()
	for _, kv := range kvs {
		if err := meta.AddKV(kv.Key, kv.Value); err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
	}
	align := uint64(gguf.DefaultAlignment)
	if v, ok := lookupKV(kvs, gguf.KeyAlignment); ok {
		a, _ := v.Uint() // AddKV checked it is a uint32 power of two
		align = a
	}
	// The metadata-only file is "GGUF", version, tensor count 0, KV count, the KVs: the
	// KVs' encoding is what follows the 24-byte preamble.
	var buf bytes.Buffer
	if _, err := meta.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	enc := buf.Bytes()[24:]

	s := &StreamWriter{tensors: tensors, sizes: make([]uint64, len(tensors)), align: align}
	hdr := make([]byte, 0, 64+len(enc)+64*len(tensors))
	hdr = append(hdr, "GGUF"...)
	hdr = binary.LittleEndian.AppendUint32(hdr, 3)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(tensors)))
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(kvs)))
	hdr = append(hdr, enc...)
	names := make(map[string]bool, len(tensors))
	offset := uint64(0)
	for i, t := range tensors {
		size, err := tensorSize(t)
		if err != nil {
			return nil, err
		}
		if names[t.Name] {
			return nil, fmt.Errorf("convert: tensor %q: duplicate name", t.Name)
		}
		names[t.Name] = true
		s.sizes[i] = size
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(t.Name)))
		hdr = append(hdr, t.Name...)
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			hdr = binary.LittleEndian.AppendUint64(hdr, d)
		}
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(t.Type))
		hdr = binary.LittleEndian.AppendUint64(hdr, offset)
		if size > math.MaxInt64-align-offset {
			return nil, fmt.Errorf("convert: tensor %q: data section overflows", t.Name)
		}
		offset = alignUp(offset+size, align)
	}
	if len(tensors) > 0 {
		hdr = append(hdr, make([]byte, alignUp(uint64(len(hdr)), align)-uint64(len(hdr)))...) // at most align-1 bytes
	}
	s.w = bufio.NewWriterSize(w, 1<<20)
	s.write(hdr)
	s.start(0)
	return s, s.err
}

func lookupKV(kvs []gguf.KV, key string) (gguf.Value, bool) {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return gguf.Value{}, false
}

// tensorSize checks a tensor's name, dims and type as gguf.Writer.AddTensor does and
// returns its data size in bytes.
func tensorSize(t TensorDesc) (uint64, error) {
	if t.Name == "" || len(t.Name) > gguf.MaxNameLen {
		return 0, fmt.Errorf("convert: tensor %q: name length %d, want 1..%d bytes", t.Name, len(t.Name), gguf.MaxNameLen)
	}
	if len(t.Dims) < 1 || len(t.Dims) > gguf.MaxDims {
		return 0, fmt.Errorf("convert: tensor %q: %d dims, want 1..%d", t.Name, len(t.Dims), gguf.MaxDims)
	}
	if !t.Type.Known() {
		return 0, fmt.Errorf("convert: tensor %q: unknown type %v", t.Name, t.Type)
	}
	n := uint64(1)
	for _, d := range t.Dims {
		hi, lo := bits.Mul64(n, d)
		if d == 0 || hi != 0 || lo > math.MaxInt64 {
			return 0, fmt.Errorf("convert: tensor %q: dims %v are 0 or overflow the element count", t.Name, t.Dims)
		}
		n = lo
	}
	if bs := uint64(t.Type.BlockSize()); t.Dims[0]%bs != 0 {
		return 0, fmt.Errorf("convert: tensor %q: row length %d is not a multiple of the %v block size %d", t.Name, t.Dims[0], t.Type, bs)
	}
	size, err := quant.RowBytes(t.Type, n)
	if err != nil {
		return 0, fmt.Errorf("convert: tensor %q: %w", t.Name, err)
	}
	return size, nil
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }

func (s *StreamWriter) write(p []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(p)
		if s.err != nil {
			s.err = fmt.Errorf("convert: write: %w", s.err)
		}
	}
}

// start makes tensor i current (no tensor is empty: every dim is at least 1).
func (s *StreamWriter) start(i int) {
	s.cur = i
	if i < len(s.tensors) {
		s.left = s.sizes[i]
	}
}

// Tensor is the index of the tensor whose data Write expects next (len(tensors) once
// all are written).
func (s *StreamWriter) Tensor() int { return s.cur }

var zeroPad [256]byte

// Write appends p to the data of the current tensor; p may end the tensor but not run
// into the next one (split the bytes yourself), so a mistake in the caller's sizes is an
// error rather than a shifted file.
func (s *StreamWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.cur >= len(s.tensors) {
		return 0, errors.New("convert: write past the last tensor")
	}
	if uint64(len(p)) > s.left {
		return 0, fmt.Errorf("convert: tensor %q: %d bytes written, only %d left of its %d",
			s.tensors[s.cur].Name, len(p), s.left, s.sizes[s.cur])
	}
	s.write(p)
	s.left -= uint64(len(p))
	if s.left == 0 {
		size := s.sizes[s.cur]
		for pad := alignUp(size, s.align) - size; pad > 0; {
			n := min(pad, uint64(len(zeroPad)))
			s.write(zeroPad[:n])
			pad -= n
		}
		s.start(s.cur + 1)
	}
	if s.err != nil {
		return 0, s.err
	}
	return len(p), nil
}

// Close checks that every tensor's data was written and flushes. It does not close the
// underlying writer.
func (s *StreamWriter) Close() error {
	if s.err != nil {
		return s.err
	}
	if s.cur < len(s.tensors) {
		return fmt.Errorf("convert: tensor %q: %d of its %d bytes missing", s.tensors[s.cur].Name, s.left, s.sizes[s.cur])
	}
	if err := s.w.Flush(); err != nil {
		s.err = fmt.Errorf("convert: write: %w", err)
	}
	return s.err
}

// AtomicFile is an output file written under a temporary name in the destination's
// directory and renamed over the destination only by Commit, so that the destination is
// never seen half written: an error or a crash leaves at most the temporary file, and
// Abort removes that.
type AtomicFile struct {
	*os.File
	path string
	done bool
}

// CreateAtomic starts writing path. The directory must exist and be writable; path must
// not be a directory.
func CreateAtomic(path string) (*AtomicFile, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("convert: output %s is a directory", path)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("convert: create output in %s: %w", dir, err)
	}
	return &AtomicFile{File: f, path: path}, nil
}

// Commit flushes the file to disk, closes it and renames it to the destination
// (readable by all, as a file made with the usual umask would be). On error the
// temporary file is removed.
func (a *AtomicFile) Commit() error {
	if a.done {
		return errors.New("convert: output already committed or aborted")
	}
	err := a.File.Sync()
	if err == nil {
		err = a.File.Chmod(0o644)
	}
	if cerr := a.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.File.Name(), a.path)
	}
	a.done = true
	if err != nil {
		os.Remove(a.File.Name())
		return fmt.Errorf("convert: write %s: %w", a.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file; the destination is untouched. Calling it
// after Commit does nothing, so it can be deferred.
func (a *AtomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.File.Close()
	os.Remove(a.File.Name())
}
