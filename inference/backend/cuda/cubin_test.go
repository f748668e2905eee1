package cuda

import (
	"testing"

	kcuda "ember/kernels/cuda"
)

// TestCubinSet: the machine code goes to the GPUs it was made for (9.0 for the Hopper
// set, any 8.x for the compatibility set), never elsewhere (a 9.0 GPU held to the
// compatibility PTX, a later GPU on either set), and $EMBER_CUDA_CUBIN=0 turns it off.
func TestCubinSet(t *testing.T) {
	h100 := Device{Name: "H100", Major: 9, SmemOptin: 232448}
	for _, c := range []struct {
		d      Device
		compat bool
		env    string
		want   string
	}{
		{h100, false, "", kcuda.HopperCubins},
		{h100, false, "1", kcuda.HopperCubins},
		{h100, false, "0", ""},
		{h100, true, "", ""}, // EMBER_CUDA_COMPAT=1 on a Hopper GPU: sm_80 code does not run there
		{Device{Name: "A100", Major: 8, SmemOptin: 166912}, true, "", kcuda.CompatCubins},
		{Device{Name: "RTX 4090", Major: 8, Minor: 9, SmemOptin: 101376}, true, "", kcuda.CompatCubins},
		{Device{Name: "RTX 3090", Major: 8, Minor: 6, SmemOptin: 101376}, true, "0", ""},
		{Device{Name: "RTX 5090", Major: 12, SmemOptin: 101376}, true, "", ""},
		{Device{Name: "B200", Major: 10, SmemOptin: 232448}, false, "", ""},
		{Device{Name: "H20", Major: 9, Minor: 1, SmemOptin: 232448}, false, "", ""},
	} {
		got, err := cubinSet(c.d, c.compat, c.env)
		if err != nil || got != c.want {
			t.Errorf("%s (compat %v, $%s=%q): %q, %v; want %q", c.d.Name, c.compat, CubinEnv, c.env, got, err, c.want)
		}
	}
	if _, err := cubinSet(h100, false, "yes"); err == nil {
		t.Errorf("$%s=yes accepted", CubinEnv)
	}
}

// TestKernelCode: what the load line says the kernels were loaded as.
func TestKernelCode(t *testing.T) {
	mods := make([]*module, 3)
	for _, c := range []struct {
		compat bool
		cubins int
		want   string
	}{{false, 3, "sm_90 code"}, {true, 3, "sm_80 code"}, {false, 0, "PTX"}, {false, 2, "2 of 3 modules as sm_90 code"}} {
		b := &Backend{modules: mods, compat: c.compat, cubins: c.cubins}
		if got := b.KernelCode(); got != c.want {
			t.Errorf("compat %v, %d cubins: %q, want %q", c.compat, c.cubins, got, c.want)
		}
	}
}
