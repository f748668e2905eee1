package cuda

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// TestCubinsMatchPTX fails when a module's PTX changed after its machine code was made:
// every module of both sets has a cubin, recorded as made from its PTX's body as
// committed (build/gen-cubin.sh sm90 on a GPU machine, sm80 with build/local-nvcc.sh's
// ptxas), and each is a CUDA ELF for the set's GPUs.
func TestCubinsMatchPTX(t *testing.T) {
	t.Setenv(DirEnv, "")
	for _, c := range []struct {
		set     string
		modules []string
		ptx     func(string) ([]byte, error)
		sm      uint32
		how     string
	}{
		{HopperCubins, Modules, PTX, 90, "build/gen-cubin.sh sm90 on a GPU machine"},
		{CompatCubins, CompatModules, CompatPTX, 80, "build/gen-cubin.sh sm80 (build/local-nvcc.sh's ptxas)"},
	} {
		sums, err := CubinSums(c.set)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range c.modules {
			p, err := c.ptx(m)
			if err != nil {
				t.Fatal(err)
			}
			if sums[m] != PTXBodySum(p) {
				t.Errorf("%s/%s.cubin.gz was made from another PTX (recorded %q, PTX %s): run %s", c.set, m, sums[m], PTXBodySum(p), c.how)
				continue
			}
			b, ok, err := Cubin(c.set, m, p)
			if err != nil || !ok {
				t.Errorf("Cubin(%s, %s) = %v, %v", c.set, m, ok, err)
				continue
			}
			if sm, err := cubinSM(b); err != nil || sm != c.sm {
				t.Errorf("%s/%s.cubin.gz: sm %d, %v; want an ELF for sm_%d", c.set, m, sm, err, c.sm)
			}
			delete(sums, m)
		}
		for m := range sums {
			t.Errorf("%s/cubins.txt names %q, which is not a module of the set", c.set, m)
		}
		files, err := fs.Glob(cubins, c.set+"/*.cubin.gz")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if m := strings.TrimSuffix(strings.TrimPrefix(f, c.set+"/"), ".cubin.gz"); !slices.Contains(c.modules, m) {
				t.Errorf("%s is not a module of the set", f)
			}
		}
	}
}

// TestCubinRefusesOtherPTX: a cubin is handed out only for the PTX body it was made
// from, whatever its first line (the sources' hash, which build/ptx-rehash.sh rewrites),
// and never while $EMBER_CUDA_PTX_DIR overrides the PTX.
func TestCubinRefusesOtherPTX(t *testing.T) {
	t.Setenv(DirEnv, "")
	p, err := PTX("ops")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := Cubin(HopperCubins, "ops", p); !ok || err != nil {
		t.Fatalf("the committed PTX: %v, %v", ok, err)
	}
	i := bytes.IndexByte(p, '\n')
	rehashed := append([]byte(HashPrefix+strings.Repeat("0", 64)), p[i:]...)
	if _, ok, _ := Cubin(HopperCubins, "ops", rehashed); !ok {
		t.Error("refused after a new first line")
	}
	edited := bytes.Replace(p, []byte("\n.target"), []byte("\n// edited\n.target"), 1)
	if _, ok, _ := Cubin(HopperCubins, "ops", edited); ok {
		t.Error("handed out for an edited PTX body")
	}
	if _, ok, _ := Cubin(HopperCubins, "nosuchmodule", p); ok {
		t.Error("handed out for a module it does not have")
	}
	if _, ok, _ := Cubin(CompatCubins, "ops", p); ok {
		t.Error("the compatibility set's cubin handed out for the Hopper PTX")
	}
	t.Setenv(DirEnv, t.TempDir())
	if _, ok, _ := Cubin(HopperCubins, "ops", p); ok {
		t.Errorf("handed out while $%s is set", DirEnv)
	}
}

// cubinSM reads the SM version from a CUDA ELF's header: EM_CUDA (190) in e_machine and
// the SM in e_flags, its low byte in the format of CUDA 12's ptxas (ABI version 7), its
// second byte in CUDA 13's (ABI version 8; sm_90a's reads 90 too), as their output shows.
func cubinSM(b []byte) (uint32, error) {
	if len(b) < 52 || !bytes.HasPrefix(b, []byte("\x7fELF")) {
		return 0, fmt.Errorf("not an ELF file")
	}
	if b[4] != 2 || b[5] != 1 {
		return 0, fmt.Errorf("not a 64-bit little-endian ELF")
	}
	if m := binary.LittleEndian.Uint16(b[18:]); m != 190 {
		return 0, fmt.Errorf("e_machine %d, not EM_CUDA", m)
	}
	f := binary.LittleEndian.Uint32(b[48:])
	if b[8] >= 8 {
		f >>= 8
	}
	return f & 0xff, nil
}
