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
// Why it may matter (the likely mechanism): an SM runs blocks of one carveout at a
// time, so a kernel whose blocks want another carveout than the kernel before it waits
// for whole SMs to drain, where programmatic dependent launch would otherwise have its
// blocks resident early. build/micro/pre.cu measured it on the H200: in a chain of
// streaming products, an 8-block kernel of 100 KiB of shared memory that loads a tile
// cost 13.6 us a layer more than one that loads none under the driver's choice, 1.0 us
// with both kernels at 50. A carveout too large for a kernel's L1 (100: 28 KiB left)
// slows the streaming products; one too small limits the blocks an SM.
const CarveoutEnv = "EMBER_CUDA_CARVEOUT"

// defaultCarveout leaves the carveout to the driver. At 44 (EMBER_CUDA_CARVEOUT=44),
// Llama-3.1-8B Q8_0 tg128 on the H200 ran 392.4 / 392.7 against 382.4 / 379.9 under
// the driver's choice, Q4_K_M, 8B pp512, 8B at 64 streams and DeepSeek-V2-Lite tg128
// unchanged, but DeepSeek-V2-Lite at 64 streams 5,770 against 6,817 with its big-tile
// kernels (mmq_id, attention_mla) at 44 too (NOTES.md, session 25). Those kernels now
// keep the driver's carveout (raiseSmem), which was not measured before the device
// time ran out: until it is, the default stays the driver's.
const defaultCarveout = -1

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

// defaultCarveoutExempt is empty: the kernels whose carveout a preferred one would
// hurt raise their shared memory limit and so keep the driver's (raiseSmem), the
// decode attention among them (its launches at 64 sequences size shared memory for
// four blocks an SM: 8B at 64 streams ran 8,091 / 8,068 / 8,205 tok/s with it at 44
// against 8,349 / 8,504 / 8,446 under the driver's choice, session 25).
var defaultCarveoutExempt []string

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
	for _, p := range b.uncarved {
		if p != "" && strings.HasPrefix(name, p) {
			return -1
		}
	}
	return b.carve
}

// raiseSmem raises k's dynamic shared memory limit to n bytes; with a carveout set, it
// also gives k's carveout back to the driver: a kernel of that much shared memory a
// block sizes its launches for its own blocks an SM (decBlocks, mmq's tiles), which a
// preferred carveout could cut.
func (b *Backend) raiseSmem(k *kernel, n int) error {
	if err := b.h.maxDynamicSmem(k, n); err != nil {
		return err
	}
	if b.carveoutFor(k.name) >= 0 {
		return b.h.carveout(k, -1)
	}
	return nil
}
