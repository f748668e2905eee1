package cuda

import "testing"

// TestGapHist checks gapHist's buckets at and around their edges and its report.
func TestGapHist(t *testing.T) {
	var h gapHist
	for _, us := range []float64{0, 9.99, 10, 29, 30, 99.5, 100, 450, 1000, 2500} {
		h.add(us / 1e3)
	}
	want := [6]int{2, 2, 2, 1, 1, 2}
	if h.n != want {
		t.Fatalf("counts %v, want %v", h.n, want)
	}
	if h.max != 2.5 {
		t.Errorf("longest %g ms, want 2.5", h.max)
	}
	const s = "<10us 2 (0.010 ms); 10-30us 2 (0.039 ms); 30-100us 2 (0.130 ms); 100-300us 1 (0.100 ms); 300-1000us 1 (0.450 ms); >=1000us 2 (3.500 ms); longest 2.500 ms"
	if got := h.String(); got != s {
		t.Errorf("report\n%s\nwant\n%s", got, s)
	}
	var e gapHist
	if got := e.String(); got != "longest 0.000 ms" {
		t.Errorf("empty report %q", got)
	}
}
