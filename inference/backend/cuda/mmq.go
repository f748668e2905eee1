package cuda

import (
	"fmt"

	"ember/inference/quant"
)

// The tensor-core product (kernels/cuda/mmq.cuh, its kernels in mmq.cu): tiles of mmqTM weight rows x mmqTN
// activation rows, 256 threads, and a ring of stages of raw blocks in dynamic shared
// memory (mq_stage_bytes there).
const (
	mmqTM, mmqTN, mmqThreads = 128, 64, 256
	// mmqMinRows is the batch from which the products of the types mmqTakes goes to the
	// tensor-core kernel instead of the matrix-vector one.
	mmqMinRows = 16
	// mmqBlocks is the number of blocks below which a product's K steps are split over
	// more blocks (two waves of one block an SM on a 132-SM H200).
	mmqBlocks = 264
	// mmqSmemMax is the dynamic shared memory the kernels may be given (Hopper: 227 KiB).
	mmqSmemMax = 227 << 10
	// mmqStages is the steps a block has in flight (the kernels' ring of stages).
	mmqStages = 3
)

// mmqTakes reports whether the tensor-core kernels take w's type and row length: Q4_K
// and Q6_K rows of whole 256-element steps, Q8_0 rows of whole 128-element halves, and
// Q5_0 and Q4_0 rows (GGUF layout, copied in 8-byte pieces) of whole halves at an
// 8-byte aligned address and stride (so are a view's rows and a stack's matrices).
func (b *Backend) mmqTakes(w *tensor) bool {
	if b.noMMQ {
		return false
	}
	switch w.typ {
	case quant.Q4_K, quant.Q6_K:
		return w.cols%256 == 0
	case quant.Q8_0:
		return w.cols%128 == 0
	case quant.Q5_0, quant.Q4_0:
		return w.cols%128 == 0 && w.ptr%8 == 0 && w.stride%8 == 0
	}
	return false
}

// mmqID launches mmq_id: rows of the pairs grouped by expert (moe_group's map and
// tiles, at most maxTiles of at most tn pairs) times their experts' matrices, nExpert
// of them stacked in w. Pair row map[i] of d is expert e's rows dotted with quantized
// activation row map[i]/xdiv.
func (b *Backend) mmqID(d, w *tensor, nExpert int, xq uint64, xstride int, grp moeGroups, xdiv int) {
	if xq == 0 {
		return
	}
	M := w.rows / nExpert
	b.launch(mmqIDKernel(grp.tn)+suffix[w.typ], (M+mmqTM-1)/mmqTM, grp.maxTiles, mmqThreads,
		mmqStagesFor(w.typ, grp.tn)*mmqStageBytes(w.typ, grp.tn), ptr(w), i64(w.stride), xq, i64(xstride), ptr(d), i64(d.cols), i64(M),
		i64(w.cols), grp.mp, grp.tiles, grp.ntiles, i64(M*w.stride), i64(xdiv))
}

// mmqIDKernel is the name prefix of the grouped product of tiles tn pairs wide.
func mmqIDKernel(tn int) string {
	switch tn {
	case 8:
		return "mmq_id8_"
	case 16:
		return "mmq_id16_"
	case mmqTN:
		return "mmq_id_"
	}
	panic(fmt.Sprintf("cuda: no grouped product of %d-pair tiles", tn))
}

// mmqStageBytes is the shared memory of one stage for weights of type t and tiles of tn
// activation rows: mmqTM rows of the raw weight blocks and tn activation rows (quants
// padded to 272 bytes, and their scales and sums); mq_wld and mq_xex in mmq.cuh.
func mmqStageBytes(t quant.Type, tn int) int {
	w, x := 144, 80 // Q4_K: the block; Q8_K: the 16 bytes holding d and the step's 16 bsums
	switch t {
	case quant.Q6_K:
		w, x = 240, 16
	case quant.Q8_0:
		w, x = 272, 32
	case quant.Q5_0: // 8 blocks of 22 bytes; Q8_0 activations: 8 float scales
		w, x = 176, 32
	case quant.Q4_0: // 8 blocks of 18 bytes
		w, x = 144, 32
	}
	return mmqTM*w + tn*(272+x)
}

// mmqStagesFor is the steps a block of tn-wide tiles of type t has in flight
// (mq_stages in mmq.cuh): mmqStages, but 2 for the narrow tiles of Q6_K and Q8_0, so that
// two blocks share an SM.
func mmqStagesFor(t quant.Type, tn int) int {
	if tn < mmqTN && (t == quant.Q6_K || t == quant.Q8_0) {
		return 2
	}
	return mmqStages
}

// MMQTileEnv names an environment variable that fixes the tile width (16, 32 or 64
// activation rows: mmq16_, mmq32_, mmq_) of the tensor-core products instead of
// mmqTile's choice.
const MMQTileEnv = "EMBER_CUDA_MMQ_TILE"

// mmqTile is the tile width of a product of n activation rows: a 64-row tile costs a
// full tile's work however few rows it holds, so batches of up to 32 rows take narrower
// tiles (which also fit two blocks an SM). On the H200 16 sequences of Llama-3.1-8B
// Q4_K_M decoded 2,503 tok/s in 16-row tiles against 1,604 in 64-row ones; at 64 rows
// 32-row tiles were slower (5,140 against 5,258; the 14336-row products 5-20% slower).
func (b *Backend) mmqTile(n int) int {
	if b.mmqTN != 0 {
		return b.mmqTN
	}
	switch {
	case n <= 16:
		return 16
	case n <= 32:
		return 32
	}
	return mmqTN
}

// mmqDenseKernel is the name prefix of the product of tiles tn rows wide.
func mmqDenseKernel(tn int) string {
	if tn == mmqTN {
		return "mmq_"
	}
	return fmt.Sprintf("mmq%d_", tn)
}

// mmqSplits is how many ways the K steps of a product with mt x nt tiles are divided:
// enough blocks to fill the GPU, at least two steps each.
func mmqSplits(mt, nt, steps int) int {
	tiles := mt * nt
	if tiles >= mmqBlocks || steps < 4 {
		return 1
	}
	s := min((mmqBlocks+tiles-1)/tiles, steps/2)
	per := (steps + s - 1) / s
	return (steps + per - 1) / per // no split left empty
}

// mmq runs the tensor-core product of w with n quantized activation rows when w's type
// and shape have one, and reports whether it did.
func (b *Backend) mmq(d, w *tensor, xq uint64, xstride, n int) bool {
	if n < mmqMinRows || !b.mmqTakes(w) {
		return false
	}
	tn := b.mmqFit(w.typ, b.mmqTile(n))
	if !b.mmqFits(w.typ, tn) {
		return false
	}
	mt, nt := (w.rows+mmqTM-1)/mmqTM, (n+tn-1)/tn
	splits := mmqSplits(mt, nt, (w.cols+255)/256)
	if nt*splits > maxGridY {
		splits = 1
		if nt > maxGridY {
			return false
		}
	}
	part, ok := b.mmqParts(splits, n, w.rows)
	if !ok {
		return true // the allocation failure is recorded
	}
	b.launch(mmqDenseKernel(tn)+suffix[w.typ], mt, nt*splits, mmqThreads, mmqStagesFor(w.typ, tn)*mmqStageBytes(w.typ, tn),
		ptr(w), i64(w.stride), xq, i64(xstride), ptr(d), i64(d.cols), i64(w.rows), i64(w.cols), i64(n), part, i64(nt))
	b.mmqReduce(d, part, w.rows, n, splits)
	return true
}

// mmqParts returns the partial sums' scratch of a product of n rows of m outputs whose
// K steps are divided among splits blocks (0 for one split); false when it could not be
// had (the failure is recorded).
func (b *Backend) mmqParts(splits, n, m int) (uint64, bool) {
	if splits <= 1 {
		return 0, true
	}
	part := b.scratchFor(&b.mmqPart, 4*splits*n*m)
	return part, part != 0
}

// mmqReduce adds the splits' partial sums into d's n rows of m (in split order), when
// there is more than one.
func (b *Backend) mmqReduce(d *tensor, part uint64, m, n, splits int) {
	if splits > 1 {
		b.launch("mmq_reduce", blocks(n*m), 1, 256, 0, ptr(d), i64(d.cols), part, i64(m), i64(n), i64(splits))
	}
}
