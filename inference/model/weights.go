package model

import (
	"fmt"
	"maps"
	"slices"

	"ember/inference/backend"
	"ember/inference/gguf"
	"ember/inference/quant"
)

// Loader binds GGUF tensors to backend tensors by name, checking shapes. It remembers
// the first error, so an architecture can bind all its weights and check Err once.
type Loader struct {
	f     *gguf.File
	be    backend.Backend
	owned []backend.Tensor
	err   error
}

// NewLoader returns a Loader reading f onto be. f must stay open while the weights live.
func NewLoader(f *gguf.File, be backend.Backend) *Loader { return &Loader{f: f, be: be} }

// Err is the first binding error.
func (l *Loader) Err() error { return l.err }

// Owned are the tensors made so far; the model frees them on Close.
func (l *Loader) Owned() []backend.Tensor { return l.owned }

// Has reports whether the file holds a tensor name.
func (l *Loader) Has(name string) bool { _, ok := l.f.Tensor(name); return ok }

func (l *Loader) fail(err error) {
	if l.err == nil {
		l.err = err
	}
}

func (l *Loader) info(name string, dims ...int) *gguf.TensorInfo {
	if l.err != nil {
		return nil
	}
	ti, ok := l.f.Tensor(name)
	if !ok {
		l.fail(fmt.Errorf("model: missing tensor %q", name))
		return nil
	}
	ok = len(ti.Dims) == len(dims)
	for i := 0; ok && i < len(dims); i++ {
		ok = ti.Dims[i] == uint64(dims[i])
	}
	if !ok {
		l.fail(fmt.Errorf("model: tensor %q has shape %v, want %v", name, ti.Dims, dims))
		return nil
	}
	return ti
}

// Matrix binds a 2-D weight with GGUF dims {cols, rows}: rows output features of cols
// inputs each, kept in the file's type.
func (l *Loader) Matrix(name string, cols, rows int) backend.Tensor {
	ti := l.info(name, cols, rows)
	if ti == nil {
		return nil
	}
	t, err := l.be.Weight(ti.Type, rows, cols, l.f.TensorData(ti))
	if err != nil {
		l.fail(fmt.Errorf("model: tensor %q (%v): %w", name, ti.Type, err))
		return nil
	}
	l.owned = append(l.owned, t)
	return t
}

// Stack binds a 3-D weight with GGUF dims {cols, rows, n} (n matrices one after the
// other: experts, or per-head projections) as one (n*rows) x cols matrix, matrix i being
// rows [i*rows, (i+1)*rows); take one with backend.View.
func (l *Loader) Stack(name string, cols, rows, n int) backend.Tensor {
	ti := l.info(name, cols, rows, n)
	if ti == nil {
		return nil
	}
	return l.Bytes(name, ti.Type, n*rows, cols, l.f.TensorData(ti))
}

// Raw returns a weight's type and bytes after checking its GGUF dims, for an
// architecture that rearranges rows before binding them with Bytes; nil on error.
func (l *Loader) Raw(name string, dims ...int) (quant.Type, []byte) {
	ti := l.info(name, dims...)
	if ti == nil {
		return 0, nil
	}
	return ti.Type, l.f.TensorData(ti)
}

// Bytes binds rows x cols elements of type t laid out in data as an owned weight; name
// is for errors. data must stay valid and unmodified until the model is closed.
func (l *Loader) Bytes(name string, t quant.Type, rows, cols int, data []byte) backend.Tensor {
	if l.err != nil {
		return nil
	}
	w, err := l.be.Weight(t, rows, cols, data)
	if err != nil {
		l.fail(fmt.Errorf("model: tensor %q (%v): %w", name, t, err))
		return nil
	}
	l.owned = append(l.owned, w)
	return w
}

// Fail records err as the loader's error unless one is already recorded.
func (l *Loader) Fail(err error) { l.fail(err) }

// Vector binds a 1-D weight of n elements (a norm or a bias) as one F32 row, converting
// from F16 or BF16 if the file stores it so.
func (l *Loader) Vector(name string, n int) backend.Tensor {
	ti := l.info(name, n)
	if ti == nil {
		return nil
	}
	vals := make([]float32, n)
	if err := quant.Dequantize(ti.Type, l.f.TensorData(ti), vals); err != nil {
		l.fail(fmt.Errorf("model: tensor %q: %w", name, err))
		return nil
	}
	return l.F32(name, vals)
}

// F32 uploads host values as one F32 row named name (for errors).
func (l *Loader) F32(name string, vals []float32) backend.Tensor {
	if l.err != nil {
		return nil
	}
	t, err := l.be.New(quant.F32, 1, len(vals))
	if err != nil {
		l.fail(fmt.Errorf("model: tensor %q: %w", name, err))
		return nil
	}
	l.be.WriteF32(t, vals)
	l.owned = append(l.owned, t)
	return t
}

// Scratch holds a model's activation buffers: each is allocated once with room for the
// largest batch seen and used through row views, so a decode step allocates nothing.
type Scratch struct {
	be    backend.Backend
	defs  map[string]bufDef
	bufs  map[string]backend.Tensor
	views map[viewKey]backend.Tensor // views already made, so a decode step allocates none
	cap   int
	// kept holds what WriteKept last wrote into each buffer.
	kept map[string][]int32
}

type viewKey struct {
	name    string
	row0, n int
}

type bufDef struct {
	typ  quant.Type
	cols int
}

// NewScratch returns an empty scratch space on be.
func NewScratch(be backend.Backend) *Scratch {
	return &Scratch{be: be, defs: map[string]bufDef{}, bufs: map[string]backend.Tensor{}, views: map[viewKey]backend.Tensor{}}
}

// Declare names a buffer of rows of cols elements of typ.
func (s *Scratch) Declare(name string, typ quant.Type, cols int) {
	s.defs[name] = bufDef{typ, cols}
}

// Reserve makes every declared buffer hold at least n rows. The buffers are allocated
// in the order of their names, so that a model's memory is laid out the same way in
// every run (a map's order is random, and with it which of two buffers came first).
func (s *Scratch) Reserve(n int) error {
	if n <= s.cap {
		return nil
	}
	s.Free()
	for _, name := range slices.Sorted(maps.Keys(s.defs)) {
		d := s.defs[name]
		t, err := s.be.New(d.typ, n, d.cols)
		if err != nil {
			s.Free()
			return fmt.Errorf("model: scratch buffer %q of %d x %d: %w", name, n, d.cols, err)
		}
		s.bufs[name] = t
	}
	s.cap = n
	return nil
}

// Get is the first n rows of a declared buffer; Reserve(n) must have succeeded.
func (s *Scratch) Get(name string, n int) backend.Tensor {
	return s.view(name, 0, n)
}

// Last is row n-1 of a declared buffer.
func (s *Scratch) Last(name string, n int) backend.Tensor { return s.view(name, n-1, 1) }

func (s *Scratch) view(name string, row0, n int) backend.Tensor {
	key := viewKey{name, row0, n}
	if v, ok := s.views[key]; ok {
		return v
	}
	t, ok := s.bufs[name]
	if !ok || row0+n > s.cap {
		panic(fmt.Sprintf("model: scratch buffer %q rows [%d,%d) not reserved", name, row0, row0+n))
	}
	if len(s.views) > 4096 {
		clear(s.views) // prefill shapes vary; keep the map small
	}
	v := s.be.View(t, row0, n)
	s.views[key] = v
	return v
}

// WriteKept writes v into the first n rows of I32 buffer name and returns them, unless
// its last WriteKept wrote the same values there: for inputs that only the host writes
// and that repeat from step to step (sequence rows, logits rows, a latent attention's
// row maps), each write a copy the device waits for before the step's kernels.
func (s *Scratch) WriteKept(name string, n int, v []int32) backend.Tensor {
	t := s.Get(name, n)
	if prev, ok := s.kept[name]; ok && slices.Equal(prev, v) {
		return t
	}
	s.be.WriteI32(t, v)
	if s.kept == nil {
		s.kept = map[string][]int32{}
	}
	s.kept[name] = append(s.kept[name][:0], v...)
	return t
}

// Free releases all buffers.
func (s *Scratch) Free() {
	clear(s.views)
	clear(s.kept)
	for name, t := range s.bufs {
		s.be.Free(t)
		delete(s.bufs, name)
	}
	s.cap = 0
}
