package cuda

import (
	"fmt"
	"slices"
	"testing"

	"ember/inference/quant"
)

// TestFuseQueueNorm1: one row's norm and Q8_K rounding (a decode step's, before Q4_K
// products) queue the one-block kernels (256 threads, no shared memory asked for, the
// Q8_K row last): add_rms_norm_q8_k_1 with the residual add before it, rms_norm_q8_k_1
// without (the step's first norm). The multi-block kernels take what those do not:
// several rows, a row wider than norm1MaxCols, norm weights not 16-byte aligned, or
// NoNorm1Env's (NoRMSNorm1Env's) setting.
func TestFuseQueueNorm1(t *testing.T) {
	const m = 64
	for _, c := range []struct {
		add      bool
		rows, k  int
		off, odd bool // off: the switch set; odd: the norm's weights 4 bytes past a 16-byte boundary
		want     string
	}{
		{true, 1, 4096, false, false, "add_rms_norm_q8_k_1"},
		{true, 1, 256, false, false, "add_rms_norm_q8_k_1"},
		{true, 1, norm1MaxCols, false, false, "add_rms_norm_q8_k_1"},
		{true, 3, 4096, false, false, "add_rms_norm_q8_k"},
		{true, 1, 4096, true, false, "add_rms_norm_q8_k"},
		{true, 1, 4096, false, true, "add_rms_norm_q8_k"},
		{false, 1, 4096, false, false, "rms_norm_q8_k_1"},
		{false, 1, 2048, false, false, "rms_norm_q8_k_1"},
		{false, 1, 256, false, false, "rms_norm_q8_k_1"},
		{false, 1, norm1MaxCols, false, false, "rms_norm_q8_k_1"},
		{false, 1, norm1MaxCols + 256, false, false, "rms_norm_q8_k"},
		{false, 3, 4096, false, false, "rms_norm_q8_k"},
		{false, 1, 4096, true, false, "rms_norm_q8_k"},
		{false, 1, 4096, false, true, "rms_norm_q8_k"},
	} {
		t.Run(fmt.Sprintf("add %v, %d rows of %d, off %v, odd %v", c.add, c.rows, c.k, c.off, c.odd), func(t *testing.T) {
			q := newQueueOnly(false)
			q.fuse.cfg.noN1, q.fuse.cfg.noRN1 = c.off && c.add, c.off && !c.add
			q.mvsc.off = true
			s, a, b, w := q.f32(c.rows, c.k), q.f32(c.rows, c.k), q.f32(c.rows, c.k), q.f32(1, c.k+4)
			if c.odd {
				w.ptr += 4
			}
			w.cols, w.stride, w.size = c.k, 4*c.k, 4*c.k
			d, wq := q.f32(c.rows, m), q.tensor(quant.Q4_K, m, c.k)
			head := []uint64{s.ptr, a.ptr, b.ptr, a.ptr, w.ptr, uint64(c.k), f32(1e-5), 1 << 40}
			if c.add {
				q.Add(s, a, b)
				q.RMSNorm(a, s, w, 1e-5)
			} else {
				q.RMSNorm(a, s, w, 1e-5)
				head = []uint64{a.ptr, s.ptr, w.ptr, uint64(c.k), f32(1e-5), 1 << 40}
			}
			q.MatMul(d, wq, a)
			n0 := int(q.queue.nargs[0])
			args, dims := slices.Clone(q.queue.args[:n0]), slices.Clone(q.queue.dims[:5])
			got := q.names()
			if len(got) != 2 || got[0] != c.want {
				t.Fatalf("queued %v, want %s and the product", got, c.want)
			}
			switch c.want {
			case "add_rms_norm_q8_k_1", "rms_norm_q8_k_1":
				if !slices.Equal(args, head) {
					t.Errorf("args %v, want %v", args, head)
				}
				if dims[0] != 1 || dims[1] != 1 || dims[3] != 256 || dims[4] != 0 {
					t.Errorf("dims %v, want one block of 256 threads and no dynamic shared memory", dims)
				}
			case "add_rms_norm_q8_k":
				if !slices.Equal(args[:len(head)], head) || dims[3] != addNormThreads {
					t.Errorf("args %v dims %v", args, dims)
				}
			default: // rms_norm_q8_k: a block a 256-element block of each row
				if !slices.Equal(args[:len(head)], head) || int(dims[0]) != c.k/256 || int(dims[1]) != c.rows {
					t.Errorf("args %v dims %v", args, dims)
				}
			}
		})
	}
}

// TestNorm1MaxColsMatchesQuant: the widest row the host gives add_rms_norm_q8_k_1
// (norm1MaxCols) is the kernel's ADD_NORM1_COLS, which sizes its shared row and its
// registers: a wider row would run past both, and only a GPU would show it.
func TestNorm1MaxColsMatchesQuant(t *testing.T) {
	if n := kernelDefine(t, "quant.cu", "ADD_NORM1_COLS"); n != norm1MaxCols || n > addNormMaxCols {
		t.Errorf("ADD_NORM1_COLS %d, norm1MaxCols %d, addNormMaxCols %d", n, norm1MaxCols, addNormMaxCols)
	}
}
