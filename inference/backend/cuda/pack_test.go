package cuda

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"ember/inference/quant"
)

// TestPackLayouts (no GPU needed): pack moves every byte of a Q8_0 or Q6_K row to
// where common.cuh's device layout says, for rows of several block counts, and leaves
// the row's padding to 16 bytes zero.
func TestPackLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range []struct {
		typ  quant.Type
		cols int
		// fields of block ib of nb: its byte range in the GGUF block, where it goes
		fields []struct{ lo, hi, base, per int }
	}{
		{quant.Q8_0, 32 * 7, []struct{ lo, hi, base, per int }{{2, 34, 0, 32}, {0, 2, 32, 2}}},
		{quant.Q6_K, 256 * 3, []struct{ lo, hi, base, per int }{{0, 128, 0, 128}, {128, 192, 128, 64}, {192, 208, 192, 16}, {208, 210, 208, 2}}},
	} {
		rb64, err := quant.RowBytes(c.typ, uint64(c.cols))
		if err != nil {
			t.Fatal(err)
		}
		const rows = 3
		rb, bs := int(rb64), c.typ.BlockSize()
		nb, bb := c.cols/bs, int(rb64)/(c.cols/bs)
		src := make([]byte, rows*rb)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		stride := align16(rb)
		out := pack(c.typ, rows, c.cols, rb, stride, src)
		if len(out) != rows*stride {
			t.Fatalf("%v x %d: %d bytes, want %d", c.typ, c.cols, len(out), rows*stride)
		}
		for r := range rows {
			o := out[r*stride : (r+1)*stride]
			for ib := range nb {
				blk := src[r*rb+bb*ib : r*rb+bb*(ib+1)]
				for _, f := range c.fields {
					at := f.base*nb + f.per*ib
					if !bytes.Equal(o[at:at+f.per], blk[f.lo:f.hi]) {
						t.Fatalf("%v x %d: row %d block %d bytes %d..%d not at %d", c.typ, c.cols, r, ib, f.lo, f.hi, at)
					}
				}
			}
			if !bytes.Equal(o[rb:], make([]byte, stride-rb)) {
				t.Fatalf("%v x %d: row %d padding not zero", c.typ, c.cols, r)
			}
		}
	}
}
