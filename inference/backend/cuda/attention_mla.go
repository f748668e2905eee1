package cuda

// Latent attention (attention_mla in kernels/cuda/attention_tc.cu). DeepSeek's MLA
// attends each (token, head) over the token's latent rows: the model hands the heads as
// head-major rows of one 576-dim KV head (Attention.HeadGroups), and the other kernels
// take each row alone, so a decode step of 64 tokens x 16 heads read every token's
// latent rows 16 times (894 us a layer on the H200 at 600 positions). attention_mla
// takes the 16 heads of a token as one m16 tile on the tensor cores and reads each row
// once per pass.
const (
	// mlaDim is the K (and V) row it takes (MLA_D): 64 rope + 512 latent dims.
	mlaDim = 576
	// mlaThreads is a block's threads (MLA_THREADS).
	mlaThreads = 128
	// mlaSmem is a block's dynamic shared memory: the 16 heads' f16 queries, two tiles
	// of 32 key rows, the 16 x 32 f16 probabilities (rows of 80 bytes).
	mlaSmem = 2*16*mlaDim + 2*2*32*mlaDim + 16*80
	// mlaMinTokens is the fewest tokens (rows / HeadGroups) it is chosen for.
	mlaMinTokens = 1
)

// attMLA is the latent attention's state on a Backend.
type attMLA struct {
	mode splitMode // auto: by mlaMinTokens; off: never; on: whenever the shapes allow
	smem int8      // 1 once its shared memory limit is raised, -1 when it cannot be
}

// attentionMLA launches attention_mla when the rows are head-major groups of one
// latent KV head (V the same rows as K) and reports whether it did.
func (b *Backend) attentionMLA(d, qt, kt, vt, pt, table, seq *tensor, tcols, bs, groups int, scale float32,
	nhead, nkv, hd, vhd int) bool {
	if b.mla.mode == splitOff || groups < 2 || qt.rows%groups != 0 || nhead != 1 || nkv != 1 ||
		hd != mlaDim || vhd != mlaDim || kt.ptr != vt.ptr || kt.stride != vt.stride {
		return false
	}
	n := qt.rows / groups
	if b.mla.mode == splitAuto && n < mlaMinTokens {
		return false
	}
	if b.mla.smem == 0 {
		b.mla.smem = 1
		if b.h.maxDynamicSmem(b.kernel("attention_mla"), mlaSmem) != nil {
			b.mla.smem = -1
		}
	}
	if b.mla.smem < 0 {
		return false
	}
	b.launch("attention_mla", n, (groups+15)/16, mlaThreads, mlaSmem, ptr(d), i64(d.cols), ptr(qt), i64(qt.cols),
		ptr(kt), i64(kt.cols), ptr(pt), f32(scale), ptr(table), i64(tcols), ptr(seq), i64(bs), i64(n), i64(groups))
	return true
}
