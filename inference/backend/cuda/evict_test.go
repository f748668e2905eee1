package cuda

import (
	"regexp"
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
	kcuda "ember/kernels/cuda"
)

// TestDenseEvictQueue (no GPU needed): a decode row's dense products take their _e
// kernels (evict-first weight loads) once routed experts have been seen, or always or
// never as DenseEvictEnv says; types without an mv1 kernel keep theirs.
func TestDenseEvictQueue(t *testing.T) {
	const K, N = 512, 256
	for _, c := range []struct {
		mode      int
		moe       bool
		one, pair string // Q4_K's batch-1 kernel, a gate/up pair's
		q8, q3k   string // Q8_0's and Q3_K's (no mv1 kernel) batch-1 kernels
	}{
		{-1, false, "mmv_q4_k_1", "mmv_multi", "mmv_q8_0_1", "mmv_q3_k_1"},
		{-1, true, "mmv_q4_k_1e", "mmv_multi_e", "mmv_q8_0_1e", "mmv_q3_k_1"},
		{0, true, "mmv_q4_k_1", "mmv_multi", "mmv_q8_0_1", "mmv_q3_k_1"},
		{1, false, "mmv_q4_k_1e", "mmv_multi_e", "mmv_q8_0_1e", "mmv_q3_k_1"},
	} {
		q := newMMQQueue("quant_q8_k", "quant_q8", "mmv_q4_k_1", "mmv_q4_k_1e", "mmv_multi", "mmv_multi_e",
			"mmv_q8_0_1", "mmv_q8_0_1e", "mmv_q3_k_1")
		q.mvsc.off = true
		q.evict = denseEvict{mode: c.mode, moe: c.moe}
		x := q.tensor(t, quant.F32, 1, K)
		w, d := q.tensor(t, quant.Q4_K, N, K), q.tensor(t, quant.F32, 1, N)
		q.MatMul(d, w, x)
		g, u := q.tensor(t, quant.F32, 1, N), q.tensor(t, quant.F32, 1, N)
		gate, up := q.tensor(t, quant.Q4_K, N, K), q.tensor(t, quant.Q4_K, N, K)
		q.MatMulShared(x, []backend.Proj{{Dst: g, W: gate}, {Dst: u, W: up}})
		want := []string{"quant_q8_k", c.one, "quant_q8_k", c.pair}
		if got := q.names(); !slices.Equal(got, want) {
			t.Errorf("mode %d, experts seen %v: queued %v, want %v", c.mode, c.moe, got, want)
		}
		q.MatMul(d, q.tensor(t, quant.Q8_0, N, K), x)
		q.MatMul(d, q.tensor(t, quant.Q3_K, N, K), x)
		if got := q.names(); !slices.Contains(got, c.q8) || !slices.Contains(got, c.q3k) {
			t.Errorf("mode %d, experts seen %v: queued %v, want %s and %s", c.mode, c.moe, got, c.q8, c.q3k)
		}
	}
	q := newMMQQueue()
	q.evict = denseEvict{mode: -1} // DenseEvictEnv unset
	if q.evict.on() {
		t.Error("evict-first dense loads before any routed experts")
	}
	// RoutedExperts marks the model as one with experts even where it declines.
	q.hostMoE = true
	q.RoutedExperts(nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, 1, 1, false, false, 1)
	if !q.evict.on() {
		t.Error("RoutedExperts did not turn the dense products' evict-first loads on")
	}
}

// TestDenseEvictEnv: DenseEvictEnv takes 0, 1 or nothing, and names itself otherwise.
func TestDenseEvictEnv(t *testing.T) {
	for v, want := range map[string]int{"": -1, "0": 0, "1": 1} {
		t.Setenv(DenseEvictEnv, v)
		if e, err := denseEvictFromEnv(); err != nil || e.mode != want {
			t.Errorf("$%s=%q: %+v, %v; want mode %d", DenseEvictEnv, v, e, err, want)
		}
	}
	t.Setenv(DenseEvictEnv, "yes")
	if _, err := denseEvictFromEnv(); err == nil || !regexp.MustCompile(DenseEvictEnv).MatchString(err.Error()) {
		t.Errorf("$%s=yes: error %v, want one naming the variable", DenseEvictEnv, err)
	}
}

// TestDenseEvictKernelsExist (no GPU needed): every _e kernel denseName can give is an
// entry of the embedded PTX (names built at run time escape TestKernelNamesExist).
func TestDenseEvictKernelsExist(t *testing.T) {
	p, err := kcuda.PTX("matmul")
	if err != nil {
		t.Fatal(err)
	}
	b := &Backend{evict: denseEvict{mode: 1}}
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q5_0, quant.Q4_K, quant.Q6_K, quant.Q8_0} {
		for _, n := range []string{mmvName(typ, 1), "mmv_multi", "mmv_multi_q8_0"} {
			e := b.denseName(n)
			if e == n {
				t.Errorf("%v: %s has no evict-first form", typ, n)
			}
			if !regexp.MustCompile(`\.entry\s+` + e + `\s*\(`).Match(p) {
				t.Errorf("%v: kernel %s is not in matmul.ptx", typ, e)
			}
		}
	}
}
