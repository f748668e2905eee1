package cuda

import "testing"

// TestLoadCublasLt: where a libcublasLt is installed (no GPU needed), it loads and has
// every symbol the backend calls; where none is, the error says so and the backend runs
// without it.
func TestLoadCublasLt(t *testing.T) {
	l, err := loadLt()
	if err != nil {
		t.Skipf("no cuBLASLt here (the backend runs without it): %v", err)
	}
	t.Logf("loaded %s", l.path)
	if err := l.destroy(nil); err != nil { // no handle: only the struct is freed
		t.Fatal(err)
	}
}
