package cuda

import (
	"os"
	"strconv"
)

// CarveoutEnv names an environment variable: a percentage (0 to 100) of each SM's
// unified L1 cache and shared memory that every kernel prefers as shared memory
// (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), set when the kernel is first
// looked up. Unset or out of range, the driver chooses per kernel.
//
// Why it matters: an SM runs blocks of one carveout at a time, so a kernel whose blocks
// want another carveout than the kernel before it waits for whole SMs to drain, where
// programmatic dependent launch would otherwise have its blocks resident early.
// build/micro/pre.cu measures it (NOTES.md, session 25).
const CarveoutEnv = "EMBER_CUDA_CARVEOUT"

// carveoutFromEnv is $EMBER_CUDA_CARVEOUT, or -1 for the driver's choice.
func carveoutFromEnv() int {
	n, err := strconv.Atoi(os.Getenv(CarveoutEnv))
	if err != nil || n < 0 || n > 100 {
		return -1
	}
	return n
}
