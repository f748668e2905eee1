package cuda

import "testing"

// TestSkipped: $EMBER_CUDA_SKIP's prefixes, exact names (name$) and grids (name@N).
func TestSkipped(t *testing.T) {
	skip := []string{"attention", "quant_q8$", "mmv_id_q4_k@528", ""}
	for _, c := range []struct {
		name string
		gx   int
		want bool
	}{{"attention_dec128", 8, true}, {"quant_q8", 1, true}, {"quant_q8_k", 2, false}, {"mmv_id_q4_k", 528, true},
		{"mmv_id_q4_k", 128, false}, {"mmv_id_q4_k_x", 528, false}, {"rope2_set", 16, false}} {
		if got := skipped(skip, c.name, c.gx); got != c.want {
			t.Errorf("%s (%d blocks): skipped %v, want %v", c.name, c.gx, got, c.want)
		}
	}
	if skipped(nil, "mmv_q4_k_1", 1) {
		t.Error("nothing to skip, yet skipped")
	}
}
