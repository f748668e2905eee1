package cuda_test

import (
	"context"
	"strings"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestMatMulTilesMMQ runs backendtest's MatMulTiles with the cuBLASLt path off
// ($EMBER_CUDA_NO_CUBLAS), so that its products of 256 rows or more run on the mmq
// kernels too, against the reference.
// Each tile width is run on every case ($EMBER_CUDA_MMQ_TILE), not only where the
// backend picks it.
func TestMatMulTilesMMQ(t *testing.T) {
	newOrSkip(t).Close()
	t.Setenv("EMBER_CUDA_NO_CUBLAS", "1")
	for _, tile := range []string{"", "16", "32", "64"} {
		t.Run("tile="+tile, func(t *testing.T) {
			t.Setenv(cuda.MMQTileEnv, tile)
			backendtest.RunMatMulTiles(t, func(t *testing.T) backend.Backend { return newOrSkip(t) })
		})
	}
}

// TestMMQLegacyLaunch: a Q5_0 or Q4_0 product of 16 or more rows (K a multiple of 128)
// launches the type's tensor-core kernel, not the mat-vec one; backendtest checks its
// results.
func TestMMQLegacyLaunch(t *testing.T) {
	newOrSkip(t).Close()
	t.Setenv("EMBER_CUDA_NO_CUBLAS", "1")
	b := newOrSkip(t)
	defer b.Close()
	const m, k, n = 577, 128, 64
	for _, typ := range []quant.Type{quant.Q5_0, quant.Q4_0} {
		rb, err := quant.RowBytes(typ, k)
		if err != nil {
			t.Fatal(err)
		}
		w, err := b.Weight(typ, m, k, make([]byte, m*int(rb)))
		if err != nil {
			t.Fatalf("%v weight: %v", typ, err)
		}
		x, err := b.New(quant.F32, n, k)
		if err != nil {
			t.Fatal(err)
		}
		d, err := b.New(quant.F32, n, m)
		if err != nil {
			t.Fatal(err)
		}
		b.MatMul(d, w, x)
		want := map[quant.Type]string{quant.Q5_0: "_q5_0", quant.Q4_0: "_q4_0"}[typ] // mmq_, mmq32_ or mmq16_
		if got := cuda.LastKernel(b); !strings.HasPrefix(got, "mmq") || !strings.HasSuffix(got, want) || strings.HasPrefix(got, "mmq_run") {
			t.Errorf("%v %dx%d weights, %d rows: last kernel %s, want %s", typ, m, k, n, got, want)
		}
		if err := b.Sync(context.Background()); err != nil {
			t.Errorf("%v: %v", typ, err)
		}
		b.Free(w)
		b.Free(x)
		b.Free(d)
	}
}
