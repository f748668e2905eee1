package cuda

import (
	"os"
	"slices"
	"strconv"
	"strings"

	"ember/inference/quant"
)

// The streamed batch-1 products (kernels/cuda/mvs.cu): one persistent block an SM whose
// producer warp copies tiles of weight rows into a ring of shared-memory stages with
// bulk copies, issued before the kernel waits for the one before it, while consumer
// warps take rows of each tile. Bit-equal to mv1 (mv1.cuh), which they may replace for
// Q4_K, Q6_K and Q8_0 weights where the ring fits.
//
// They are off unless $EMBER_CUDA_MVS is set: on the H200 they decode no faster than mv1
// (8B Q4_K_M tg128 within the spread of mv1's in session 11, with mvsn too; NOTES.md),
// and are kept, tested, as the base for fusing more of a decode layer into one kernel.

const (
	// MVSEnv names an environment variable: when set, batch-1 products of Q4_K, Q6_K and
	// Q8_0 weights run on mvs instead of mv1 (mmv_*_1, mmv_multi) where the ring fits.
	MVSEnv = "EMBER_CUDA_MVS"
	// MVSWarpsEnv names an environment variable: the consumer warps of an mvs block (4,
	// 8 or 16), instead of the most for which three stages fit.
	MVSWarpsEnv = "EMBER_CUDA_MVS_WARPS"
	// MVSRowsEnv names an environment variable: the rows an mvs consumer warp takes of
	// a tile (1 or 2), instead of the most for which three stages fit.
	MVSRowsEnv = "EMBER_CUDA_MVS_ROWS"
	// MVSSmemEnv names an environment variable: the KiB of shared memory an mvs block may
	// take (default mvsSmemMax), so that other kernels' blocks may share its SM.
	MVSSmemEnv = "EMBER_CUDA_MVS_SMEM"

	// mvsSmemMax is the dynamic shared memory an mvs block may take: Hopper's 227 KiB
	// less 1 KiB for the kernels' static shared memory (mvs_norm's).
	mvsSmemMax   = 227<<10 - 1<<10
	mvsMaxStages = 16  // MVS_MAXS
	mvsBarriers  = 256 // bytes of the full and empty barriers at the start
)

// mvsConf is the backend's streamed-product settings, read once at New.
type mvsConf struct {
	off   bool
	warps int // 0: choose
	rows  int // 0: choose
	smem  int
}

func mvsFromEnv() mvsConf {
	c := mvsConf{off: os.Getenv(MVSEnv) == "", smem: mvsSmemMax}
	if n, err := strconv.Atoi(os.Getenv(MVSWarpsEnv)); err == nil && (n == 4 || n == 8 || n == 16) {
		c.warps = n
	}
	if n, err := strconv.Atoi(os.Getenv(MVSRowsEnv)); err == nil && (n == 1 || n == 2) {
		c.rows = n
	}
	if n, err := strconv.Atoi(os.Getenv(MVSSmemEnv)); err == nil && n > 0 {
		c.smem = min(n<<10, mvsSmemMax)
	}
	return c
}

// mvsPlan is one mvs launch: NW consumer warps of R rows, S stages of SB bytes, smem
// bytes of dynamic shared memory, tiles tiles.
type mvsPlan struct {
	nw, r, s, sb, smem, tiles int
}

// name is the plan's kernel.
func (p mvsPlan) name() string {
	if p.r == 2 {
		return "mvs" + strconv.Itoa(p.nw) + "r2"
	}
	return "mvs" + strconv.Itoa(p.nw)
}

func align128(n int) int { return (n + 127) &^ 127 }

// planMVS sizes an mvs launch for the weights ws (one activation row of k columns);
// ok is false where the ring of at least two stages does not fit.
// With norm (mvsn) the K floats of the sum are held too, and Q8_0 is not taken.
func planMVS(c mvsConf, ws []*tensor, k int, norm bool) (mvsPlan, bool) {
	if c.off || len(ws) == 0 || len(ws) > 3 {
		return mvsPlan{}, false
	}
	has := map[quant.Type]bool{}
	maxws := 0
	for _, w := range ws {
		switch w.typ {
		case quant.Q4_K, quant.Q6_K, quant.Q8_0:
		default:
			return mvsPlan{}, false
		}
		if w.cols != k || w.stride%16 != 0 || partner(w.typ) != partner(ws[0].typ) {
			return mvsPlan{}, false
		}
		has[w.typ] = true
		maxws = max(maxws, w.stride)
	}
	copies := len(has) // Q4_K's and Q6_K's rows are swizzled apart; Q8_0 is alone
	if norm && (has[quant.Q8_0] || k%256 != 0) {
		return mvsPlan{}, false
	}
	fixed := align128(mvsBarriers+copies*actStride(partner(ws[0].typ), k)) + 128 // 128: the stages' alignment
	if norm {
		fixed += 4 * k
	}
	// The most rows a tile (more warps, then more rows a warp) with three stages; four
	// warps of one row with two.
	for _, c2 := range [][2]int{{16, 2}, {16, 1}, {8, 2}, {8, 1}, {4, 2}, {4, 1}} {
		nw, r := c2[0], c2[1]
		if (c.warps != 0 && nw != c.warps) || (c.rows != 0 && r != c.rows) {
			continue
		}
		sb := align128(nw * r * maxws)
		s := min(mvsMaxStages, (c.smem-fixed)/sb)
		if s >= 3 || (s >= 2 && (nw == 4 && r == 1 || c.warps != 0 || c.rows != 0)) {
			p := mvsPlan{nw: nw, r: r, s: s, sb: sb, smem: fixed + s*sb}
			for _, w := range ws {
				p.tiles += (w.rows + nw*r - 1) / (nw * r)
			}
			return p, true
		}
	}
	return mvsPlan{}, false
}

// mvs queues the streamed product of the one activation row xq (k columns, rounded to
// the weights' dot partner) with each ws[i] into ds[i]; false (nothing queued) where
// mvs does not take them. When the launch just queued is the add_rms_norm_q8_k that
// wrote xq (fuseNormQ8K), mvsn replaces both; its blocks count themselves on a word of
// the backend's counters (zero between launches, as split attention's).
func (b *Backend) mvs(xq uint64, k int, ws, ds []*tensor) bool {
	p, ok := planMVS(b.mvsc, ws, k, false)
	if !ok {
		return false
	}
	name := p.name()
	var norm []uint64
	if f, ok := b.take(); ok && f.kind == fuseNormQ8K && f.dst == xq && f.cols == k {
		if pn, ok := planMVS(b.mvsc, ws, k, true); ok {
			if c := b.counters(4); c != 0 {
				b.queue.pop()
				p, name = pn, "mvsn"+strings.TrimPrefix(pn.name(), "mvs")
				norm = append(slices.Clone(f.args), c)
			}
		}
	}
	args := []uint64{xq, i64(k), i64(p.s), i64(p.sb)}
	for j := 0; j < 3; j++ {
		if j >= len(ws) {
			args = append(args, 0, 0, 0, 0, 0)
			continue
		}
		args = append(args, ptr(ws[j]), i64(ws[j].stride), ptr(ds[j]), i64(ws[j].rows), i64(int(ws[j].typ)))
	}
	sms := smsOr(b.dev.SMs)
	b.launch(name, min(sms, p.tiles), 1, 32*p.nw+32, p.smem, append(args, norm...)...)
	return true
}
