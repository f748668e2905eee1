package cuda

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestPTXMatchesSources fails when a .cu file (or common.cuh) changed after its PTX was
// generated: run build/gen-ptx.sh on a machine with nvcc and commit the new .ptx files.
func TestPTXMatchesSources(t *testing.T) {
	common, err := os.ReadFile("common.cuh")
	if err != nil {
		t.Fatal(err)
	}
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
		if want := SourceHash(cu, common); got != want {
			t.Errorf("%s.ptx was generated from other sources (hash %s, sources %s): run build/gen-ptx.sh on a GPU machine", m, got, want)
		}
		if !bytes.Contains(p, []byte(".target sm_90")) {
			t.Errorf("%s.ptx does not target sm_90", m)
		}
	}
}
