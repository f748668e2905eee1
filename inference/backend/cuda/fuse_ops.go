package cuda

import (
	"slices"

	"ember/inference/quant"
)

// The fusions of ops other than MatMul's quantization (fuse.go): each is tried by the
// second op of its pair, which then queues nothing of its own.

// addNormThreads is ADD_NORM_THREADS of ops.cu. addNormMaxCols bounds the row of sums
// that add_rms_norm keeps in shared memory (32 KiB); wider rows are not fused.
const addNormThreads, addNormMaxCols = 1024, 8192

// fuseAddNorm runs RMSNorm(d, x, w) together with the queued Add that wrote x (same
// shapes, no broadcast) as add_rms_norm, and reports whether it did. One block treats a
// whole row, reading a and b before writing, so the sum and d may each be a or b, or
// another row set entirely (the decoder norms into the Add's first operand); partly
// overlapping rows, or a weight in the sum's memory, are left to the separate kernels.
func (b *Backend) fuseAddNorm(d, x, w *tensor, eps float32) bool {
	f, ok := b.take()
	if !ok || f.kind != fuseAdd || f.dst != x.ptr || f.rows != x.rows || f.cols != x.cols || x.cols > addNormMaxCols {
		return false
	}
	sum, out, a, bb, ws := spanOf(x), spanOf(d), f.mem[0], f.mem[1], spanOf(w)
	if !sum.apart(a) || !sum.apart(bb) || !out.apart(a) || !out.apart(bb) || !out.apart(sum) ||
		ws.overlaps(sum) || ws.overlaps(out) {
		return false
	}
	b.queue.pop()
	args := []uint64{x.ptr, f.args[1], f.args[2], d.ptr, w.ptr, i64(x.cols), f32(eps)}
	b.launch("add_rms_norm", x.rows, 1, addNormThreads, 4*x.cols, args...)
	b.markFusable(fuseAddRMSNorm, d, args)
	return true
}

// ropeHeads is the heads one block of rope2_f32 and rope2_set rotates by default. H200,
// session 56, tg128 rotated sweeps on one binary (build/wip/s56-call6.sh .. 8): the 8B
// Q4_K_M at 4 against 8 526.6 / 524.1 (4 ahead in 5 of 6 rounds), 528.1 / 525.1 (5 of 5),
// at 2 526.9; V2-Lite (its q_pe's 16 heads) 640.0 / 638.1 (3 of 4). It was 8.
const ropeHeads = 4

// RoPEHeadsEnv names an environment variable: the heads one block of rope2_f32 and
// rope2_set rotates (1 to 64), for timing other grids than ropeHeads'.
const RoPEHeadsEnv = "EMBER_CUDA_ROPE_HEADS"

// ropeHeadsFromEnv is $EMBER_CUDA_ROPE_HEADS, or ropeHeads when unset or out of range.
func ropeHeadsFromEnv() int {
	if n := decIntEnv(RoPEHeadsEnv); n >= 1 && n <= 64 {
		return n
	}
	return ropeHeads
}

// ropeHeads is the heads a RoPE block rotates: ropeHPB, or ropeHeads when unset.
func (b *Backend) ropeHeads() int {
	if b.ropeHPB > 0 {
		return b.ropeHPB
	}
	return ropeHeads
}

// fuseRoPE2 runs the RoPE of x (rope_f32's arguments args) together with the queued RoPE
// of another tensor with the same rows, positions and parameters (Q, then K), as
// rope2_f32, and reports whether it did. The tensors must not overlap: each is rotated
// once, by blocks that do not wait for each other.
func (b *Backend) fuseRoPE2(x *tensor, args []uint64) bool {
	f, ok := b.take()
	if !ok || f.kind != fuseRoPE || f.rows != x.rows || spanOf(x).overlaps(f.mem[0]) ||
		f.args[1] != args[1] || !slices.Equal(f.args[3:], args[3:]) {
		return false
	}
	hd := int(args[3])
	hpb := b.ropeHeads()
	n1, n2 := (f.cols/hd+hpb-1)/hpb, (x.cols/hd+hpb-1)/hpb
	b.queue.pop()
	rargs := append([]uint64{f.args[0], f.args[2], i64(n1), args[0], args[2], i64(hpb), args[1]}, args[3:]...)
	smem := 4 * int(args[4])
	b.launch("rope2_f32", x.rows, n1+n2, 128, smem, rargs...)
	b.mark(fusable{kind: fuseRoPE2, dst: x.ptr, rows: x.rows, cols: x.cols, args: rargs,
		mem: [2]span{f.mem[0], spanOf(x)}, grid: [3]int{x.rows, n1 + n2, smem}})
	return true
}

// fuseRoPESet runs SetRows(d, s, rt) (set_rows' arguments args, one launch) together with
// the queued rope2_f32 when s is the K it rotated (the same rows), as rope2_set (without
// V), and reports whether it did. The cache d may not overlap Q, K or the row ids: the
// blocks rotating Q run beside those writing K.
func (b *Backend) fuseRoPESet(d, s, rt *tensor, args []uint64) bool {
	if b.fuse.kind != fuseRoPE2 {
		return false // leave another record to fuseSetRows2
	}
	f, ok := b.take()
	if !ok || f.dst != s.ptr || f.rows != s.rows || f.cols != s.cols || s.stride != 4*s.cols ||
		spanOf(d).overlaps(f.mem[0]) || spanOf(d).overlaps(f.mem[1]) || spanOf(d).overlaps(spanOf(rt)) {
		return false
	}
	b.queue.pop()
	all := append(slices.Clone(f.args), args[0], args[1], args[3], 0, 0, 0, 0, 0)
	b.launch("rope2_set", f.grid[0], f.grid[1], 128, f.grid[2], all...)
	b.mark(fusable{kind: fuseRoPESet, dst: d.ptr, rows: s.rows, cols: s.cols, args: all,
		mem: [2]span{spanOf(d), spanOf(s)}, grid: f.grid})
	return true
}

// fuseRoPE1Set runs SetRows(d, s, rt) (set_rows' arguments args, one launch) together
// with the queued rope_f32 when s is the tensor it rotated (the same rows, dense), as
// rope2_set with no Q blocks and no V, and reports whether it did: DeepSeek's q_pe
// rotated and placed into the rope dims of its query rows. d may not overlap s or the
// row ids: a block writes its rotated heads while others rotate theirs.
func (b *Backend) fuseRoPE1Set(d, s, rt *tensor, args []uint64) bool {
	if b.fuse.kind != fuseRoPE {
		return false // leave another record to the other SetRows fusions
	}
	f, ok := b.take()
	if !ok || f.dst != s.ptr || f.rows != s.rows || f.cols != s.cols || s.stride != 4*s.cols ||
		spanOf(d).overlaps(spanOf(s)) || spanOf(d).overlaps(spanOf(rt)) {
		return false
	}
	hd := int(f.args[3])
	hpb := b.ropeHeads()
	n2 := (s.cols/hd + hpb - 1) / hpb
	b.queue.pop()
	if b.fuseMLAKVRoPE(d, s, rt, f, args, n2, hpb) {
		return true
	}
	all := append([]uint64{0, 0, 0, s.ptr, i64(s.cols), i64(hpb), f.args[1]}, f.args[3:]...)
	all = append(all, args[0], args[1], args[3], 0, 0, 0, 0, 0)
	b.launch("rope2_set", s.rows, n2, 128, 4*int(f.args[4]), all...)
	return true
}

// fuseRoPESetV runs SetRows(d, s, rt) (set_rows' arguments args) together with the
// queued rope2_set (no V yet) with the same row ids, adding the V copy's blocks, and
// reports whether it did. V's cache may not overlap the K cache, K or Q, nor V any of
// the three: the copies run beside the rotations and the K writes.
func (b *Backend) fuseRoPESetV(d, s, rt *tensor, args []uint64) bool {
	if b.fuse.kind != fuseRoPESet {
		return false
	}
	f, ok := b.take()
	n := len(f.args)
	if !ok || f.rows != s.rows || f.args[n-6] != args[3] {
		return false
	}
	q := span{f.args[0], f.args[0] + uint64(4*int(f.args[1])*f.rows)}
	dv, sv := spanOf(d), spanOf(s)
	if dv.overlaps(f.mem[0]) || dv.overlaps(f.mem[1]) || dv.overlaps(q) || dv.overlaps(spanOf(rt)) ||
		sv.overlaps(f.mem[0]) || sv.overlaps(f.mem[1]) || sv.overlaps(q) {
		return false
	}
	g3 := blocks(s.cols)
	all := slices.Clone(f.args)
	all[n-5], all[n-4], all[n-3], all[n-2], all[n-1] = args[0], args[1], args[2], args[4], i64(g3)
	b.queue.pop()
	b.launch("rope2_set", f.grid[0], f.grid[1]+g3, 128, f.grid[2], all...)
	return true
}

// fuseSetRows2 runs SetRows(d, s, rt) (set_rows' arguments args, one launch) together
// with the queued SetRows of another tensor with the same row ids (K, then V), as
// set_rows2, and reports whether it did. Neither destination may overlap the other's
// destination or source: the two copies run at once.
func (b *Backend) fuseSetRows2(d, s, rt *tensor, args []uint64) bool {
	f, ok := b.take()
	if !ok || f.kind != fuseSetRows || f.rows != s.rows || f.args[3] != args[3] {
		return false
	}
	d1, s1, d2, s2 := f.mem[0], f.mem[1], spanOf(d), spanOf(s)
	if d1.overlaps(d2) || d1.overlaps(s2) || d2.overlaps(s1) || d1.overlaps(spanOf(rt)) {
		return false
	}
	g1, g2 := blocks(f.cols), blocks(s.cols)
	b.queue.pop()
	b.launch("set_rows2", g1+g2, s.rows, 256, 0, f.args[0], f.args[1], f.args[2], i64(f.cols), i64(g1),
		args[0], args[1], args[2], i64(s.cols), args[3])
	return true
}

// fuseMoESumAdd runs Add(d, a, bb) together with the queued moe_sum that wrote a (same
// shape, dense, no broadcast), as moe_sum_add, and reports whether it did: a mixture of
// experts' routed sum plus its shared experts' output. d may not overlap the pair rows
// or weights moe_sum reads (other threads read them while d is written), nor a.
func (b *Backend) fuseMoESumAdd(d, a, bb *tensor) bool {
	if b.fuse.kind != fuseMoESum || d.typ != quant.F32 || a.typ != quant.F32 || bb.typ != quant.F32 {
		return false
	}
	f, ok := b.take()
	if !ok || f.dst != a.ptr || a.rows != f.rows || a.cols != f.cols || bb.rows != a.rows || bb.cols != a.cols ||
		d.rows != a.rows || d.cols != a.cols || a.stride != 4*a.cols || bb.stride != 4*bb.cols || d.stride != 4*d.cols {
		return false
	}
	dd := spanOf(d)
	if dd.overlaps(f.mem[0]) || dd.overlaps(f.mem[1]) || dd.overlaps(spanOf(a)) {
		return false
	}
	b.queue.pop()
	b.launch("moe_sum_add", blocks(a.rows*a.cols), 1, 256, 0, append(slices.Clone(f.args), d.ptr, bb.ptr)...)
	return true
}
