package cuda

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// CarveoutEnv names an environment variable: a percentage (0 to 100) of each SM's
// unified L1 cache and shared memory that the kernels CarveoutKernelsEnv names prefer as
// shared memory (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT), set when the kernel
// is first looked up; "off" (or a negative number) leaves the choice to the driver, per
// kernel. Unset: defaultCarveout.
//
// What build/micro/carve.cu found on the H200 (session 26), counting resident 8 KiB
// blocks: carveouts 30-38 give 96 KiB of shared memory, 40-52 128 KiB, 54-64 160,
// 66-76 192 and 78-100 224 (of 256 KiB with L1); under the driver's choice a block of 7
// KiB or more gets 224 KiB, so such a kernel streams through 32 KiB of L1. Alternating kernels of
// different shared memory cost nothing under the driver's choice (1.32-1.40 us a 1 MB
// kernel), but 0.5-1.1 us more when a fixed carveout makes them change configuration.
// build/micro/pre.cu (session 25): an 8-block kernel of 100 KiB of shared memory that
// loads a tile cost 13.6 us a layer more than one that loads none in a chain of
// streaming products under the driver's choice, 1.0 us with both kernels at 50. A
// carveout too large for a kernel's L1 (100: 28 KiB left) slows the streaming products;
// one too small limits the blocks an SM.
const CarveoutEnv = "EMBER_CUDA_CARVEOUT"

// defaultCarveout is 66 per cent (192 KiB of shared memory, 64 KiB of L1) for the
// kernels of defaultCarved (Q8_0's mat-vecs). In session 26 on the H200, all kernels at
// 44 against the driver's choice (two rounds, same calls): Llama-3.1-8B Q8_0 tg128 392.9 /
// 389.7 against 376.2 / 381.7; Q4_K_M 464.7 / 462.9 against 464.5 / 462.4;
// DeepSeek-V2-Lite tg128 496.5 / 507.6 against 503.4 / 500.2 and at 64 streams 6,710 /
// 6,580 against 6,705 / 6,683 (its big-tile kernels keep the driver's: raiseSmem); but 8B
// at 64 streams 8,264 / 8,175 against 8,431 / 8,352 and pp512 34,025 against 35,617.
// With the batch-1 products (mmv) exempt, Q8_0 lost its gain (378.6), with the norms or
// the RoPE and SwiGLU kernels exempt it kept it (392.3, 391.9): the gain is the
// mat-vecs', so only they take the carveout, and of them only Q8_0's (defaultCarved).
// Then Q8_0 at 66 against 44, three same-call pairs: 392.0 / 385.2, 392.6 / 389.8, 392.5
// / 389.6. The likely reason: L1 for the weights in flight (the driver's choice leaves
// 32 KiB).
const defaultCarveout = 66

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

// CarveoutKernelsEnv names an environment variable: comma-separated kernel name
// prefixes that take CarveoutEnv's carveout ("all": every kernel), in place of
// defaultCarved; the others keep the driver's.
const CarveoutKernelsEnv = "EMBER_CUDA_CARVEOUT_KERNELS"

// defaultCarved names Q8_0's batch-1 mat-vecs (DeepSeek-V2-Lite's Q8_0 experts, mmv_id_q8_0,
// at 66 too: 487.0 / 490.3 against 486.7 / 495.1). With every mat-vec (mmv) at 44, Q8_0
// gained as before (389.3 / 382.9 against 380.7 / 381.9 off, same call) but Q4_K_M did
// not (459.9 / 458.2 against 460.3 / 463.8) and DeepSeek-V2-Lite tg128 read 495.3 /
// 495.8 against 509.1 / 500.2; the percentage swept for the mat-vecs: Q8_0 386.9 at 30,
// 385.2 at 44, 390.1 at 54, 392.0 at 66, 371.7 at 78; Q4_K_M 466.7, 464.1, 459.7,
// 462.1, 441.1 (session 26, one call).
var defaultCarved = []string{"mmv_q8_0", "mmv_multi_q8_0"}

// carveoutKernelsFromEnv is $EMBER_CUDA_CARVEOUT_KERNELS's prefixes, nil for every
// kernel, or defaultCarved when unset.
func carveoutKernelsFromEnv() []string {
	switch v := os.Getenv(CarveoutKernelsEnv); v {
	case "":
		return defaultCarved
	case "all":
		return nil
	default:
		return strings.Split(v, ",")
	}
}

// carveoutFor is the carveout kernel name is given, -1 for the driver's choice.
func (b *Backend) carveoutFor(name string) int {
	if b.carved == nil {
		return b.carve
	}
	for _, p := range b.carved {
		if p != "" && strings.HasPrefix(name, p) {
			return b.carve
		}
	}
	return -1
}

// raiseSmem raises k's dynamic shared memory limit to n bytes; with a carveout set, it
// also gives k's carveout back to the driver: a kernel of that much shared memory a
// block sizes its launches for its own blocks an SM (decBlocks, mmq's tiles), which a
// preferred carveout could cut.
func (b *Backend) raiseSmem(k *kernel, n int) error {
	if b.smemLim > 0 && n > b.smemLim {
		return fmt.Errorf("cuda: %s wants %d bytes of shared memory a block, more than the GPU's %d", k.name, n, b.smemLim)
	}
	if err := b.h.maxDynamicSmem(k, n); err != nil {
		return err
	}
	if b.carveoutFor(k.name) >= 0 {
		return b.h.carveout(k, -1)
	}
	return nil
}
