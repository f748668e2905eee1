package cuda

import (
	"slices"

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
	if k := len(b.queue.fns); k > 0 && b.queue.names[k-1] == "mla_kv" && !b.fuse.cfg.noMR && b.prof == nil {
		b.mlaKV = mlaKVRec{qlen: k, epoch: b.epoch, n: n, args: args, mem: [6]span{spanOf(c), spanOf(kt), spanOf(pt), spanOf(wt), spanOf(ps), spanOf(st)}}
	}
	return true
}

// mlaKVRec is the last queued mla_kv launch (LatentKV), which rope2_set of one tensor
// may join (fuseMLAKVRoPE): the queue length right after it and the flush count then
// (it must still be the last launch), its tokens and arguments, and the memory it
// writes (the cache) and reads (kv, k_pe, the norm's weights, positions and slots).
type mlaKVRec struct {
	qlen, epoch, n int
	args           []uint64
	mem            [6]span
}

// fuseMLAKVRoPE queues, in place of rope2_set of one tensor (fuseRoPE1Set: the rows of
// s rotated and copied into d's rows rt, set_rows' arguments sargs; f is the popped
// rope_f32's record, n2 its groups of hpb heads a row), mla_kv_rope: the queued mla_kv
// just before it and that rope2_set in one launch, when their RoPE parameters are the
// same and neither writes what the other reads. DeepSeek-V2's decode step queues them
// one after the other in its latent-cache branch (the cache row, then q_pe's rotation
// into the query rows' rope dims): one launch fewer on that run.
func (b *Backend) fuseMLAKVRoPE(d, s, rt *tensor, f fusable, sargs []uint64, n2, hpb int) bool {
	m := b.mlaKV
	b.mlaKV = mlaKVRec{}
	if m.args == nil || !b.stillLast(m.qlen, m.epoch, "mla_kv") {
		return false
	}
	// mla_kv: cache, its stride, kv, its stride, kv's width, k_pe, its stride, the norm, eps,
	// positions, slots, rope dims, ropeArgs; rope_f32: x, positions, width, head dim, dims,
	// ropeArgs.
	if f.args[4] != m.args[11] || !slices.Equal(f.args[5:], m.args[12:]) {
		return false
	}
	// the rotation writes s and d, reads s and the row ids: none of mla_kv's memory
	for _, t := range []span{spanOf(d), spanOf(s), spanOf(rt)} {
		for _, o := range m.mem {
			if t.overlaps(o) {
				return false
			}
		}
	}
	b.queue.pop()
	args := append(slices.Clone(m.args), i64(m.n), s.ptr, i64(s.cols), i64(hpb), f.args[1], f.args[3], sargs[0], sargs[1], sargs[3])
	b.launch("mla_kv_rope", m.n+s.rows*n2, 1, 256, 4*int(f.args[4]), args...)
	return true
}
