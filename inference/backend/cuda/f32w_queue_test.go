package cuda

import (
	"slices"
	"testing"

	"ember/inference/quant"
)

// TestF32WeightQueue: one activation row's product with an F32 weight (or a view of
// one) runs on mmv_f32_1w, which reads its weights before the kernel's wait; with an F32
// tensor that is not a weight (a kernel may be writing it), two rows, or noF32W
// (F32WeightEnv 0), on mmv_f32_1 / mmv_f32_2.
func TestF32WeightQueue(t *testing.T) {
	for _, c := range []struct {
		name        string
		weight, ofW bool
		off         bool
		rows        int
		want        string
	}{
		{"weight", true, false, false, 1, "mmv_f32_1w"},
		{"a weight's view", false, true, false, 1, "mmv_f32_1w"},
		{"not a weight", false, false, false, 1, "mmv_f32_1"},
		{"switched off", true, false, true, 1, "mmv_f32_1"},
		{"two rows", true, false, false, 2, "mmv_f32_2"},
	} {
		q := newMMQQueue("mmv_f32_1", "mmv_f32_1w", "mmv_f32_2")
		q.noF32W = c.off
		w, x, d := q.tensor(t, quant.F32, 64, 2048), q.tensor(t, quant.F32, c.rows, 2048), q.tensor(t, quant.F32, c.rows, 64)
		w.weight, w.ofWeight = c.weight, c.ofW
		q.MatMul(d, w, x)
		ls := q.launches()
		if names := q.names(); !slices.Equal(names, []string{c.want}) {
			t.Errorf("%s: queued %v, want %s", c.name, names, c.want)
			continue
		}
		if l := ls[0]; l.gx != 64 || !slices.Equal(l.args, []uint64{w.ptr, 4 * 2048, x.ptr, 4 * 2048, d.ptr, 64, 64, 2048, uint64(c.rows)}) {
			t.Errorf("%s: grid %d, args %v", c.name, l.gx, l.args)
		}
	}
}
