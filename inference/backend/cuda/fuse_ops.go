package cuda

import "slices"

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

// ropeHeads is the heads one block of rope2_f32 rotates.
const ropeHeads = 8

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
	n1, n2 := (f.cols/hd+ropeHeads-1)/ropeHeads, (x.cols/hd+ropeHeads-1)/ropeHeads
	b.queue.pop()
	b.launch("rope2_f32", x.rows, n1+n2, 128, 4*int(args[4]), append([]uint64{f.args[0], f.args[2], i64(n1),
		args[0], args[2], i64(ropeHeads), args[1]}, args[3:]...)...)
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
