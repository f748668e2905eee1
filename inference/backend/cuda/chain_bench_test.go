package cuda_test

import (
	"context"
	"os"
	"testing"
	"time"

	"ember/inference/quant"
)

// TestLaunchChain measures what one launch costs in a chain of dependent launches, as a
// decode step's graph runs them (each kernel waiting for the one before; with
// $EMBER_CUDA_NO_PDL or $EMBER_CUDA_NO_GRAPHS set, as those run): batches of n Adds
// (x += y) of rows of 1, 4,096 and 65,536 floats, and of RMSNorms of a 4,096-float row
// (back and forth between two rows), each batch flushed and waited for, timed from the
// third batch on (the first records its graph). Batch-1 decode is such a chain (~11
// launches a Llama layer, 23 a DeepSeek-V2-Lite one), so this is the floor under each
// of its kernels. It runs only with EMBER_CUDA_BENCH set.
func TestLaunchChain(t *testing.T) {
	if os.Getenv("EMBER_CUDA_BENCH") == "" {
		t.Skip("set EMBER_CUDA_BENCH=1 to measure")
	}
	be := newOrSkip(t)
	defer be.Close()
	ctx := context.Background()
	const n, reps = 128, 20
	for _, c := range []struct {
		name string
		cols int
		norm bool
	}{{"add", 1, false}, {"add", 4096, false}, {"add", 65536, false}, {"rms_norm", 4096, true}} {
		x, err := be.New(quant.F32, 1, c.cols)
		if err != nil {
			t.Fatal(err)
		}
		y, err := be.New(quant.F32, 1, c.cols)
		if err != nil {
			t.Fatal(err)
		}
		ones := make([]float32, c.cols)
		for i := range ones {
			ones[i] = 1
		}
		be.WriteF32(x, ones)
		be.WriteF32(y, ones)
		step := func() {
			for i := 0; i < n; i++ {
				switch {
				case !c.norm:
					be.Add(x, x, y)
				case i%2 == 0:
					be.RMSNorm(y, x, x, 1e-5)
				default:
					be.RMSNorm(x, y, y, 1e-5)
				}
			}
			if err := be.Sync(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 3; i++ {
			step()
		}
		t0 := time.Now()
		for r := 0; r < reps; r++ {
			step()
		}
		us := time.Since(t0).Seconds() / (reps * n) * 1e6
		t.Logf("%s of %d floats: %.2f us a launch (%d-launch batches, waited for)", c.name, c.cols, us, n)
	}
}
