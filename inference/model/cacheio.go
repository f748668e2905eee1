package model

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/quant"
)

// BlockBytes is the size of one block's K and V in every layer, as ReadBlock returns it.
func (c *Cache) BlockBytes() int {
	n := 0
	for l := range c.K {
		n += c.BlockSize * c.rowBytes(c.K[l].Cols())
		if !c.shared {
			n += c.BlockSize * c.rowBytes(c.V[l].Cols())
		}
	}
	return n
}

// rowBytes is the bytes of a row of cols values in ReadBlock's form: F16 for an F16
// cache; for a Q8_0 cache its own blocks where every layer's backend copies rows as
// they are stored (backend.RowCopier), else F32, which holds the dequantized values
// exactly (and WriteBlock's rounding to Q8_0 gives the same blocks back).
func (c *Cache) rowBytes(cols int) int {
	switch {
	case c.typ != quant.Q8_0:
		return 2 * cols
	case c.rawRows():
		return cols / 32 * 34
	}
	return 4 * cols
}

// rawRows reports whether a Q8_0 cache's blocks move as their stored bytes: every
// layer's backend copies rows (backend.RowCopier).
func (c *Cache) rawRows() bool {
	if c.typ != quant.Q8_0 {
		return false
	}
	for _, be := range c.place.Backends() {
		if _, ok := be.(backend.RowCopier); !ok {
			return false
		}
	}
	return true
}

// ReadBlock returns the K and V of block blk in every layer: per layer, K rows then V
// rows, as F16 little-endian (a Q8_0 cache: its stored blocks, or F32 on a backend that
// cannot copy them; rowBytes). With WriteBlock it moves blocks to and from disk (the
// persistent prefix cache).
func (c *Cache) ReadBlock(ctx context.Context, blk int) ([]byte, error) {
	if err := c.blockRows(blk); err != nil {
		return nil, err
	}
	out := make([]byte, 0, c.BlockBytes())
	if c.rawRows() {
		for l := range c.K {
			for i := range c.perLayer() {
				cache := c.kv(l, i)
				b, err := c.place[l].(backend.RowCopier).ReadRows(ctx, cache, blk*c.BlockSize, c.BlockSize)
				if err != nil {
					return nil, fmt.Errorf("model: read KV block %d: %w", blk, err)
				}
				out = append(out, b...)
			}
		}
		return out, nil
	}
	for l := range c.K {
		a := c.auxOf(c.place[l])
		for i := range c.perLayer() {
			cache, tmp := c.kv(l, i), a.copyBuf(i)
			a.be.GetRows(tmp, cache, a.copySrc) // F16 or Q8_0 -> F32, exact
			f := make([]float32, tmp.Rows()*tmp.Cols())
			if err := a.be.ReadF32(ctx, tmp, f); err != nil {
				return nil, fmt.Errorf("model: read KV block %d: %w", blk, err)
			}
			for _, v := range f {
				if c.typ == quant.Q8_0 {
					out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
				} else {
					out = binary.LittleEndian.AppendUint16(out, quant.FP32ToFP16(v))
				}
			}
		}
	}
	return out, nil
}

// WriteBlock fills block blk with data from ReadBlock.
func (c *Cache) WriteBlock(blk int, data []byte) error {
	if len(data) != c.BlockBytes() {
		return fmt.Errorf("model: KV block of %d bytes, want %d", len(data), c.BlockBytes())
	}
	if err := c.blockRows(blk); err != nil {
		return err
	}
	if c.rawRows() {
		for l := range c.K {
			for i := range c.perLayer() {
				cache := c.kv(l, i)
				n := c.BlockSize * c.rowBytes(cache.Cols())
				if err := c.place[l].(backend.RowCopier).WriteRows(cache, blk*c.BlockSize, data[:n]); err != nil {
					return fmt.Errorf("model: write KV block %d: %w", blk, err)
				}
				data = data[n:]
			}
		}
		return nil
	}
	var f []float32
	for l := range c.K {
		a := c.auxOf(c.place[l])
		for i := range c.perLayer() {
			cache, tmp := c.kv(l, i), a.copyBuf(i)
			n := tmp.Rows() * tmp.Cols()
			f = f[:0]
			vb := c.rowBytes(1)
			for j := range n {
				if vb == 4 {
					f = append(f, math.Float32frombits(binary.LittleEndian.Uint32(data[4*j:])))
				} else {
					f = append(f, quant.FP16ToFP32(binary.LittleEndian.Uint16(data[2*j:])))
				}
			}
			data = data[vb*n:]
			a.be.WriteF32(tmp, f)
			a.be.SetRows(cache, tmp, a.copySrc)
		}
	}
	return nil
}

// blockRows points every backend's copySrc at the rows of block blk.
func (c *Cache) blockRows(blk int) error {
	nb := c.Size / max(c.BlockSize, 1)
	if c.BlockSize == 0 || blk < 0 || blk >= nb {
		return fmt.Errorf("model: block %d of a cache of %d blocks", blk, nb)
	}
	idx := c.copyIdx[:c.BlockSize]
	for i := range idx {
		idx[i] = int32(blk*c.BlockSize + i)
	}
	for i := range c.aux {
		c.aux[i].be.WriteI32(c.aux[i].copySrc, idx)
	}
	return nil
}

// kv is layer l's K (i = 0) or V (i = 1) cache tensor.
func (c *Cache) kv(l, i int) backend.Tensor {
	if i == 1 {
		return c.V[l]
	}
	return c.K[l]
}

// copyBuf is the F32 block buffer of K (i = 0) or V (i = 1) rows.
func (a *cacheAux) copyBuf(i int) backend.Tensor {
	if i == 1 {
		return a.copyV
	}
	return a.copyK
}

// perLayer is how many cache tensors a layer has: K and V, or one when V is K.
func (c *Cache) perLayer() int {
	if c.shared {
		return 1
	}
	return 2
}
