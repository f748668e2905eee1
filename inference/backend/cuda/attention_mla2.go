package cuda

// A prompt's latent attention at depth, two tokens a block (attention_mla2,
// kernels/cuda/attention_mla2.cu): attention_mla takes a token a block, and where its
// scores do not fit shared memory (past ~2,000 positions) each block reads all of the
// layer's latent rows twice, so a prompt's batch read them twice per token from L2 (~20 GB
// a layer at 16,384 positions: V2-Lite's pp512 there ran at 0.68x llama.cpp's, session
// 82). Its two tokens share each key tile, and one pass with an online softmax (its
// probabilities rounded to f16 before they are normalised, as llama.cpp's flash
// attention does) reads each tile once: a quarter of the reads.

// mla2Smem is attention_mla2's dynamic shared memory (mla2_smem in the kernel): two query
// tiles of 16 x 576 halves, two key tiles of 64 x 576, two P tiles of 16 x 144 bytes.
const mla2Smem = 2*(2*16*mlaDim) + 2*(2*decK*mlaDim) + 2*16*144

// mla2Threads is its block (two groups of eight warps).
const mla2Threads = 512

// NoMLA2Env names an environment variable: when set, prompts at depth keep attention_mla
// (a token a block), for timing.
const NoMLA2Env = "EMBER_CUDA_NO_MLA2"

// attentionMLA2 launches attention_mla2 for n tokens of head-major groups of one latent
// KV head (attentionMLA's operands) where attention_mla would run without kept scores
// (scap 0) over one sequence's rows (the block's two tokens share its key tiles), and
// reports whether it did.
func (b *Backend) attentionMLA2(d, qt, kt, pt, table, seq *tensor, tcols, bs, groups int, scale float32, n, scap int) bool {
	if scap != 0 || n < 2 || (table != nil && table.rows != 1) || b.dec.noMLA2 || !b.decKernel("attention_mla2", mla2Smem) {
		return false
	}
	b.launch("attention_mla2", (n+1)/2, (groups+15)/16, mla2Threads, mla2Smem, ptr(d), i64(d.cols), ptr(qt), i64(qt.cols),
		ptr(kt), i64(kt.cols), ptr(pt), f32(scale), ptr(table), i64(tcols), ptr(seq), i64(bs), i64(n), i64(groups))
	return true
}
