package cuda

import (
	"fmt"
	"os"
	"strconv"

	"ember/inference/quant"
)

// IDRepEnv names an environment variable: the row blocks each block of a Q4_K mmv_id
// launch takes (mv1_q4_k_rep in kernels/cuda/mv1.cuh); unset or 0: idRep's choice; 1: one
// a block, as before session 26.
const IDRepEnv = "EMBER_CUDA_ID_REP"

// idRepFromEnv is $EMBER_CUDA_ID_REP, 0 (choose) when unset; an error names a bad value.
func idRepFromEnv() (int, error) {
	v := os.Getenv(IDRepEnv)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 64 {
		return 0, fmt.Errorf("cuda: $%s=%q: want 0 to 64", IDRepEnv, v)
	}
	return n, nil
}

// idRep is the row blocks each block of an mmv_id launch of t weights takes, when it
// would need blocks blocks of smem bytes of dynamic shared memory at one row block a
// block: 1 but for Q4_K, whose launches past one wave (the blocks an SM the driver
// reports, times the SMs) take as many as make them one. DeepSeek-V2-Lite's gate and up
// experts at batch 1 (6 x 88 row blocks, twice) took 2.7 waves at three blocks an SM.
func (b *Backend) idRep(t quant.Type, blocks, smem int) int {
	if t != quant.Q4_K {
		return 1
	}
	if b.idRepN > 0 {
		return b.idRepN
	}
	if b.dev.SMs <= 0 || b.h == nil {
		return 1 // no device (the queue tests)
	}
	return repFor(blocks, b.idSlots(smem)*b.dev.SMs)
}

// repFor is the row blocks a block takes so that blocks row blocks fit slots blocks at
// once (1 when they do, or slots is unknown).
func repFor(blocks, slots int) int {
	if slots <= 0 || blocks <= slots {
		return 1
	}
	return (blocks + slots - 1) / slots
}

// idSlots is the blocks of mmv_id_q4_k an SM holds at smem bytes of dynamic shared
// memory a block (0 when the driver cannot say), asked once per size.
func (b *Backend) idSlots(smem int) int {
	if n, ok := b.idOcc[smem]; ok {
		return n
	}
	n, err := b.h.occupancy(b.kernel("mmv_id_q4_k"), 128, smem)
	if err != nil {
		n = 0
	}
	if b.idOcc == nil {
		b.idOcc = map[int]int{}
	}
	b.idOcc[smem] = n
	return n
}

// ceilDiv is a / b rounded up.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
