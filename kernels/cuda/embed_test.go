package cuda

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPTXMatchesSources fails when a .cu file (or a header) changed after its PTX was
// generated: run build/gen-ptx.sh on a machine with nvcc and commit the new .ptx files.
func TestPTXMatchesSources(t *testing.T) {
	headers := readHeaders(t)
	for _, m := range Modules {
		cu, err := os.ReadFile(m + ".cu")
		if err != nil {
			t.Fatal(err)
		}
		p, err := PTX(m)
		if err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(bytes.NewReader(p)).ReadString('\n')
		got := strings.TrimSpace(strings.TrimPrefix(line, HashPrefix))
		if !strings.HasPrefix(line, HashPrefix) {
			t.Errorf("%s.ptx: first line %q has no %q", m, strings.TrimSpace(line), HashPrefix)
			continue
		}
		if want := SourceHash(cu, headers...); got != want {
			t.Errorf("%s.ptx was generated from other sources (hash %s, sources %s): run build/gen-ptx.sh on a GPU machine", m, got, want)
		}
		if !bytes.Contains(p, []byte(".target sm_90")) {
			t.Errorf("%s.ptx does not target sm_90", m)
		}
	}
}

// readHeaders returns the headers' texts in name order, as SourceHash wants them.
func readHeaders(t *testing.T) [][]byte {
	t.Helper()
	names, err := filepath.Glob("*.cuh") // sorted, as the shell's glob
	if err != nil || len(names) == 0 {
		t.Fatalf("no headers: %v", err)
	}
	var headers [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		headers = append(headers, b)
	}
	return headers
}

// TestModulesAreTheSources: every .cu file is a module (its PTX embedded and loaded) and
// every module (an embedded .ptx) has its .cu: a kernel file without its PTX would have
// kernels "in no module" on the GPU only, and a PTX file without its source could not be
// made again.
func TestModulesAreTheSources(t *testing.T) {
	cus, err := filepath.Glob("*.cu")
	if err != nil || len(cus) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	mods := map[string]bool{}
	for _, m := range Modules {
		mods[m] = true
	}
	for _, cu := range cus {
		m := strings.TrimSuffix(cu, ".cu")
		if !mods[m] {
			t.Errorf("%s has no embedded %s.ptx: run build/gen-ptx.sh on a GPU machine", cu, m)
		}
		delete(mods, m)
	}
	for m := range mods {
		t.Errorf("module %q has no %s.cu", m, m)
	}
}
