package cuda

import (
	"bytes"
	"regexp"
)

// Programmatic dependent launch. In a recorded graph each kernel depends on the one
// before it. Kernels whose first statement is pdl_entry() (kernels/cuda/common.cuh) wait
// for that kernel themselves (griddepcontrol.wait: until it has completed and its writes
// are visible), so their edge can be programmatic: the driver launches them while the
// kernel before still runs its last blocks, which hides most of the few microseconds
// between small kernels of a decode step. Nothing of such a kernel runs before the wait,
// so the results are those of plain serialization. Kernels without the wait keep full
// edges. $EMBER_CUDA_NO_PDL turns it off.

var ptxEntry = regexp.MustCompile(`(?m)^\.visible \.entry ([A-Za-z_][A-Za-z0-9_]*)\(`)

// pdlKernels returns the kernels of a PTX module whose body waits on the grid
// dependency (griddepcontrol.wait) before anything else can matter: the body holds the
// instruction. The sources put it first (pdl_entry); kernels/cuda's tests check that.
func pdlKernels(ptx []byte) map[string]bool {
	locs := ptxEntry.FindAllSubmatchIndex(ptx, -1)
	out := map[string]bool{}
	for i, l := range locs {
		end := len(ptx)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if bytes.Contains(ptx[l[1]:end], []byte("griddepcontrol.wait")) {
			out[string(ptx[l[2]:l[3]])] = true
		}
	}
	return out
}
