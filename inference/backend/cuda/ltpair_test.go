package cuda

import (
	"testing"

	"ember/inference/quant"
)

// TestLtPairKey: which two cuBLASLt jobs become one batched product, and its key: item
// 0 the job whose weights lie first (both strides positive: outputs that lie the other
// way round are no pair), alignments the lower of the two; not for other shapes,
// weights not f16 in one chunk, or outputs that overlap.
func TestLtPairKey(t *testing.T) {
	const m, n, k = 1024, 64, 4096
	job := func(wptr, f16, dptr uint64, typ quant.Type, rows int) *ltJob {
		w := &tensor{typ: typ, rows: rows, cols: k, stride: k / 256 * 144, ptr: wptr, f16: f16}
		d := &tensor{typ: quant.F32, rows: n, cols: rows, stride: 4 * rows, ptr: dptr}
		key := ltKey{m: rows, n: n, k: k, lda: k, ldb: k, ldd: rows, alA: 256, alB: 256, alD: align(dptr)}
		return &ltJob{d: d, w: w, n: n, rows: rows, plans: []*ltPlan{{key: key}}}
	}
	const gib = 1 << 30
	kv := func() (*ltJob, *ltJob) { // K's copy after V's, K's output after V's
		return job(0x1000, 3*gib, 0x100000+4*n*m+64, quant.Q4_K, m), job(0x2000, 2*gib+0x100, 0x100000, quant.Q6_K, m)
	}
	j0, j1 := kv()
	key, a, d, ok := ltPairKey(j0, j1)
	if !ok {
		t.Fatal("K and V: no pair")
	}
	if a != 2*gib+0x100 || d != j1.d.ptr {
		t.Errorf("item 0: weights %#x, output %#x; want V's (%#x, %#x)", a, d, uint64(2*gib+0x100), j1.d.ptr)
	}
	if key.batch != 2 || key.sa != (gib-0x100)/2 || key.sd != n*m+16 {
		t.Errorf("batch %d, strides %d and %d; want 2, %d and %d", key.batch, key.sa, key.sd, (gib-0x100)/2, n*m+16)
	}
	if key.alA != 256 || key.alD != 64 || key.m != m || key.n != n || key.k != k || key.ldd != m {
		t.Errorf("key %+v", key)
	}
	if k2, _, _, _ := ltPairKey(j1, j0); k2 != key {
		t.Errorf("the other order gives %+v, want %+v", k2, key)
	}
	rev0, rev1 := job(0x1000, 3*gib, 0x100000, quant.Q4_K, m), job(0x2000, 2*gib, 0x100000+4*n*m, quant.Q4_K, m)
	if _, _, _, ok := ltPairKey(rev0, rev1); ok {
		t.Error("outputs the other way round from the weights: paired")
	}
	for _, c := range []struct {
		name   string
		j0, j1 *ltJob
	}{
		{"other rows", job(0, gib, 0x100000, quant.Q4_K, m), job(0, 2*gib, 0x900000, quant.Q4_K, 4096)},
		{"no copy", job(0x1000, 0, 0x100000, quant.Q4_K, m), job(0, 2*gib, 0x900000, quant.Q4_K, m)},
		{"one weight twice", job(0, gib, 0x100000, quant.Q4_K, m), job(0, gib, 0x900000, quant.Q4_K, m)},
		{"overlapping outputs", job(0, gib, 0x100000, quant.Q4_K, m), job(0, 2*gib, 0x100000+4*m, quant.Q4_K, m)},
		{"odd distance", job(0, gib, 0x100000, quant.Q4_K, m), job(0, 2*gib+1, 0x900000, quant.Q4_K, m)},
	} {
		if _, _, _, ok := ltPairKey(c.j0, c.j1); ok {
			t.Errorf("%s: paired", c.name)
		}
	}
	two := job(0, gib, 0x100000, quant.Q4_K, m)
	two.plans = append(two.plans, two.plans[0])
	if _, _, _, ok := ltPairKey(two, job(0, 2*gib, 0x900000, quant.Q4_K, m)); ok {
		t.Error("a job of two chunks: paired")
	}
	f16 := func(p, dp uint64) *ltJob {
		j := job(p, 0, dp, quant.F16, m)
		j.w.stride = 2 * k
		return j
	}
	if _, a, _, ok := ltPairKey(f16(gib, 0x100000), f16(2*gib, 0x900000)); !ok || a != gib {
		t.Errorf("F16 weights: paired %v, item 0's weights %#x", ok, a)
	}
}
