package cuda

import (
	"strings"
	"testing"
)

// TestTimelineMatch: each launch takes its module's records in order; two kernels of
// one module that ended their waits the other way round (side by side in a branch) are
// told apart by their grids; a launch of a module with no records left, or of none,
// gets none.
func TestTimelineMatch(t *testing.T) {
	// launches: a (module 0, 16 blocks), b (1, 132), c (0, 8), d (0, 16), e (1, 132), f (-1), g (1, 4)
	mi := []int{0, 1, 0, 0, 1, -1, 1}
	grid := []int{16, 132, 8, 16, 132, 1, 4}
	recs := [][]tlRec{
		{{1, 10, 16, 0}, {3, 35, 16, 0}, {2, 30, 8, 0}}, // d's wait ended before c's
		{{1, 20, 132, 0}, {5, 50, 132, 0}},              // g ran out
	}
	got, _ := tlMatch(mi, grid, make([]string, len(mi)), recs)
	want := []uint64{10, 20, 30, 35, 50, 0, 0}
	for i, r := range got {
		if r.release != want[i] {
			t.Errorf("launch %d: release %d, want %d", i, r.release, want[i])
		}
	}
}

// TestTimelineReport: launches in the order their waits ended, each one's span to the
// next release and its done time to the first release of a launch that follows it (a
// branch: norm 2 beside mmv 1, both following norm 0; the last ones none), and the spans
// and done times summed by kernel, largest span first.
func TestTimelineReport(t *testing.T) {
	var sb strings.Builder
	names := []string{"norm", "mmv", "norm", "mmv", "gone"}
	recs := []tlRec{{900, 1000, 1, 0}, {1500, 2000, 132, 0}, {5500, 6000, 1, 0}, {4000, 5000, 132, 0}, {}}
	preds := [][2]int{{-1, -1}, {0, -1}, {0, -1}, {1, -1}, {3, -1}}
	tlReport(&sb, 7, names, recs, preds)
	out := sb.String()
	for _, s := range []string{
		"cuda timeline of batch 7: 4 launches, 5.0 us from the first release to the last (1 without a record)",
		"    0      0 norm                               1      -0.10       0.00     0.10     1.00     1.00",
		"    1      1 mmv                              132       0.50       1.00     0.50     3.00     3.00",
		"    2      3 mmv                              132       3.00       4.00     1.00     1.00    -1.00",
		"    3      2 norm                               1       4.50       5.00     0.50     0.00    -1.00",
		"mmv                               2       4.00     2.00  80.0%        0.75      3.00",
		"norm                              2       1.00     0.50  20.0%        0.30      1.00",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("report lacks %q:\n%s", s, out)
		}
	}
	if strings.Index(out, "mmv                               2") > strings.Index(out, "norm                              2") {
		t.Errorf("summary not largest first:\n%s", out)
	}
}

// TestTimelineMatchIDs: records with grid ids go to the launches in id order, whatever
// order their waits ended in and though two kernels of a module share a grid; a
// kernel's second wait is dropped; a set that does not fall one for one (a record lost)
// goes back to the module-order match.
func TestTimelineMatchIDs(t *testing.T) {
	// launches: a (module 0, 8 blocks), b (0, 8), c (1, 4), d (-1), e (0, 16)
	mi := []int{0, 0, 1, -1, 0}
	grid := []int{8, 8, 4, 1, 16}
	recs := [][]tlRec{
		// b ended its wait before a; e waited twice (its second wait: 60)
		{{5, 50, 16, 104}, {2, 30, 8, 102}, {6, 60, 16, 104}, {1, 20, 8, 100}},
		{{3, 40, 4, 103}},
	}
	got, how := tlMatch(mi, grid, make([]string, len(mi)), recs)
	if how != "matched by grid ids" {
		t.Errorf("match: %s", how)
	}
	want := []uint64{20, 30, 40, 0, 50}
	for i, r := range got {
		if r.release != want[i] {
			t.Errorf("launch %d: release %d, want %d", i, r.release, want[i])
		}
	}
	// b's record lost: a takes 100, b (module order, next with its grid: none left
	// with 8 blocks) the next one, e none.
	recs = [][]tlRec{{{5, 50, 16, 104}, {1, 20, 8, 100}}, {{3, 40, 4, 103}}}
	got, how = tlMatch(mi, grid, make([]string, len(mi)), recs)
	if !strings.HasPrefix(how, "matched by module order (launch 1 : module 0, 8 blocks; record 1: module 1, 4 blocks)") {
		t.Errorf("lost record, match: %s", how)
	}
	want = []uint64{20, 50, 40, 0, 0}
	for i, r := range got {
		if r.release != want[i] {
			t.Errorf("lost record, launch %d: release %d, want %d", i, r.release, want[i])
		}
	}
}
