package cuda

import (
	"fmt"

	kcuda "ember/kernels/cuda"
)

// CubinEnv names an environment variable: "0" loads every module from its PTX, which the
// driver compiles (or finds in its cache, ~/.nv/ComputeCache), instead of from the machine
// code made for the GPU; "1" or unset, the machine code where there is some.
const CubinEnv = "EMBER_CUDA_CUBIN"

// cubinSet is the set of machine code (kernels/cuda's cubins) that device d runs for the
// kernels in use (compat: the compatibility set), "" where none was made for it: the
// Hopper set's for compute capability 9.0, the compatibility set's for 8.x (8.0's code
// runs on 8.6 and 8.9 as well). env is $EMBER_CUDA_CUBIN.
func cubinSet(d Device, compat bool, env string) (string, error) {
	switch {
	case env != "" && env != "0" && env != "1":
		return "", fmt.Errorf("cuda: $%s=%q: want 0 (compile the PTX) or 1", CubinEnv, env)
	case env == "0":
		return "", nil
	case compat && d.Major == 8:
		return kcuda.CompatCubins, nil
	case !compat && d.Major == 9 && d.Minor == 0:
		return kcuda.HopperCubins, nil
	}
	return "", nil
}

// loadModules loads the named modules (their PTX from ptxOf) into b.modules: from the
// machine code made for this GPU from that same PTX where there is some, else from the
// PTX, which the driver compiles (on a first start that took 44-48 s for the Hopper set
// on an H100's host; the cubins load in under half a second). Where the driver refuses
// the machine code (a driver older than the ptxas that made it), the PTX is loaded
// instead. mmg's sm_90a code that does not load is left out (only Hopper runs it).
func (b *Backend) loadModules(h *ctxHandle, names []string, ptxOf func(string) ([]byte, error), env string) error {
	set, err := cubinSet(b.dev, b.compat, env)
	if err != nil {
		return err
	}
	for _, name := range names {
		ptx, err := ptxOf(name)
		if err != nil {
			return err
		}
		var m *module
		if set != "" {
			code, ok, err := kcuda.Cubin(set, name, ptx)
			if err != nil {
				return err
			}
			if ok {
				if m, err = h.loadImage(name, code, ptx); err == nil {
					b.cubins++
				}
			}
		}
		if m == nil { // no machine code for it, or the driver refused it
			m, err = h.loadModule(name, ptx)
		}
		if err != nil && name == mgModule {
			continue // sm_90a code: only Hopper runs it (mmg.go)
		}
		if err != nil {
			return err
		}
		b.modules = append(b.modules, m)
		b.mg.loaded = b.mg.loaded || name == mgModule
	}
	return nil
}

// KernelCode says what b's kernels were loaded as: "sm_90 code" or "sm_80 code" when
// every module came as machine code made for the GPU, "PTX" when the driver compiled
// (or found in its cache) every module, else how many modules came as machine code.
func (b *Backend) KernelCode() string {
	code := "sm_90 code"
	if b.compat {
		code = "sm_80 code"
	}
	switch b.cubins {
	case 0:
		return "PTX"
	case len(b.modules):
		return code
	}
	return fmt.Sprintf("%d of %d modules as %s", b.cubins, len(b.modules), code)
}
