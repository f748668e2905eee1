package cuda_test

import (
	"maps"
	"os"
	"testing"
	"time"

	"ember/inference/backend/cuda"
	kcuda "ember/kernels/cuda"
)

// TestCubinsLoad (GPU): on a GPU the machine code was made for, every module loads from
// it, with the same kernels waiting on the grid as the PTX says; with
// $EMBER_CUDA_CUBIN=0 none does. Both starts' times are logged (the second compiles the
// PTX unless the driver's cache has it).
func TestCubinsLoad(t *testing.T) {
	t.Setenv(kcuda.DirEnv, "")
	t.Setenv(cuda.CubinEnv, "")
	t0 := time.Now()
	b := newOrSkip(t)
	dt := time.Since(t0)
	n, pdl := cuda.Modules(b)
	got, d, code := cuda.Cubins(b), b.Device(), b.KernelCode()
	b.Close()
	t.Logf("%s (%d.%d): %d of %d modules from machine code (%s), started in %v", d.Name, d.Major, d.Minor, got, n, code, dt)
	want := 0
	switch {
	case d.Major == 8:
		want = len(kcuda.CompatModules)
	case os.Getenv(cuda.CompatEnv) != "1" && d.Major == 9 && d.Minor == 0:
		want = len(kcuda.Modules)
	}
	if got != want || n != want && want > 0 {
		t.Errorf("%d of %d modules from machine code, want %d", got, n, want)
	}
	t.Setenv(cuda.CubinEnv, "0")
	t0 = time.Now()
	b = newOrSkip(t)
	dt = time.Since(t0)
	n0, pdl0 := cuda.Modules(b)
	got0 := cuda.Cubins(b)
	b.Close()
	t.Logf("$%s=0: %d of %d modules from machine code, started in %v", cuda.CubinEnv, got0, n0, dt)
	if got0 != 0 || n0 != n {
		t.Errorf("$%s=0: %d of %d modules from machine code, want 0 of %d", cuda.CubinEnv, got0, n0, n)
	}
	if !maps.EqualFunc(pdl, pdl0, maps.Equal) {
		t.Error("the kernels that wait on the grid differ between the machine code and the PTX")
	}
}
