package cuda

import (
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestGroupsSpacedRows (no GPU): per-head products of one row each whose outputs lie
// further apart than a row (DeepSeek's absorbed query written into the latent columns
// of [rope | latent] rows) are one mmv_idw launch whose output row stride is their
// spacing; outputs that overlap (spaced less than a row), or spaced unevenly, are not a
// run (a launch each).
func TestGroupsSpacedRows(t *testing.T) {
	const H, rope, lat, k = 4, 64, 512, 128
	for _, c := range []struct {
		name    string
		spacing func(h int) int // float offset of head h's output in the query rows
		run     bool
	}{
		{"latent columns", func(h int) int { return h*(rope+lat) + rope }, true},
		{"consecutive rows", func(h int) int { return h * lat }, true},
		{"overlapping", func(h int) int { return h * (lat - 8) }, false},
		{"uneven", func(h int) int { return h*(rope+lat) + rope + 4*(h/3) }, false},
	} {
		q := newMMQQueue("mmv_idw_q8_0", "mmv_id_q8_0", "mmv_q8_0_1", "quant_q8")
		x := q.tensor(t, quant.F32, H, k)
		w := q.tensor(t, quant.Q8_0, H*lat, k)
		w.weight = true
		qh := q.tensor(t, quant.F32, H, rope+lat+8)
		var groups []backend.Group
		for h := 0; h < H; h++ {
			d := &tensor{typ: quant.F32, rows: 1, cols: lat, stride: 4 * lat, ptr: qh.ptr + uint64(4*c.spacing(h)), view: true}
			wv := &tensor{typ: quant.Q8_0, rows: lat, cols: k, stride: w.stride, ptr: w.ptr + uint64(h*lat*w.stride), view: true, ofWeight: true}
			groups = append(groups, backend.Group{Dst: d, W: wv, Row0: h})
		}
		q.MatMulGroups(x, groups)
		ls := q.launches()
		names := q.names()
		if !c.run {
			if n := len(slices.DeleteFunc(names, func(s string) bool { return s == "quant_q8" })); n != H {
				t.Errorf("%s: queued %v, want a product a head", c.name, names)
			}
			continue
		}
		if !slices.Equal(names, []string{"quant_q8", "mmv_idw_q8_0"}) {
			t.Fatalf("%s: queued %v, want quant_q8 and one mmv_idw_q8_0", c.name, names)
		}
		a := ls[1].args // W, wstride, X, xstride, D, dstride, M, K, ...
		if a[4] != qh.ptr+uint64(4*c.spacing(0)) || int(a[5]) != c.spacing(1)-c.spacing(0) || int(a[6]) != lat {
			t.Errorf("%s: D %#x, row stride %d, rows %d; want %#x, %d, %d", c.name, a[4], a[5], a[6],
				qh.ptr+uint64(4*c.spacing(0)), c.spacing(1)-c.spacing(0), lat)
		}
	}
}
