package cpu_test

import (
	"strings"
	"testing"

	"ember/kernels/cpu"
)

// TestParseNames checks that every name Names lists parses to kernels of that name
// (EMBER_CPU_ISA takes them), that "avx2" is the AVX2 path without AVX-VNNI, and that a
// name this machine cannot run is an error that lists the ones it can.
func TestParseNames(t *testing.T) {
	names := cpu.Names()
	if len(names) == 0 || names[0] != "scalar" {
		t.Fatalf("Names() = %v, want the scalar path first", names)
	}
	for _, n := range names {
		k, err := cpu.Parse(n)
		if err != nil {
			t.Fatalf("Parse(%q): %v", n, err)
		}
		if got := strings.TrimSuffix(k.Name(), "+bf16"); got != n {
			t.Errorf("Parse(%q).Name() = %q", n, k.Name())
		}
		if n == "avx2" && k.VNNI256() {
			t.Errorf(`Parse("avx2") uses AVX-VNNI; a forced avx2 must run without it`)
		}
	}
	for _, bad := range []string{"avx1024", "AVX2", ""} {
		if _, err := cpu.Parse(bad); err == nil || !strings.Contains(err.Error(), names[len(names)-1]) {
			t.Errorf("Parse(%q) = %v, want an error naming the paths here", bad, err)
		}
	}
	if k := cpu.New(cpu.AVX2); !k.VNNI256() {
		if _, err := cpu.Parse(cpu.VNNI256Name); err == nil {
			t.Errorf("Parse(%q) on a CPU without AVX-VNNI: no error", cpu.VNNI256Name)
		}
	}
}
