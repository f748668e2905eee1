// Package cpu holds Ember's CPU kernels: C with SIMD paths (AVX2+FMA+F16C, AVX-512 with
// VNNI, NEON) and scalar C fallbacks, called through cgo. The path is chosen once at
// start from the CPU's features (github.com/klauspost/cpuid/v2) and can be forced with
// EMBER_CPU_ISA so tests cover every path the machine can run. On the AVX-512 paths,
// BF16 weights use AVX512_BF16 where the CPU has it (Kernels.BF16; WithoutBF16 for the
// path's own code), and on the AVX2 path the quantized types' batch products use AVX-VNNI
// where the CPU has it (Kernels.VNNI256; EMBER_CPU_ISA=avx2 runs without it).
//
// The kernels never allocate and never keep a pointer; the Go wrappers check every
// length before calling C, so a wrong size panics in Go instead of corrupting memory.
package cpu

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// ISA is an instruction-set path of the kernels.
type ISA int

// The paths, in the order of preference on their architecture.
const (
	Scalar     ISA = 0
	AVX2       ISA = 1 // AVX2 + FMA + F16C
	AVX512     ISA = 2 // AVX-512 F, BW, VL
	AVX512VNNI ISA = 3 // AVX512 + VNNI
	NEON       ISA = 4
)

var isaNames = map[ISA]string{Scalar: "scalar", AVX2: "avx2", AVX512: "avx512", AVX512VNNI: "avx512vnni", NEON: "neon"}

func (i ISA) String() string {
	if s, ok := isaNames[i]; ok {
		return s
	}
	return fmt.Sprintf("isa(%d)", int(i))
}

// EnvISA is the environment variable that forces a path (e.g. EMBER_CPU_ISA=scalar).
const EnvISA = "EMBER_CPU_ISA"

// Supported lists the paths this machine can run, best last.
func Supported() []ISA {
	out := []ISA{Scalar}
	switch runtime.GOARCH {
	case "amd64":
		c := cpuid.CPU
		if c.Supports(cpuid.AVX2, cpuid.FMA3, cpuid.F16C) {
			out = append(out, AVX2)
			if c.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL) {
				out = append(out, AVX512)
				if c.Supports(cpuid.AVX512VNNI) {
					out = append(out, AVX512VNNI)
				}
			}
		}
	case "arm64":
		out = append(out, NEON)
	}
	return out
}

// Detect returns the best path for this machine.
func Detect() ISA {
	s := Supported()
	return s[len(s)-1]
}

// Select returns the kernels of the path named by EMBER_CPU_ISA (Parse), or of the best
// path with every extension the CPU has when it is unset. A forced path the machine
// cannot run is an error.
func Select() (Kernels, error) {
	name := strings.ToLower(strings.TrimSpace(os.Getenv(EnvISA)))
	if name == "" {
		return New(Detect()), nil
	}
	return Parse(name)
}

// VNNI256Name names the AVX2 path with AVX-VNNI's batch products (Kernels.Name's form).
const VNNI256Name = "avx2+avxvnni"

// Parse returns the kernels of the named path if this machine can run it: an ISA's name,
// or VNNI256Name. "avx2" is the AVX2 path without AVX-VNNI, as on a CPU that lacks it
// (Haswell to Zen 3); the AVX-512 paths keep AVX512_BF16 where the CPU has it.
func Parse(name string) (Kernels, error) {
	if name == VNNI256Name {
		if k := New(AVX2); slices.Contains(Supported(), AVX2) && k.VNNI256() {
			return k, nil
		}
	}
	for _, i := range Supported() {
		if i.String() == name {
			return New(i).WithoutVNNI256(), nil
		}
	}
	return Kernels{}, fmt.Errorf("cpu: instruction set %q is not available here (have %s)", name, strings.Join(Names(), ", "))
}

// Names lists every name Parse takes on this machine, best last but for VNNI256Name,
// which follows "avx2" (for tests that run every path).
func Names() []string {
	var names []string
	for _, i := range Supported() {
		names = append(names, i.String())
		if i == AVX2 && New(i).VNNI256() {
			names = append(names, VNNI256Name)
		}
	}
	return names
}
