package cpu_test

import (
	"slices"

	"ember/kernels/cpu"
)

// supportedAmong lists the paths of want this machine supports, in cpu.Supported's order.
func supportedAmong(want ...cpu.ISA) []cpu.ISA {
	var out []cpu.ISA
	for _, isa := range cpu.Supported() {
		if slices.Contains(want, isa) {
			out = append(out, isa)
		}
	}
	return out
}
