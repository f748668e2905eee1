package model

import (
	"fmt"
	"slices"

	"ember/inference/backend"
)

// Placement is the backend of each layer of a model, when its layers do not all fit one
// device: a GPU too small for the weights and KV cache takes the last layers and the
// CPU the first ones (llama.cpp's -ngl). The hidden state crosses once per forward pass
// where the backend changes. A model on one backend has a uniform placement.
type Placement []backend.Backend

// Uniform places n layers on be.
func Uniform(be backend.Backend, n int) Placement {
	pl := make(Placement, n)
	for i := range pl {
		pl[i] = be
	}
	return pl
}

// SplitLast places the last onLast of n layers on last and the others on first.
func SplitLast(first, last backend.Backend, n, onLast int) Placement {
	onLast = max(0, min(onLast, n))
	pl := Uniform(first, n)
	for i := n - onLast; i < n; i++ {
		pl[i] = last
	}
	return pl
}

// Backends lists the distinct backends of pl in the order of their first layer.
func (pl Placement) Backends() []backend.Backend {
	var out []backend.Backend
	for _, be := range pl {
		if !slices.Contains(out, be) {
			out = append(out, be)
		}
	}
	return out
}

// Layers counts the layers of each of Backends.
func (pl Placement) Layers() []int {
	bes := pl.Backends()
	n := make([]int, len(bes))
	for _, be := range pl {
		n[slices.Index(bes, be)]++
	}
	return n
}

// Uniform reports whether every layer is on one backend.
func (pl Placement) Uniform() bool { return len(pl.Backends()) <= 1 }

func (pl Placement) check(p Params) error {
	if len(pl) != p.NLayer {
		return fmt.Errorf("model: a placement of %d layers for %d", len(pl), p.NLayer)
	}
	for i, be := range pl {
		if be == nil {
			return fmt.Errorf("model: layer %d has no backend", i)
		}
	}
	return nil
}

// Placer is implemented by models whose layers may be on several backends.
type Placer interface {
	// Placement is the backend of each layer; Backend() is the last layer's (where the
	// logits are).
	Placement() Placement
}

// PlacementOf is m's layers' backends: its Placement, or every layer on m.Backend().
func PlacementOf(m Model) Placement {
	if pm, ok := m.(Placer); ok {
		return pm.Placement()
	}
	return Uniform(m.Backend(), m.Params().NLayer)
}

// FeederOf returns m's backend as a backend.Feeder when m can evaluate a batch whose
// token ids that backend holds (Batch.Fed): every layer, the embedding included, on that
// one backend.
func FeederOf(m Model) (backend.Feeder, bool) {
	if pl, ok := m.(Placer); ok && !pl.Placement().Uniform() {
		return nil, false
	}
	fd, ok := m.Backend().(backend.Feeder)
	return fd, ok
}
