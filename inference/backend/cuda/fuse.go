package cuda

import (
	"os"
	"slices"
)

// Fusion is a peephole over the launch queue: an op whose launch may be joined by the
// next op's is recorded (mark) while it is the last one queued; when the next op finds
// it still last (take: same flush, nothing queued since) and the pattern is exact, it
// pops that launch and queues one kernel that does both, with the results of the two
// kernels. Otherwise each op runs its own launches. The patterns:
//
//   - RMSNorm, SwiGLU or Add+RMSNorm whose output a MatMul then rounds to Q8_K:
//     rms_norm_q8_k, swiglu_q8_k, add_rms_norm_q8_k (fuseQ8K, here); GetRows from an F32
//     table whose rows (read as rows of another width) a MatMul rounds to Q8_K:
//     get_rows_q8_k (DeepSeek's latent attention output, gathered); SwiGLU whose output
//     is rounded to Q8_0 or Q8_1 (the partner of Q5_0, Q8_0 ... weights): swiglu_q8;
//     likewise Add+RMSNorm: add_rms_norm_q8 (fuseQ8).
//   - Add, then RMSNorm of the sum: add_rms_norm (fuseAddNorm, fuse_ops.go).
//   - RoPE of Q, then RoPE of K with the same positions and parameters: rope2_f32
//     (fuseRoPE2, fuse_ops.go).
//   - SetRows of K, then SetRows of V with the same row ids: set_rows2 (fuseSetRows2).
//   - RoPE of Q and K (rope2_f32), then SetRows of K, then of V with the same row ids:
//     rope2_set (fuseRoPESet, fuseRoPESetV in fuse_ops.go); RoPE of one tensor, then
//     SetRows of it: rope2_set without Q or V (fuseRoPE1Set).
//   - A mixture of experts' weighted sum (moe_sum), then an Add of it and another
//     tensor (the shared experts' output): moe_sum_add (fuseMoESumAdd).
//   - add_rms_norm_q8_k of one row, then the streamed product (mvs, with EMBER_CUDA_MVS)
//     of its Q8_K row: mvsn (fuseNormQ8K, mvs.go).
//   - add_rms_norm_q8_k or swiglu_q8_k, then act_f16 of the Q8_K rows it wrote (the f16
//     activation rows of a product on cuBLASLt: a batch of 48+ rows): the same kernel
//     writing the f16 rows too (fuseHalf, here).
//   - mla_kv (DeepSeek's latent cache row), then rope2_set of one tensor (its query's
//     rope dims) with the same RoPE parameters: mla_kv_rope (fuseMLAKVRoPE, mla.go).
//   - With $EMBER_CUDA_FFN: mmv_multi of a row's gate and up (Q4_K), swiglu_q8_k of
//     their outputs, then the down product (Q4_K or Q6_K) of its Q8_K row: ffn_q4_k or
//     ffn_q6_k (ffnFuse, ffn.go; down's sums in another order).
//   - Decode attention (attention_split1, attention_short, attention_dec64/128) whose
//     output a MatMul then rounds to Q8_K (the output projection): its last blocks
//     (attention_short and attention_dec: each block, its KV head's outputs) round it
//     (fuseQ8K); attention_dec64/128 also to Q8_0 or Q8_1 (fuseQ8).
//   - DeepSeek's latent attention of one token (attention_short576w, its Q8_K rounding
//     joined), then attn_v_b's per-head products of its rows: attention_vb576
//     (vbFuse, latentvb.go), whose products' Q8_K rounding for the output projection
//     may then join it too (fuseQ8K).
//
// The profiler launches each op at once and queues nothing, so it sees them unfused.

// NoFuseEnv names an environment variable: when set, no launches are fused (for timing
// the fused kernels against the separate ones; results are the same).
const NoFuseEnv = "EMBER_CUDA_NO_FUSE"

// NoHalfFuseEnv names an environment variable: when set, act_f16 runs as its own launch
// (fuseHalf), for timing that fusion alone.
const NoHalfFuseEnv = "EMBER_CUDA_NO_HALF_FUSE"

// NoLayFuseEnv names an environment variable: when set, mmg's activation rows are laid
// out by act_f16 and mmg_xl (fused into the norm or not) instead of the norm writing them
// in mmg's layout itself (fuseHalf with a negative stride), for timing that fusion alone.
const NoLayFuseEnv = "EMBER_CUDA_NO_LAY_FUSE"

// NoAttentionHalfEnv names an environment variable: when set, decode attention rounds its
// output to Q8_K for the output projection but act_f16 writes the f16 rows (fuseQ8K's
// half records), for timing that fusion alone.
const NoAttentionHalfEnv = "EMBER_CUDA_NO_ATTENTION_HALF"

// NoNorm1Env names an environment variable: when set, a decode row's residual add, norm
// and Q8_K rounding run on add_rms_norm_q8_k's 1,024 threads instead of
// add_rms_norm_q8_k_1's 256 (the same bits), for timing the one-row kernel.
const NoNorm1Env = "EMBER_CUDA_NO_NORM1"

// NoRMSNorm1Env names an environment variable: when set, a decode row's norm and Q8_K
// rounding with no add before it (the step's first, after GetRows) run on
// rms_norm_q8_k's blocks instead of rms_norm_q8_k_1's one (the same bits), for timing
// the one-block kernel.
const NoRMSNorm1Env = "EMBER_CUDA_NO_RMS_NORM1"

// RouteFuseEnv names an environment variable: unless it is 0, a decode token's routing
// (moe_topk) and its Q4_K experts' gate and up (mmv_id_q4_k) run as mmv_route_q4_k's one
// launch (the same bits). In session 42 it did not beat the two launches on the H200
// (DeepSeek-V2-Lite tg128 576 against 583); with its weight loads evict-first as
// mmv_id_q4_k's are (session 45) it does: 615.8-619.7 against 603.1-604.5, four rounds
// alternating (build/wip/s45-call3.sh).
const RouteFuseEnv = "EMBER_CUDA_ROUTE_FUSE"

// NoMLARoPEEnv names an environment variable: when set, DeepSeek-V2's latent cache row
// (mla_kv) and its query's rope dims (rope2_set) stay two launches instead of
// mla_kv_rope's one (the same bits), for timing that fusion alone.
const NoMLARoPEEnv = "EMBER_CUDA_NO_MLA_ROPE"

// norm1MaxCols is ADD_NORM1_COLS of quant.cu: the widest row add_rms_norm_q8_k_1 takes.
const norm1MaxCols = 8192

const (
	fuseNone       = iota
	fuseRMSNorm    // rms_norm: a Q8_K rounding of its output may join it
	fuseSwiGLU     // swiglu_f32: likewise
	fuseAddRMSNorm // add_rms_norm: likewise
	fuseAdd        // add_f32 of same-shape operands: an RMSNorm of the sum may join it
	fuseRoPE       // rope_f32: the RoPE of another tensor may join it
	fuseSetRows    // set_rows (one launch): the SetRows of another tensor may join it
	fuseAttention  // attention_split1, attention_short or attention_dec64/128: a Q8_K rounding of its output may join it
	fuseRoPE2      // rope2_f32: the SetRows of its second tensor (K) into a cache may join it
	fuseRoPESet    // rope2_set without V: the SetRows of V with the same row ids may join it
	fuseGetRows    // get_rows_f32 (one launch): a Q8_K rounding of the rows it wrote may join it
	fuseMoESum     // moe_sum: an Add of its output and another tensor may join it
	fuseNormQ8K    // add_rms_norm_q8_k of one row: the streamed product (mvs) of its Q8_K output may join it
	fuseQ8KHalf    // add_rms_norm_q8_k or swiglu_q8_k: the f16 rows of its Q8_K output (act_f16, for cuBLASLt) may join it
	fuseAttnVB     // attention_vb576: the Q8_K rounding of its attn_v_b outputs (one row) may join it
)

// fusedFrom is the kernel each kind's op queued.
var fusedFrom = [...]string{fuseRMSNorm: "rms_norm", fuseSwiGLU: "swiglu_f32", fuseAddRMSNorm: "add_rms_norm",
	fuseAdd: "add_f32", fuseRoPE: "rope_f32", fuseSetRows: "set_rows", fuseAttention: "attention_split1",
	fuseRoPE2: "rope2_f32", fuseRoPESet: "rope2_set", fuseGetRows: "get_rows_f32", fuseMoESum: "moe_sum",
	fuseNormQ8K: "add_rms_norm_q8_k", fuseQ8KHalf: "add_rms_norm_q8_k", fuseAttnVB: "attention_vb576"}

// span is device memory [lo, hi) in bytes.
type span struct{ lo, hi uint64 }

func spanOf(t *tensor) span { return span{t.ptr, t.ptr + uint64(t.rows*t.stride)} }

func (s span) overlaps(o span) bool { return s.lo < o.hi && o.lo < s.hi }

// apart reports whether s and o are the same memory or do not overlap: kernels that
// treat each row (or element) in one thread block may then read one and write the other.
func (s span) apart(o span) bool { return s == o || !s.overlaps(o) }

// fusable is the last queued launch when a following op may join it (Backend.fuse).
type fusable struct {
	kind       int
	kernel     string // the kernel queued, where not its kind's (fusedFrom)
	dst        uint64 // its output
	rows, cols int    // of dst (set_rows: of the source)
	args       []uint64
	mem        [2]span // add: a, b; set_rows: dst, src
	grid       [3]int  // attention, fuseQ8KHalf: grid x, y and its dynamic shared memory
	threads    int     // attention, fuseQ8KHalf: the launch's block size
	q8t        bool    // attention: the kernel has a twin (kernel + "_q8") that rounds to Q8_0 and Q8_1
	half       bool    // attention: its arguments end with f16 rows and their stride (0, 0) after the Q8 output's
	qlen       int     // the queue length right after it was queued
	epoch      int     // the flush count then
	cfg        fuseCfg // kept when the record is cleared
}

type fuseCfg struct {
	read   bool // $EMBER_CUDA_NO_FUSE was read
	off    bool // no fusion (NoFuseEnv, or tests)
	noHalf bool // no fuseHalf (NoHalfFuseEnv)
	noLay  bool // no fuseHalf into mmg's layout (NoLayFuseEnv)
	noAtt  bool // no fuseHalf into decode attention (NoAttentionHalfEnv)
	noN1   bool // no add_rms_norm_q8_k_1 (NoNorm1Env)
	noRN1  bool // no rms_norm_q8_k_1 (NoRMSNorm1Env)
	noMR   bool // no mla_kv_rope (NoMLARoPEEnv)
	rte    bool // mmv_route_q4_k (on unless RouteFuseEnv is 0)
}

// mark records f (kind, dst, rows, cols, args, mem set) as the launch just queued, when
// it is: the profiler, a skipped kernel or a failure queue nothing.
func (b *Backend) mark(f fusable) {
	c := &b.fuse.cfg
	n := len(b.queue.fns)
	if b.fuseOff() || b.prof != nil || n == 0 || b.queue.names[n-1] != f.from() {
		return
	}
	f.qlen, f.epoch, f.cfg = n, b.epoch, *c
	b.fuse = f
}

// fuseOff reports whether fusion is off ($EMBER_CUDA_NO_FUSE, read once, or tests).
func (b *Backend) fuseOff() bool {
	c := &b.fuse.cfg
	if !c.read {
		c.read, c.off, c.noHalf = true, c.off || os.Getenv(NoFuseEnv) != "", os.Getenv(NoHalfFuseEnv) != ""
		c.noLay, c.noAtt = os.Getenv(NoLayFuseEnv) != "", os.Getenv(NoAttentionHalfEnv) != ""
		c.noN1, c.rte = os.Getenv(NoNorm1Env) != "", os.Getenv(RouteFuseEnv) != "0"
		c.noMR, c.noRN1 = os.Getenv(NoMLARoPEEnv) != "", os.Getenv(NoRMSNorm1Env) != ""
	}
	return c.off
}

// markAttention records decode attention kernel name, just queued on a grid of rows x
// gy blocks of smem bytes with args ending in its Q8_K output and stride (0, 0), and with
// half its f16 rows and their stride (0, 0) after them, as one the output projection's
// rounding may join (fuseQ8K; with half, act_f16 then too: fuseHalf; with q8t, the kernel
// has a twin name_q8 that rounds to Q8_0 or Q8_1: fuseQ8), when each group's g*vhd
// outputs of the g*nkv*vhd of a row (dst: args[0]) are whole 256-element blocks. threads
// is the launch's block size (the fused forms relaunch with it).
func (b *Backend) markAttention(name string, args []uint64, rows, gy, smem, threads, g, nkv, vhd int, q8t, half bool) {
	if (g*vhd)%256 != 0 {
		return
	}
	b.mark(fusable{kind: fuseAttention, kernel: name, dst: args[0], rows: rows, cols: g * nkv * vhd, args: args,
		grid: [3]int{rows, gy, smem}, threads: threads, q8t: q8t, half: half})
}

// q8Args are an attention launch's arguments (markAttention) with the rounding's output
// and its stride in place of the zeros (the f16 rows' zeros kept), and for its Q8_0 twin
// (s1 >= 0) s1 after them.
func (f *fusable) q8Args(out uint64, stride, s1 int) []uint64 {
	tail := 2
	if f.half {
		tail = 4
	}
	args := append(slices.Clone(f.args[:len(f.args)-tail]), out, i64(stride))
	if f.half {
		args = append(args, 0, 0)
	}
	if s1 >= 0 {
		args = append(args, i64(s1))
	}
	return args
}

// markFusable records that the launch just queued may be fused with a quantization.
func (b *Backend) markFusable(kind int, dst *tensor, args []uint64) {
	b.mark(fusable{kind: kind, dst: dst.ptr, rows: dst.rows, cols: dst.cols, args: args})
}

// from is the kernel f's launch queued.
func (f *fusable) from() string {
	if f.kernel != "" {
		return f.kernel
	}
	return fusedFrom[f.kind]
}

// take returns and clears the record if its launch is still the last one queued.
func (b *Backend) take() (fusable, bool) {
	f := b.fuse
	b.fuse = fusable{cfg: f.cfg}
	if f.kind == fuseNone || !b.stillLast(f.qlen, f.epoch, f.from()) {
		return fusable{}, false
	}
	return f, true
}

// stillLast reports whether the launch of kernel name recorded when the queue was qlen
// long, in flush epoch, is still the last one queued (take, fuseMLAKVRoPE).
func (b *Backend) stillLast(qlen, epoch int, name string) bool {
	n := len(b.queue.fns)
	return n > 0 && qlen == n && epoch == b.epoch && b.queue.names[n-1] == name
}

// q8kwWarps is the 256-element blocks that a CUDA block of the warp-quantizing kernels
// (swiglu_q8_k, get_rows_q8_k: a warp a block) rounds to Q8_K, Q8KW_WARPS in quant.cu.
const q8kwWarps = 4

// q8kwGrid is those kernels' grid width for rows of k elements.
func q8kwGrid(k int) int { return (k/256 + q8kwWarps - 1) / q8kwWarps }

// fuseQ8K replaces the queued op that wrote x with its fused form that also quantizes x
// to Q8_K into out, and reports whether it did.
func (b *Backend) fuseQ8K(x *tensor, out uint64, stride int) bool {
	f, ok := b.take()
	if !ok || f.dst != x.ptr || x.cols%256 != 0 {
		return false
	}
	if (f.rows != x.rows || f.cols != x.cols) && (f.kind != fuseGetRows || f.rows*f.cols != x.rows*x.cols) {
		return false
	}
	if f.kind == fuseGetRows { // the gathered rows seen as x's rows: same memory and size
		if x.stride != 4*x.cols || x.rows > maxGridY || spanOf(x).overlaps(f.mem[0]) {
			return false
		}
		b.queue.pop()
		b.launch("get_rows_q8_k", q8kwGrid(x.cols), x.rows, 32*q8kwWarps, 0, x.ptr, f.args[0], f.args[1], f.args[2], i64(f.cols), i64(x.cols),
			out, i64(stride))
		return true
	}
	switch f.kind {
	case fuseRMSNorm:
		if f.args[0] == f.args[1] {
			return false // in place: the fused kernel's blocks each read the whole row
		}
		b.queue.pop()
		if x.rows == 1 && x.cols <= norm1MaxCols && !f.cfg.noRN1 && (f.args[0]|f.args[2])%16 == 0 {
			// one row (f.args: dst, x, w, cols, eps; dst and w 16-byte aligned): one block
			b.launch("rms_norm_q8_k_1", 1, 1, 256, 0, append(f.args, out)...)
			break
		}
		b.launch("rms_norm_q8_k", x.cols/256, x.rows, 256, 0, append(f.args, out, i64(stride))...)
	case fuseSwiGLU:
		b.queue.pop()
		h := fusable{kind: fuseQ8KHalf, kernel: "swiglu_q8_k", dst: out, rows: x.rows, cols: x.cols,
			args: append(f.args, i64(x.cols), out, i64(stride), 0, 0), grid: [3]int{q8kwGrid(x.cols), x.rows, 0}, threads: 32 * q8kwWarps}
		b.relaunch(&h)
		b.mark(h)
	case fuseAddRMSNorm:
		b.queue.pop()
		if x.rows == 1 && x.cols <= norm1MaxCols && !f.cfg.noN1 && (f.args[3]|f.args[4])%16 == 0 {
			// one row (f.args: sum, a, b, dst, w, cols, eps; dst and w 16-byte aligned, for
			// the kernel's float4 accesses): the 256-thread kernel; its Q8_K row may still
			// join a streamed product (mvsn), not f16 rows (fuseHalf: no batch of one row
			// goes to cuBLASLt or mmg)
			b.launch("add_rms_norm_q8_k_1", 1, 1, 256, 0, append(f.args, out)...)
			if !b.mvsc.off {
				b.mark(fusable{kind: fuseNormQ8K, kernel: "add_rms_norm_q8_k_1", dst: out, rows: 1, cols: x.cols, args: f.args})
			}
			break
		}
		h := fusable{kind: fuseQ8KHalf, kernel: "add_rms_norm_q8_k", dst: out, rows: x.rows, cols: x.cols,
			args: append(f.args, out, i64(stride), 0, 0), grid: [3]int{x.rows, 1, 4 * x.cols}, threads: addNormThreads}
		b.relaunch(&h)
		if x.rows == 1 && !b.mvsc.off {
			// f.args: sum, a, b, dst, w, cols, eps; dst: the Q8_K row.
			b.mark(fusable{kind: fuseNormQ8K, dst: out, rows: 1, cols: x.cols, args: f.args})
		} else {
			b.mark(h)
		}
	case fuseAttnVB:
		if x.rows != 1 || x.stride != 4*x.cols {
			return false
		}
		b.vbQ8K(&f, out)
	case fuseAttention:
		// f.args end with the q8 output and its stride (0, 0); the grid is f.mem's.
		if x.stride != 4*x.cols {
			return false
		}
		b.queue.pop()
		if !f.half || f.cfg.noAtt {
			b.launch(f.from(), f.grid[0], f.grid[1], f.threads, f.grid[2], f.q8Args(out, stride, -1)...)
			break
		}
		// attention_dec64/128: the f16 rows of the output projection on cuBLASLt may join too
		h := fusable{kind: fuseQ8KHalf, kernel: f.from(), dst: out, rows: x.rows, cols: x.cols, args: f.q8Args(out, stride, -1),
			grid: f.grid, threads: f.threads}
		b.relaunch(&h)
		b.mark(h)
	default:
		return false
	}
	return true
}

// fuseHalf replaces the queued add_rms_norm_q8_k, swiglu_q8_k or attention_dec64/128
// (their fuseQ8K forms) that wrote the Q8_K rows xq (n rows of k values, xs bytes apart)
// with the same launch writing their f16 rows into out (stride bytes apart) too, as
// act_f16 would, and reports whether it did: one launch fewer before each product of a
// batch on cuBLASLt (the 64-stream step's Q/K/V, output, gate/up and down products).
// With stride -1 (add_rms_norm_q8_k only, up to mgTN rows) it writes them in mmg_xl's
// layout instead: act_f16 and mmg_xl both left out before mmg's gate and up pair.
func (b *Backend) fuseHalf(xq uint64, xs, k, n int, out uint64, stride int) bool {
	f, ok := b.take()
	if !ok || f.cfg.noHalf || f.kind != fuseQ8KHalf || f.dst != xq || f.rows != n || f.cols != k {
		return false
	}
	if stride < 0 && (f.cfg.noLay || f.kernel != "add_rms_norm_q8_k" || n > mgTN || k%256 != 0) {
		b.fuse = f // left for the f16 rows of mmg_xl (mmgRun)
		return false
	}
	na := len(f.args)
	if f.args[na-3] != i64(xs) { // the launch's Q8_K row stride
		return false
	}
	f.args = slices.Clone(f.args)
	f.args[na-2], f.args[na-1] = out, i64(stride)
	b.queue.pop()
	b.relaunch(&f)
	return true
}

// relaunch queues the launch a fuseQ8KHalf record describes.
func (b *Backend) relaunch(f *fusable) {
	b.launch(f.kernel, f.grid[0], f.grid[1], f.threads, f.grid[2], f.args...)
}

// fuseQ8 replaces the queued op that wrote x with its fused form that also quantizes x
// to Q8_0 (s1: Q8_1) into out, and reports whether it did: SwiGLU (swiglu_q8), Add +
// RMSNorm (add_rms_norm_q8) or attention_dec64/128. Without them a model of Q8_0
// weights ran a quant_q8 launch before its Q/K/V, output and gate/up products, each a
// link more in a decode step's chain of dependent launches.
func (b *Backend) fuseQ8(x *tensor, out uint64, stride, s1 int) bool {
	f, ok := b.take()
	if !ok || f.dst != x.ptr || f.rows != x.rows || f.cols != x.cols || x.cols%32 != 0 {
		return false
	}
	switch {
	case f.kind == fuseSwiGLU && x.stride == 4*x.cols && x.rows <= maxGridY:
		b.queue.pop()
		b.launch("swiglu_q8", (x.cols+255)/256, x.rows, 256, 0, append(f.args, i64(x.cols), out, i64(stride), i64(s1))...)
	case f.kind == fuseAddRMSNorm:
		b.queue.pop()
		b.launch("add_rms_norm_q8", x.rows, 1, addNormThreads, 4*x.cols, append(f.args, out, i64(stride), i64(s1))...)
	case f.kind == fuseAttention && f.q8t && x.stride == 4*x.cols:
		b.queue.pop()
		b.launch(f.from()+"_q8", f.grid[0], f.grid[1], f.threads, f.grid[2], f.q8Args(out, stride, s1)...)
	default:
		return false
	}
	return true
}

// pop removes the last queued launch.
func (q *batch) pop() {
	n := len(q.fns) - 1
	na := int(q.nargs[n])
	q.fns, q.dims, q.args = q.fns[:n], q.dims[:5*n], q.args[:len(q.args)-na]
	q.nargs, q.names, q.pdl = q.nargs[:n], q.names[:n], q.pdl[:n]
}
