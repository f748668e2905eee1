package cuda

import (
	"fmt"
	"os"
)

// DenseEvictEnv names an environment variable for the dense batch-1 products' weight
// loads: 1 loads them evict-first in every model, 0 never, and unset (the default) does
// so once the model has routed experts (RoutedExperts was called). The products are
// mmv_*_1 and mmv_multi* over the mv1 types (mv1Type); their _e kernels load with an L2
// evict-first policy (mv1.cuh's wev), which routed experts' and per-head products do
// always. In a mixture-of-experts step the dense products' weights would otherwise push
// out of L2 what the routing and the small kernels read again: DeepSeek-V2-Lite Q4_K_M's
// tg128 gained 1.7% on an H200 (five of six paired rounds; 2.0% with every mv1 product
// evict-first), while the 8B Llama, where nothing else competes for L2, lost ~0.4% with
// them (NOTES.md, sessions 44 and 47).
const DenseEvictEnv = "EMBER_CUDA_DENSE_EF"

// denseEvict is DenseEvictEnv's choice and whether routed experts have been seen.
type denseEvict struct {
	mode int  // 1 always, 0 never, -1 once routed
	moe  bool // RoutedExperts has been called
}

// denseEvictFromEnv reads DenseEvictEnv.
func denseEvictFromEnv() (denseEvict, error) {
	switch v := os.Getenv(DenseEvictEnv); v {
	case "":
		return denseEvict{mode: -1}, nil
	case "0":
		return denseEvict{mode: 0}, nil
	case "1":
		return denseEvict{mode: 1}, nil
	default:
		return denseEvict{}, fmt.Errorf("cuda: $%s=%q: want 0 or 1", DenseEvictEnv, v)
	}
}

// on reports whether dense batch-1 products load their weights evict-first.
func (e denseEvict) on() bool { return e.mode == 1 || e.mode < 0 && e.moe }

// evictNames maps each dense batch-1 kernel that has an evict-first form (mmv_*_1 of the
// mv1 types and every mmv_multi kernel, multiKernels) to that form's name, built once so
// that queuing a launch makes no string.
var evictNames = func() map[string]string {
	m := map[string]string{}
	for _, k := range multiKernels {
		m[k] = k + "_e"
	}
	for t := range suffix {
		if mv1Type(t) {
			m[mmvName(t, 1)] = mmvName(t, 1) + "e"
		}
	}
	return m
}()

// denseName is the kernel to launch for the dense batch-1 kernel name: its evict-first
// form where loads are to be evict-first and it has one.
func (b *Backend) denseName(name string) string {
	if e, ok := evictNames[name]; ok && b.evict.on() {
		return e
	}
	return name
}
