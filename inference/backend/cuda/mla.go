package cuda

import (
	"ember/inference/backend"
	"ember/inference/quant"
)

// LatentKV writes n tokens' latent key rows into an MLA cache in one launch (mla_kv):
// row slots[i] of cache (F16, rows of r.Dims + kv's width) gets RoPE(kpe[i]) followed by
// RMSNorm(kv[i]) * norm, what RMSNorm, two SetRows placements, RoPE and SetRows do one
// after another in inference/model/deepseek2 (five launches a layer), with the same
// float operations. It is deepseek2's optional latentWriter op; it reports false,
// having queued nothing, for shapes it does not take (a cache of another type or width,
// RoPE not of the key row's first dims) or with $EMBER_CUDA_NO_FUSE set.
func (b *Backend) LatentKV(cache, kv, kpe, norm backend.Tensor, eps float32, pos, slots backend.Tensor, r backend.RoPE) bool {
	c := get(cache)
	kt, pt, wt := want(kv, quant.F32), want(kpe, quant.F32), want(norm, quant.F32)
	if b.fuseOff() || c.typ != quant.F16 || c.cols != pt.cols+kt.cols || pt.rows != kt.rows || pt.cols != r.Dims ||
		r.HeadDim != c.cols || r.Dims%2 != 0 || wt.rows*wt.cols != kt.cols || kt.rows == 0 || kt.rows > maxGridY {
		return false
	}
	n := kt.rows
	ps, st := ids(pos, n, "LatentKV"), ids(slots, n, "LatentKV")
	args := append([]uint64{ptr(c), i64(c.stride / 2), ptr(kt), i64(kt.stride / 4), i64(kt.cols), ptr(pt), i64(pt.stride / 4),
		ptr(wt), f32(eps), ptr(ps), ptr(st), i64(r.Dims)}, ropeArgs(r)...)
	b.launch("mla_kv", n, 1, 256, 4*r.Dims, args...)
	return true
}
