package cuda

import (
	"regexp"
	"slices"
	"strings"
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
		q8, f32   string // Q8_0's and F32's (no mv1 kernel) batch-1 kernels
	}{
		{-1, false, "mmv_q4_k_1", "mmv_multi", "mmv_q8_0_1", "mmv_f32_1"},
		{-1, true, "mmv_q4_k_1e", "mmv_multi_e", "mmv_q8_0_1e", "mmv_f32_1"},
		{0, true, "mmv_q4_k_1", "mmv_multi", "mmv_q8_0_1", "mmv_f32_1"},
		{1, false, "mmv_q4_k_1e", "mmv_multi_e", "mmv_q8_0_1e", "mmv_f32_1"},
	} {
		q := newMMQQueue("quant_q8_k", "quant_q8", "mmv_q4_k_1", "mmv_q4_k_1e", "mmv_multi", "mmv_multi_e",
			"mmv_q8_0_1", "mmv_q8_0_1e", "mmv_f32_1")
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
		q.MatMul(d, q.tensor(t, quant.F32, N, K), x)
		if got := q.names(); !slices.Contains(got, c.q8) || !slices.Contains(got, c.f32) {
			t.Errorf("mode %d, experts seen %v: queued %v, want %s and %s", c.mode, c.moe, got, c.q8, c.f32)
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
	names := []string{"mmv_multi", "mmv_multi_q8_0", "mmv_multi_q5_k", "mmv_multi_q4_0", "mmv_multi_q4_1"}
	for typ := range suffix {
		if mv1Type(typ) {
			names = append(names, mmvName(typ, 1))
		}
	}
	for _, n := range names {
		e := b.denseName(n)
		if e == n {
			t.Errorf("%s has no evict-first form", n)
		}
		for _, k := range []string{n, e} {
			if !regexp.MustCompile(`\.entry\s+` + k + `\s*\(`).Match(p) {
				t.Errorf("kernel %s is not in matmul.ptx", k)
			}
		}
	}
}

// TestMV1xQueue (no GPU needed): one-row products of Q5_K, Q2_K, Q3_K, F16 and BF16
// weights take their mv1 kernels (mv1x.cuh, mv1lo.cuh) at their rows a block (8),
// Q5_K_M's Q/K/V one mmv_multi_q5_k launch, and Q5_K beside Q4_K (no one kernel takes
// both) a launch each, as Q3_K_M's Q/K/V; once routed experts are seen, the dense ones'
// _e forms.
func TestMV1xQueue(t *testing.T) {
	const K = 512
	for _, moe := range []bool{false, true} {
		q := newMMQQueue("quant_q8_k", "quant_half", "mmv_q5_k_1", "mmv_q5_k_1e", "mmv_f16_1", "mmv_f16_1e",
			"mmv_bf16_1", "mmv_bf16_1e", "mmv_multi_q5_k", "mmv_multi_q5_k_e", "mmv_q4_k_1", "mmv_q4_k_1e",
			"mmv_q2_k_1", "mmv_q2_k_1e", "mmv_q3_k_1", "mmv_q3_k_1e", "mmv_q6_k_1", "mmv_q6_k_1e", "quant_q8",
			"mmv_multi_q4_0", "mmv_multi_q4_0_e", "mmv_multi_q4_1", "mmv_multi_q4_1_e",
			"mmv_q4_0_1", "mmv_q4_0_1e", "mmv_q8_0_1", "mmv_q8_0_1e")
		q.mvsc.off = true
		q.act[quant.Q8_1] = &scratch{ptr: 7 << 40, size: 1 << 30} // Q4_1's and Q5_1's dot partner
		q.evict = denseEvict{mode: -1, moe: moe}
		q.act[quant.F16] = &scratch{ptr: 5 << 40, size: 1 << 30} // the half rows' rounding
		q.act[quant.BF16] = &scratch{ptr: 6 << 40, size: 1 << 30}
		e := ""
		if moe {
			e = "e"
		}
		take := func() []queued { ls := q.launches(); q.names(); return ls }
		x := q.tensor(t, quant.F32, 1, K)
		for _, c := range []struct {
			typ  quant.Type
			want string
		}{{quant.Q5_K, "mmv_q5_k_1"}, {quant.F16, "mmv_f16_1"}, {quant.BF16, "mmv_bf16_1"}, {quant.Q2_K, "mmv_q2_k_1"}, {quant.Q3_K, "mmv_q3_k_1"}} {
			q.MatMul(q.tensor(t, quant.F32, 1, 40), q.tensor(t, c.typ, 40, K), x)
			ls := take()
			if l := ls[len(ls)-1]; l.name != c.want+e || l.gx != 5 { // 40 rows at 8 a block
				t.Errorf("moe %v: %v one-row product: last launch %s of %d blocks, want %s of 5", moe, c.typ, l.name, l.gx, c.want+e)
			}
		}
		qw, kw, vw := q.tensor(t, quant.Q5_K, 32, K), q.tensor(t, quant.Q5_K, 8, K), q.tensor(t, quant.Q6_K, 8, K)
		qd, kd, vd := q.tensor(t, quant.F32, 1, 32), q.tensor(t, quant.F32, 1, 8), q.tensor(t, quant.F32, 1, 8)
		q.MatMulShared(x, []backend.Proj{{Dst: qd, W: qw}, {Dst: kd, W: kw}, {Dst: vd, W: vw}})
		ls := take()
		want := "mmv_multi_q5_k"
		if moe {
			want += "_e"
		}
		if len(ls) != 2 || ls[0].name != "quant_q8_k" || ls[1].name != want || ls[1].gx != 4+1+1 { // 32/8 + 8/8 + 8/8
			t.Errorf("moe %v: Q5_K_M's Q/K/V queued %+v, want quant_q8_k and %s of 6 blocks", moe, ls, want)
		}
		q.MatMulShared(x, []backend.Proj{{Dst: qd, W: qw}, {Dst: kd, W: q.tensor(t, quant.Q4_K, 8, K)}})
		var got []string
		for _, l := range take() {
			got = append(got, l.name)
		}
		if !slices.Equal(got, []string{"quant_q8_k", "mmv_q5_k_1" + e, "mmv_q4_k_1" + e}) {
			t.Errorf("moe %v: Q5_K beside Q4_K queued %v, want one rounding and a launch each", moe, got)
		}
		q.MatMulShared(x, []backend.Proj{{Dst: qd, W: q.tensor(t, quant.Q3_K, 32, K)}, {Dst: kd, W: q.tensor(t, quant.Q3_K, 8, K)}, {Dst: vd, W: vw}})
		got = nil
		for _, l := range take() {
			got = append(got, l.name)
		}
		if want := []string{"quant_q8_k", "mmv_q3_k_1" + e, "mmv_q3_k_1" + e, "mmv_q6_k_1" + e}; !slices.Equal(got, want) {
			t.Errorf("moe %v: Q3_K_M's Q/K/V queued %v, want %v", moe, got, want)
		}
		// One kernel for each family of the 32-value types (mv1lo.cuh): Q4_0 and Q5_0,
		// Q4_1 and Q5_1; none for Q4_0 beside Q8_0 (one dot partner, two kernels) or for
		// Q2_K and Q3_K (a launch each).
		for _, c := range []struct {
			types []quant.Type
			want  []string
		}{
			{[]quant.Type{quant.Q2_K, quant.Q2_K}, []string{"quant_q8_k", "mmv_q2_k_1", "mmv_q2_k_1"}},
			{[]quant.Type{quant.Q3_K, quant.Q2_K}, []string{"quant_q8_k", "mmv_q3_k_1", "mmv_q2_k_1"}},
			{[]quant.Type{quant.Q4_0, quant.Q4_0, quant.Q5_0}, []string{"quant_q8", "mmv_multi_q4_0"}},
			{[]quant.Type{quant.Q5_1, quant.Q4_1}, []string{"quant_q8", "mmv_multi_q4_1"}},
			{[]quant.Type{quant.Q4_0, quant.Q8_0}, []string{"quant_q8", "mmv_q4_0_1", "mmv_q8_0_1"}},
		} {
			var projs []backend.Proj
			ds := []*tensor{qd, kd, vd}
			for i, typ := range c.types {
				projs = append(projs, backend.Proj{Dst: ds[i], W: q.tensor(t, typ, ds[i].cols, K)})
			}
			q.MatMulShared(x, projs)
			got = nil
			for _, l := range take() {
				got = append(got, l.name)
			}
			want := slices.Clone(c.want)
			for i := 1; moe && i < len(want); i++ { // the _e forms: mmv_multi_*_e, mmv_*_1e
				if strings.HasPrefix(want[i], "mmv_multi") {
					want[i] += "_"
				}
				want[i] += "e"
			}
			if !slices.Equal(got, want) {
				t.Errorf("moe %v: %v queued %v, want %v", moe, c.types, got, want)
			}
		}
	}
}
