package cuda

import (
	"slices"

	"ember/inference/quant"
)

// DeepSeek's latent attention of one decode token and its attn_v_b products in one
// launch (attention_vb576, kernels/cuda/attention_short.cu), by default
// ($EMBER_CUDA_VB=off turns it off): attention_short576w rounds each head's latent
// output to Q8_K, mmv_idw_q4_k multiplies every head's row by its attn_v_b matrix, and
// quant_q8_k rounds the heads' outputs side by side for the output projection: three
// launches, each waiting for the whole grid before it. Here the block that attends a
// head also multiplies its row by the head's matrix (loaded into registers before the
// wait), and a cluster of two heads rounds their 256 outputs to Q8_K. The
// same bits as the chain (mmv_idw_q4_k's lane sums, quant_q8_k's rounding).

// VBEnv names an environment variable: unless it is "off", a decode token's latent
// attention, its attn_v_b products and their Q8_K rounding are attention_vb576's one
// launch (vbFuse, and fuseQ8K's fuseAttnVB case).
const VBEnv = "EMBER_CUDA_VB"

// vbRows and vbCols are attention_vb576's attn_v_b shape (VB_ROWS rows of the 512
// latent dims).
const vbRows, vbCols = 128, 512

// vbFuse computes the uniform run ps (es bytes between matrices) of attn_v_b products
// of xt's H rows (one token's head rows, the latent attention's output just queued as
// attention_short576w) as attention_vb576's one launch in place of the attention, and
// reports whether it did. The launch is marked so that the output projection's Q8_K
// rounding of the products' outputs (one row of H*vbRows) may join it.
func (b *Backend) vbFuse(xt *tensor, ps []product, es int64) bool {
	H, w0 := len(ps), ps[0].w
	if !b.vbOn || b.fuseOff() || b.prof != nil || H < 2 || H%2 != 0 || H > maxGridY {
		return false
	}
	if w0.typ != quant.Q4_K || w0.rows != vbRows || w0.cols != vbCols || w0.stride%16 != 0 || es%16 != 0 ||
		xt.rows != H || xt.cols != vbCols || ps[0].d.rows != 1 || ps[0].row0 != 0 {
		return false
	}
	for _, p := range ps {
		if !p.w.weight && !p.w.ofWeight {
			return false
		}
	}
	f, ok := b.take()
	if !ok {
		return false
	}
	if f.kind != fuseAttention || f.kernel != "attention_short576w" || f.dst != xt.ptr || f.grid[0] != H || f.grid[1] != 1 ||
		f.half || !b.decKernel("attention_vb576", f.grid[2]) {
		b.fuse = f // left for the products' rounding (fuseQ8K)
		return false
	}
	// The kernel rounds each head's latent row to Q8_K in its own shared memory: the
	// attention's Q8_K output and stride (its last arguments) stay 0.
	b.queue.pop()
	args := append(slices.Clone(f.args), ptr(w0), i64(w0.stride), uint64(es), ptr(ps[0].d), i64(runRowStride(ps)), 0)
	b.launch("attention_vb576", H, 1, shortWideThreads, f.grid[2], args...)
	b.mark(fusable{kind: fuseAttnVB, kernel: "attention_vb576", dst: ps[0].d.ptr, rows: 1, cols: H * vbRows, args: args,
		grid: [3]int{H, 1, f.grid[2]}, threads: shortWideThreads})
	return true
}

// vbQ8K relaunches f (attention_vb576, marked by vbFuse) with out, the Q8_K row of its
// products' outputs, as its last argument.
func (b *Backend) vbQ8K(f *fusable, out uint64) {
	args := slices.Clone(f.args)
	args[len(args)-1] = out
	b.queue.pop()
	b.launch(f.kernel, f.grid[0], f.grid[1], f.threads, f.grid[2], args...)
}
