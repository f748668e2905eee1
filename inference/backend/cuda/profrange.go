package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include "launch.h"

// em_profiler calls cuProfilerStart (on) or cuProfilerStop in ctx; libcuda.so.1 is
// already open (driver.go), so it is only looked up. 1 when the driver lacks them.
static CUresult em_profiler(CUcontext ctx, int on) {
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!lib) return 1;
	CUresult (*f)(void) = (CUresult(*)(void))dlsym(lib, on ? "cuProfilerStart" : "cuProfilerStop");
	dlclose(lib);
	if (!f) return 1;
	CUresult r = em_ctx_current(ctx);
	return r ? r : f();
}
*/
import "C"

import (
	"fmt"
	"os"
)

// ProfileRangeEnv names an environment variable "A:B": batches A to B-1 (counted from 1,
// as EMBER_CUDA_STATS counts them) run between cuProfilerStart and cuProfilerStop, so
// that a profiler started with collection off (ncu --profile-from-start off) sees only
// them: one decode step of a long run, say, without the thousands of launches before it.
const ProfileRangeEnv = "EMBER_CUDA_PROFILE_RANGE"

// profRange is $EMBER_CUDA_PROFILE_RANGE parsed; from == 0 when unset.
type profRange struct{ from, to int }

func profRangeFromEnv() profRange {
	var r profRange
	if s := os.Getenv(ProfileRangeEnv); s != "" {
		if _, err := fmt.Sscanf(s, "%d:%d", &r.from, &r.to); err != nil || r.from < 1 || r.to <= r.from {
			fmt.Fprintf(os.Stderr, "cuda: ignoring %s=%q (want A:B, 1 <= A < B)\n", ProfileRangeEnv, s)
			return profRange{}
		}
	}
	return r
}

// at starts or stops the profiler before batch n is launched.
func (r profRange) at(ctx C.CUcontext, n int) {
	if r.from == 0 || (n != r.from && n != r.to) {
		return
	}
	on := C.int(0)
	if n == r.from {
		on = 1
	}
	if rc := C.em_profiler(ctx, on); rc != 0 {
		fmt.Fprintf(os.Stderr, "cuda: profiler call at batch %d failed (%d)\n", n, int(rc))
	}
}
