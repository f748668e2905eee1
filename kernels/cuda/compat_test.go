package cuda

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCompatMatchesSources is TestPTXMatchesSources for the compatibility PTX: each
// module's sm80/*.ptx.gz was made from the sources as they are (build/gen-ptx-compat.sh)
// for sm_80, and holds no instruction that needs Hopper (nvcc passes inline assembly
// through unchecked; only the driver's compiler would refuse it, on the user's GPU).
func TestCompatMatchesSources(t *testing.T) {
	t.Setenv(DirEnv, "")
	headers := readHeaders(t)
	for _, m := range CompatModules {
		cu, err := os.ReadFile(m + ".cu")
		if err != nil {
			t.Fatal(err)
		}
		p, err := CompatPTX(m)
		if err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(bytes.NewReader(p)).ReadString('\n')
		if !strings.HasPrefix(line, HashPrefix) {
			t.Errorf("sm80/%s.ptx.gz: first line %q has no %q", m, strings.TrimSpace(line), HashPrefix)
			continue
		}
		if got, want := strings.TrimSpace(strings.TrimPrefix(line, HashPrefix)), SourceHash(cu, headers...); got != want {
			t.Errorf("sm80/%s.ptx.gz was generated from other sources (hash %s, sources %s): run build/gen-ptx-compat.sh", m, got, want)
		}
		if !bytes.Contains(p, []byte("\n.target sm_80")) {
			t.Errorf("sm80/%s.ptx.gz does not target sm_80", m)
		}
		for _, op := range []string{"griddepcontrol", "cluster", "cp.async.bulk", "mbarrier", "wgmma", "elect.sync", "setmaxnreg"} {
			if bytes.Contains(p, []byte(op)) {
				t.Errorf("sm80/%s.ptx.gz holds %s, which needs Hopper", m, op)
			}
		}
		if p[len(p)-1] != 0 {
			t.Errorf("CompatPTX(%q) is not NUL-terminated", m)
		}
	}
}

// TestCompatModules: every module is in the compatibility set or named Hopper-only, not
// both, and the set's files are exactly its modules.
func TestCompatModules(t *testing.T) {
	for _, m := range HopperOnly {
		if !slices.Contains(Modules, m) {
			t.Errorf("sm80/hopper-only.txt names %q, which is no module", m)
		}
	}
	if len(CompatModules)+len(HopperOnly) != len(Modules) {
		t.Errorf("%d compatibility modules and %d Hopper-only ones, of %d", len(CompatModules), len(HopperOnly), len(Modules))
	}
	files, err := fs.Glob(compat, CompatDir+"/*.ptx.gz")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, strings.TrimSuffix(filepath.Base(f), ".ptx.gz"))
	}
	if !slices.Equal(got, CompatModules) {
		t.Errorf("sm80 holds %v, want the modules less the Hopper-only ones: %v", got, CompatModules)
	}
}

// TestCompatPTXDir: $EMBER_CUDA_PTX_DIR/sm80 overrides the embedded compatibility PTX,
// and a module missing there is an error that names it.
func TestCompatPTXDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, CompatDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CompatDir, "ops.ptx"), []byte("// test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(DirEnv, dir)
	if b, err := CompatPTX("ops"); err != nil || string(b) != "// test\n\x00" {
		t.Errorf("CompatPTX(ops) from the directory = %q, %v", b, err)
	}
	if _, err := CompatPTX("quant"); err == nil || !strings.Contains(err.Error(), `"quant"`) {
		t.Errorf("CompatPTX(quant), missing from the directory: %v, want an error naming it", err)
	}
}

// hopperKernels matches the kernels EM_SM90 leaves out of modules that the
// compatibility PTX otherwise holds: the cluster forms of one decode row's attention
// and of a row's argmax, and the latent rows' bulk-copy kernels (CUDA backend: compatOff).
var hopperKernels = regexp.MustCompile(`^(attention_dec(64|128)_1c(_128|_64)?(_q8)?|attention_short576w?|attention_vb576|argmax_f32_c)$`)

// ptxEntries lists the kernels a PTX text defines.
func ptxEntries(p []byte) map[string]bool {
	es := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\.visible \.entry ([A-Za-z0-9_]+)\(`).FindAllSubmatch(p, -1) {
		es[string(m[1])] = true
	}
	return es
}

// TestCompatEntries: a compatibility module defines every kernel of its sm_90 module but
// the Hopper-only ones, and no other: a kernel lost to a misplaced EM_SM90 would
// otherwise show only on an RTX card, as "kernel in no module".
func TestCompatEntries(t *testing.T) {
	t.Setenv(DirEnv, "")
	for _, m := range CompatModules {
		p90, err := PTX(m)
		if err != nil {
			t.Fatal(err)
		}
		p80, err := CompatPTX(m)
		if err != nil {
			t.Fatal(err)
		}
		e90, e80 := ptxEntries(p90), ptxEntries(p80)
		if len(e90) == 0 {
			t.Errorf("%s.ptx: no kernels found", m)
		}
		for k := range e90 {
			if !e80[k] && !hopperKernels.MatchString(k) {
				t.Errorf("sm80/%s.ptx.gz lacks %s", m, k)
			}
			if e80[k] && hopperKernels.MatchString(k) {
				t.Errorf("sm80/%s.ptx.gz holds %s, which needs Hopper", m, k)
			}
		}
		for k := range e80 {
			if !e90[k] {
				t.Errorf("sm80/%s.ptx.gz defines %s, which %s.ptx does not", m, k, m)
			}
		}
	}
}
