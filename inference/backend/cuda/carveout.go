package cuda

import (
	"os"
	"strconv"
	"strings"
)

// CarveoutEnv names an environment variable: a percentage (0 to 100) of each SM's
// unified L1 cache and shared memory that every kernel prefers as shared memory
// (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), set when the kernel is first
// looked up; "off" (or a negative number) leaves the choice to the driver, per kernel.
// Unset: defaultCarveout.
//
// Why it matters: an SM runs blocks of one carveout at a time, so a kernel whose blocks
// want another carveout than the kernel before it waits for whole SMs to drain, where
// programmatic dependent launch would otherwise have its blocks resident early.
// build/micro/pre.cu measured it on the H200: a chain of streaming products with an
// 8-block kernel of 100 KiB of shared memory after every fourth ran 13.6 us a layer
// slower than without that kernel's tile loads under the driver's choice, 1.0 us
// slower with both kernels at 50. A carveout too large for a kernel's L1 (100: 28 KiB
// left) slows the streaming products; too small limits the blocks an SM.
const CarveoutEnv = "EMBER_CUDA_CARVEOUT"

// defaultCarveout puts a decode step's kernels in one shared memory configuration:
// Llama-3.1-8B Q8_0 tg128 on the H200 392.6 / 387.0 / 394.0 / 390.7 against 378.2 /
// 383.4 / 384.9 / 383.4 under the driver's choice (NOTES.md, session 25), Q4_K_M and
// DeepSeek-V2-Lite unchanged.
const defaultCarveout = 44

// carveoutFromEnv is $EMBER_CUDA_CARVEOUT, defaultCarveout when unset, or -1 for the
// driver's choice.
func carveoutFromEnv() int {
	v := os.Getenv(CarveoutEnv)
	if v == "" {
		return defaultCarveout
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 100 {
		return -1
	}
	return n
}

// CarveoutExemptEnv names an environment variable: comma-separated kernel name prefixes
// left at the driver's carveout whatever CarveoutEnv says ("none": no kernel), in place
// of defaultCarveoutExempt.
const CarveoutExemptEnv = "EMBER_CUDA_CARVEOUT_EXEMPT"

// defaultCarveoutExempt: the decode attention sizes its shared memory for as many
// blocks an SM as its grid needs (decBlocks: four at 64 sequences, ~55 KiB each), which
// a smaller carveout would cut: 8B at 64 streams ran 8,091 / 8,068 / 8,205 tok/s with it
// at 44 against 8,349 / 8,504 / 8,446 under the driver's choice (session 25).
var defaultCarveoutExempt = []string{"attention_dec"}

// carveoutExemptFromEnv is $EMBER_CUDA_CARVEOUT_EXEMPT's prefixes, or
// defaultCarveoutExempt when unset.
func carveoutExemptFromEnv() []string {
	v := os.Getenv(CarveoutExemptEnv)
	switch v {
	case "":
		return defaultCarveoutExempt
	case "none":
		return nil
	}
	return strings.Split(v, ",")
}

// carveoutFor is the carveout kernel name is given, -1 for the driver's choice.
func (b *Backend) carveoutFor(name string) int {
	for _, p := range b.carveExempt {
		if p != "" && strings.HasPrefix(name, p) {
			return -1
		}
	}
	return b.carve
}
