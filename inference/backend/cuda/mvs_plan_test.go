package cuda

import (
	"testing"

	"ember/inference/quant"
)

// TestPlanMVS: the streamed products' plans for Llama-3.1-8B's decode shapes (the most
// rows a tile with three stages in 227 KiB), and the shapes mvs leaves to mv1.
func TestPlanMVS(t *testing.T) {
	w := func(typ quant.Type, rows, cols int) *tensor {
		rb, err := quant.RowBytes(typ, uint64(cols))
		if err != nil {
			t.Fatal(err)
		}
		return &tensor{typ: typ, rows: rows, cols: cols, stride: align16(int(rb))}
	}
	c := mvsConf{smem: mvsSmemMax}
	for _, tc := range []struct {
		name  string
		ws    []*tensor
		k     int
		nw, r int // 0: declined
	}{
		{"gate/up", []*tensor{w(quant.Q4_K, 14336, 4096), w(quant.Q4_K, 14336, 4096)}, 4096, 16, 2},
		{"Q/K/V", []*tensor{w(quant.Q4_K, 4096, 4096), w(quant.Q4_K, 1024, 4096), w(quant.Q6_K, 1024, 4096)}, 4096, 16, 1},
		{"down Q4_K", []*tensor{w(quant.Q4_K, 4096, 14336)}, 14336, 8, 1},
		{"down Q6_K", []*tensor{w(quant.Q6_K, 4096, 14336)}, 14336, 4, 1},
		{"Q8_0 down", []*tensor{w(quant.Q8_0, 4096, 14336)}, 14336, 4, 1},
		{"rows too long", []*tensor{w(quant.Q4_K, 64, 40960)}, 40960, 0, 0},
		{"F16", []*tensor{w(quant.F16, 64, 4096)}, 4096, 0, 0},
		{"mixed partners", []*tensor{w(quant.Q4_K, 64, 4096), w(quant.Q8_0, 64, 4096)}, 4096, 0, 0},
	} {
		p, ok := planMVS(c, tc.ws, tc.k, false)
		if !ok {
			if tc.nw != 0 {
				t.Errorf("%s: declined, want %d warps of %d rows", tc.name, tc.nw, tc.r)
			}
			continue
		}
		if p.nw != tc.nw || p.r != tc.r {
			t.Errorf("%s: %d warps of %d rows, want %d of %d", tc.name, p.nw, p.r, tc.nw, tc.r)
		}
		if p.s < 2 || p.smem > mvsSmemMax || p.sb < p.nw*p.r*tc.ws[0].stride {
			t.Errorf("%s: plan %+v", tc.name, p)
		}
	}
	if _, ok := planMVS(mvsConf{off: true, smem: mvsSmemMax}, []*tensor{w(quant.Q4_K, 64, 4096)}, 4096, false); ok {
		t.Error("planned with mvs off")
	}
	// mvsn holds the row's sums too, and takes no Q8_0.
	if p, ok := planMVS(c, []*tensor{w(quant.Q4_K, 14336, 4096), w(quant.Q4_K, 14336, 4096)}, 4096, true); !ok || p.nw != 16 {
		t.Errorf("norm gate/up: %+v %v", p, ok)
	}
	if _, ok := planMVS(c, []*tensor{w(quant.Q8_0, 64, 4096)}, 4096, true); ok {
		t.Error("norm planned for Q8_0")
	}
}
