// Package model holds what every architecture shares: the Model interface, the Batch a
// forward pass evaluates, hyperparameters read from GGUF metadata, weight binding with
// shape checks, and the common layers (attention over the KV cache, SwiGLU FFN).
package model

import (
	"context"
	"errors"

	"ember/inference/backend"
	"ember/inference/quant"
)

// ErrContextFull is returned when a batch would write past the end of the KV cache.
var ErrContextFull = errors.New("model: KV cache is full")

// Batch is the tokens one forward pass evaluates, for one sequence for now.
type Batch struct {
	Tokens []int32 // token ids
	Pos    []int32 // position of each token in its sequence; len(Pos) == len(Tokens)
	// AllLogits asks for a logits row for every token; otherwise only the last token's.
	AllLogits bool
}

// Model is one loaded architecture bound to a backend.
type Model interface {
	// Params are the hyperparameters read from the file.
	Params() Params
	// NewCache allocates a KV cache for nCtx positions on the model's backend.
	NewCache(nCtx int) (*Cache, error)
	// Forward evaluates b, writing its keys and values into c, and returns the logits:
	// F32 [rows, NVocab], one row per token with b.AllLogits, else one row. The tensor is
	// owned by the model and valid until the next Forward.
	Forward(ctx context.Context, c *Cache, b Batch) (backend.Tensor, error)
	// Backend is the backend the weights live on.
	Backend() backend.Backend
	// Close frees the weights and scratch buffers.
	Close() error
}

// Cache is a contiguous F16 KV cache: per layer, K [Size, NKVHead*HeadDim] and
// V [Size, NKVHead*VHeadDim]. Row p holds position p.
type Cache struct {
	K, V []backend.Tensor
	Size int // positions it can hold
	be   backend.Backend
}

// NewCache allocates a cache of nCtx positions for p on be.
func NewCache(be backend.Backend, p Params, nCtx int) (*Cache, error) {
	if nCtx <= 0 {
		return nil, errors.New("model: context size must be positive")
	}
	c := &Cache{Size: nCtx, be: be}
	for l := 0; l < p.NLayer; l++ {
		k, err := be.New(quant.F16, nCtx, p.NKVHead*p.HeadDim)
		if err != nil {
			c.Free()
			return nil, err
		}
		c.K = append(c.K, k)
		v, err := be.New(quant.F16, nCtx, p.NKVHead*p.VHeadDim)
		if err != nil {
			c.Free()
			return nil, err
		}
		c.V = append(c.V, v)
	}
	return c, nil
}

// Free releases the cache's tensors.
func (c *Cache) Free() {
	for _, t := range append(c.K, c.V...) {
		c.be.Free(t)
	}
	c.K, c.V = nil, nil
}
