package cuda

// A RMSNorm or SwiGLU whose output is then rounded to Q8_K for a MatMul (every layer of
// a K-quant model does this twice or more) runs as one kernel that writes both: the
// launch of the first op is still the last one queued when MatMul quantizes, so it is
// replaced by the fused kernel (rms_norm_q8_k, swiglu_q8_k). The results are those of
// the two kernels.

const (
	fuseNone = iota
	fuseRMSNorm
	fuseSwiGLU
)

// fusable is the last queued launch that a following Q8_K quantization may absorb.
type fusable struct {
	kind       int
	dst        uint64 // its output, which the quantization must read
	rows, cols int
	args       []uint64 // its kernel arguments
	qlen       int      // the queue length right after it was queued
	epoch      int      // the flush count then
}

// markFusable records that the launch just queued may be fused with a quantization.
func (b *Backend) markFusable(kind int, dst *tensor, args []uint64) {
	if b.prof != nil || len(b.queue.fns) == 0 || b.queue.names[len(b.queue.names)-1] != fusedFrom[kind] {
		return
	}
	b.fuse = fusable{kind: kind, dst: dst.ptr, rows: dst.rows, cols: dst.cols, args: args,
		qlen: len(b.queue.fns), epoch: b.epoch}
}

var fusedFrom = [...]string{fuseRMSNorm: "rms_norm", fuseSwiGLU: "swiglu_f32"}

// fuseQ8K replaces the queued op that wrote x with its fused form that also quantizes x
// to Q8_K into out, and reports whether it did.
func (b *Backend) fuseQ8K(x *tensor, out uint64, stride int) bool {
	f := b.fuse
	b.fuse = fusable{}
	if f.kind == fuseNone || f.qlen != len(b.queue.fns) || f.epoch != b.epoch || f.dst != x.ptr ||
		f.rows != x.rows || f.cols != x.cols || x.cols%256 != 0 {
		return false
	}
	if f.kind == fuseRMSNorm && f.args[0] == f.args[1] {
		return false // in place: the fused kernel's blocks each read the whole row
	}
	b.queue.pop()
	switch f.kind {
	case fuseRMSNorm:
		b.launch("rms_norm_q8_k", x.cols/256, x.rows, 256, 0, append(f.args, out, i64(stride))...)
	case fuseSwiGLU:
		b.launch("swiglu_q8_k", x.cols/256, x.rows, 256, 0, append(f.args, i64(x.cols), out, i64(stride))...)
	}
	return true
}

// pop removes the last queued launch.
func (q *batch) pop() {
	n := len(q.fns) - 1
	na := int(q.nargs[n])
	q.fns, q.dims, q.args = q.fns[:n], q.dims[:5*n], q.args[:len(q.args)-na]
	q.nargs, q.names = q.nargs[:n], q.names[:n]
}
