// Package model holds what every architecture shares: the Model interface, the Batch a
// forward pass evaluates, hyperparameters read from GGUF metadata, weight binding with
// shape checks, and the common layers (attention over the KV cache, SwiGLU FFN).
package model

import (
	"context"
	"errors"
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

// ErrContextFull is returned when a batch would write past the end of the KV cache.
var ErrContextFull = errors.New("model: KV cache is full")

// Batch is the tokens one forward pass evaluates: one sequence over a contiguous cache,
// or tokens of several sequences over a paged cache (continuous batching).
type Batch struct {
	Tokens []int32 // token ids
	Pos    []int32 // position of each token in its sequence; len(Pos) == len(Tokens)
	// Seq and Tables place the tokens in a paged cache: token i belongs to sequence
	// Seq[i], whose cache blocks (of Cache.BlockSize positions) are Tables[Seq[i]] in
	// position order, so position p is cache row Tables[s][p/bs]*bs + p%bs. With Tables
	// nil the cache is one contiguous sequence and position p is cache row p.
	Seq    []int32
	Tables [][]int32
	// Logits lists the rows (indices into Tokens) that get a logits row, in order; nil
	// means the last row, or every row with AllLogits; an empty, non-nil slice asks for
	// none (a prompt chunk) and Forward returns a nil tensor.
	Logits    []int32
	AllLogits bool
	// Fed says the token ids are on the backend already: those of its last
	// backend.Feeder ArgMaxAhead or SampleAhead, one per row in order (the steps of
	// decoding queued ahead of the host). Tokens is then unused (nil) and Pos gives the
	// rows.
	Fed bool
}

// Len is the number of tokens b evaluates.
func (b *Batch) Len() int {
	if b.Fed {
		return len(b.Pos)
	}
	return len(b.Tokens)
}

// Rows returns the number of logits rows Forward returns for b.
func (b *Batch) Rows() int {
	switch {
	case b.Logits != nil:
		return len(b.Logits)
	case b.AllLogits:
		return b.Len()
	}
	return 1
}

// Model is one loaded architecture bound to a backend.
type Model interface {
	// Params are the hyperparameters read from the file.
	Params() Params
	// NewCache allocates a KV cache for nCtx positions on the model's backend.
	NewCache(nCtx int) (*Cache, error)
	// Forward evaluates b, writing its keys and values into c, and returns the logits:
	// F32 [b.Rows(), NVocab]. The tensor is owned by the model and valid until the next
	// Forward.
	Forward(ctx context.Context, c *Cache, b Batch) (backend.Tensor, error)
	// Backend is the backend the weights live on.
	Backend() backend.Backend
	// Close frees the weights and scratch buffers.
	Close() error
}

// Cache is the KV cache, F16 (or Q8_0: NewPagedCacheOn): per layer, K [Size,
// NKVHead*HeadDim] and V [Size, NKVHead*VHeadDim], on that layer's backend. A
// contiguous cache (NewCache) holds one sequence, position p in row p. A paged cache (NewPagedCache) is Size/BlockSize blocks
// of BlockSize rows that sequences own through block tables (see Batch and package
// kvcache). With Params.SharedKV, V[l] is K[l]: one tensor per layer.
type Cache struct {
	K, V      []backend.Tensor
	Size      int // rows: positions it can hold
	BlockSize int // paged: positions per block; 0 for a contiguous cache
	// MaxSeqs and MaxBlocks bound a paged batch: at most MaxSeqs sequences, each with a
	// table of at most MaxBlocks blocks.
	MaxSeqs, MaxBlocks int
	tableHost          []int32
	copyIdx            []int32
	place              Placement  // each layer's backend
	aux                []cacheAux // per backend of place: a paged cache's tables and copy buffers
	shared             bool       // Params.SharedKV: V[l] is K[l]
	typ                quant.Type // F16 or Q8_0
}

// Type is the cache's element type: F16, or Q8_0 for a quantized cache.
func (c *Cache) Type() quant.Type { return c.typ }

// cacheAux are a paged cache's buffers on one backend: the batch's block tables (I32
// [MaxSeqs, MaxBlocks]) and CopyBlock's row indices and one block of K and V rows as F32.
type cacheAux struct {
	be                                    backend.Backend
	table, copySrc, copyDst, copyK, copyV backend.Tensor
	// tableKept is what the last batch wrote into table's first rows: a decode step's
	// tables change only when a sequence takes a new block, so the next write of the
	// same rows is skipped (a copy the device waits for, a few a step).
	tableKept []int32
}

// NewCache allocates a contiguous cache of nCtx positions for p on be.
func NewCache(be backend.Backend, p Params, nCtx int) (*Cache, error) {
	return NewCacheOn(Uniform(be, p.NLayer), p, nCtx)
}

// NewCacheOn allocates a contiguous cache of nCtx positions for p, each layer's K and V
// on its backend in pl.
func NewCacheOn(pl Placement, p Params, nCtx int) (*Cache, error) {
	if nCtx <= 0 {
		return nil, errors.New("model: context size must be positive")
	}
	if err := pl.check(p); err != nil {
		return nil, err
	}
	c := &Cache{Size: nCtx, place: pl, typ: quant.F16}
	if err := c.alloc(p); err != nil {
		return nil, err
	}
	return c, nil
}

// NewPagedCache allocates a paged cache of numBlocks blocks of blockSize positions for p
// on be, for batches of at most maxSeqs sequences of at most maxBlocks blocks each.
func NewPagedCache(be backend.Backend, p Params, numBlocks, blockSize, maxSeqs, maxBlocks int) (*Cache, error) {
	return NewPagedCacheOn(Uniform(be, p.NLayer), p, numBlocks, blockSize, maxSeqs, maxBlocks, quant.F16)
}

// NewPagedCacheOn is NewPagedCache with each layer's K and V on its backend in pl (and
// the tables and copy buffers on each of those backends), of type kv: F16, or Q8_0 (a
// quantized cache: half the memory, on backends that hold one; rows of whole 32-value
// blocks).
func NewPagedCacheOn(pl Placement, p Params, numBlocks, blockSize, maxSeqs, maxBlocks int, kv quant.Type) (*Cache, error) {
	if numBlocks <= 0 || blockSize <= 0 || maxSeqs <= 0 || maxBlocks <= 0 || numBlocks > (1<<31-1)/blockSize {
		return nil, fmt.Errorf("model: paged cache of %d blocks of %d, %d sequences of %d blocks", numBlocks, blockSize, maxSeqs, maxBlocks)
	}
	if kv != quant.F16 && kv != quant.Q8_0 {
		return nil, fmt.Errorf("model: a KV cache of %v (F16 or Q8_0)", kv)
	}
	if kv == quant.Q8_0 && (p.HeadDim%32 != 0 || p.VHeadDim%32 != 0) {
		return nil, fmt.Errorf("model: a Q8_0 KV cache needs head dims in whole blocks of 32 (%d, %d)", p.HeadDim, p.VHeadDim)
	}
	if err := pl.check(p); err != nil {
		return nil, err
	}
	c := &Cache{Size: numBlocks * blockSize, BlockSize: blockSize, MaxSeqs: maxSeqs, MaxBlocks: maxBlocks, place: pl, typ: kv}
	if err := c.alloc(p); err != nil {
		return nil, err
	}
	for _, be := range pl.Backends() {
		a := cacheAux{be: be}
		for _, b := range []struct {
			t          *backend.Tensor
			typ        quant.Type
			rows, cols int
		}{
			{&a.table, quant.I32, maxSeqs, maxBlocks},
			{&a.copySrc, quant.I32, blockSize, 1}, {&a.copyDst, quant.I32, blockSize, 1},
			{&a.copyK, quant.F32, blockSize, p.NKVHead * p.HeadDim}, {&a.copyV, quant.F32, blockSize, p.NKVHead * p.VHeadDim},
		} {
			t, err := be.New(b.typ, b.rows, b.cols)
			if err != nil {
				c.aux = append(c.aux, a)
				c.Free()
				return nil, err
			}
			*b.t = t
		}
		c.aux = append(c.aux, a)
	}
	c.tableHost, c.copyIdx = make([]int32, maxSeqs*maxBlocks), make([]int32, 2*blockSize)
	return c, nil
}

func (c *Cache) alloc(p Params) error {
	if p.SharedKV && p.VHeadDim != p.HeadDim {
		return fmt.Errorf("model: a shared K and V cache with %d key and %d value dims", p.HeadDim, p.VHeadDim)
	}
	c.shared = p.SharedKV
	for l := 0; l < p.NLayer; l++ {
		be := c.place[l]
		k, err := be.New(c.typ, c.Size, p.NKVHead*p.HeadDim)
		if err != nil {
			c.Free()
			return err
		}
		c.K = append(c.K, k)
		if c.shared {
			c.V = append(c.V, k)
			continue
		}
		v, err := be.New(c.typ, c.Size, p.NKVHead*p.VHeadDim)
		if err != nil {
			c.Free()
			return err
		}
		c.V = append(c.V, v)
	}
	return nil
}

// auxOf is the buffers on be of a paged cache, nil when it has none there.
func (c *Cache) auxOf(be backend.Backend) *cacheAux {
	for i := range c.aux {
		if c.aux[i].be == be {
			return &c.aux[i]
		}
	}
	return nil
}

// CopyBlock copies the first rows positions of block src to block dst in every layer
// (copy-on-write of a shared, partly filled block). Paged caches only.
func (c *Cache) CopyBlock(src, dst, rows int) error {
	nb := c.Size / max(c.BlockSize, 1)
	if c.BlockSize == 0 || src < 0 || dst < 0 || src >= nb || dst >= nb || rows < 0 || rows > c.BlockSize {
		return fmt.Errorf("model: copy of %d rows from block %d to %d in a cache of %d blocks of %d", rows, src, dst, nb, c.BlockSize)
	}
	if rows == 0 {
		return nil
	}
	s, d := c.copyIdx[:rows], c.copyIdx[c.BlockSize:c.BlockSize+rows]
	for i := range s {
		s[i], d[i] = int32(src*c.BlockSize+i), int32(dst*c.BlockSize+i)
	}
	for i := range c.aux {
		a := &c.aux[i]
		a.be.WriteI32(a.be.View(a.copySrc, 0, rows), s)
		a.be.WriteI32(a.be.View(a.copyDst, 0, rows), d)
	}
	for l := range c.K {
		a := c.auxOf(c.place[l])
		be := a.be
		st, dt := be.View(a.copySrc, 0, rows), be.View(a.copyDst, 0, rows)
		k, v := be.View(a.copyK, 0, rows), be.View(a.copyV, 0, rows)
		be.GetRows(k, c.K[l], st) // F16 -> F32 -> F16 is exact
		be.SetRows(c.K[l], k, dt)
		if c.shared {
			continue
		}
		be.GetRows(v, c.V[l], st)
		be.SetRows(c.V[l], v, dt)
	}
	return nil
}

// Free releases the cache's tensors.
func (c *Cache) Free() {
	for l, t := range c.K {
		c.place[l].Free(t)
		if !c.shared && l < len(c.V) {
			c.place[l].Free(c.V[l])
		}
	}
	for i := range c.aux {
		a := &c.aux[i]
		for _, t := range []*backend.Tensor{&a.table, &a.copySrc, &a.copyDst, &a.copyK, &a.copyV} {
			if *t != nil {
				a.be.Free(*t)
				*t = nil
			}
		}
	}
	c.K, c.V, c.aux = nil, nil, nil
}
