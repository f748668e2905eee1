package cuda_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/model/goldentest"
	"ember/inference/quant"
)

// TestCublasOutOfMemoryFallsBack: when the GPU cannot hold cuBLASLt's scratch (its
// workspace, the f16 weight chunk, the f16 activation rows), a large product runs on our
// kernels instead, with no error, and once memory is free again it goes to cuBLASLt.
// The weights' f16 copies stay off: with one (made by the first product, while the GPU
// had room) the product needs none of that scratch, and cuBLASLt rightly takes it
// (f16copy_test.go tests the copies).
func TestCublasOutOfMemoryFallsBack(t *testing.T) {
	be := newLtOrSkip(t)
	defer be.Close()
	setCublas := func(minRows int) {
		cuda.SetCublas(be, minRows, 0)
		cuda.SetF16Copies(be, false, 0)
	}
	setCublas(1)
	const m, k, n = 4096, 4096, 300
	rng := rand.New(rand.NewPCG(21, 22))
	data, _ := quantized(t, rng, quant.Q4_K, m, k)
	w, err := be.Weight(quant.Q4_K, m, k, data)
	if err != nil {
		t.Fatal(err)
	}
	rb := ref.New()
	wr, _ := rb.Weight(quant.Q4_K, m, k, data)
	_, xb, xr := ltInput(t, be, rb, rng, n, k)
	db, dr := newF32(t, be, n, m), newF32(t, rb, n, m)
	rb.MatMul(dr, wr, xr)
	want := backendtest.ReadF32(t, rb, dr)

	// Once on our kernels, which allocate their scratch; then fill the GPU from another
	// backend (its memory returns to the driver at its Close) in 1 GiB, 16 MiB and 1 MiB
	// tensors, so that nothing of cuBLASLt's 32 MiB workspace or weight chunk fits.
	setCublas(1 << 30)
	be.MatMul(db, w, xb)
	if err := be.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	setCublas(1)
	hog := newWith(t, cuda.Options{NoCublas: true})
	filled := 0
	for _, rows := range []int{1 << 14, 1 << 8, 1 << 4} {
		for {
			if _, err := hog.New(quant.F32, rows, 1<<14); err != nil {
				break
			}
			filled += rows << 16
		}
	}
	t.Logf("filled %d MiB", filled>>20)
	before := cuda.CublasProducts(be)
	be.MatMul(db, w, xb)
	if err := be.Sync(context.Background()); err != nil {
		t.Fatalf("the product with the GPU full: %v", err)
	}
	if got := cuda.CublasProducts(be) - before; got != 0 {
		t.Fatalf("%d products ran on cuBLASLt with no room for its scratch", got)
	}
	if e := goldentest.NMSE(backendtest.ReadF32(t, be, db), want); !(e < 1e-10) {
		t.Fatalf("the product on our kernels: NMSE %.3g against the reference", e)
	}
	if err := hog.Close(); err != nil {
		t.Fatal(err)
	}
	be.MatMul(db, w, xb)
	if got := cuda.CublasProducts(be) - before; got != 1 {
		t.Fatalf("%d products on cuBLASLt once memory is free again, want 1", got)
	}
	if e := goldentest.NMSE(backendtest.ReadF32(t, be, db), want); !(e < 1e-5) {
		t.Fatalf("the product on cuBLASLt: NMSE %.3g against the reference", e)
	}
}
