package cuda

import (
	"fmt"
	"slices"
	"testing"

	"ember/inference/quant"
)

// TestFuseQueueNorm1: the residual add, norm and Q8_K rounding of one row (a decode
// step's, before Q4_K products) queue add_rms_norm_q8_k_1 (one block of 256 threads, no
// shared memory asked for, the Q8_K row last), and add_rms_norm_q8_k where the kernel
// does not take them: several rows, norm weights (or output) not 16-byte aligned, or
// NoNorm1Env's setting.
func TestFuseQueueNorm1(t *testing.T) {
	const m = 64
	for _, c := range []struct {
		rows, k   int
		noN1, odd bool // odd: the norm's weights 4 bytes past a 16-byte boundary
		want      string
	}{
		{1, 4096, false, false, "add_rms_norm_q8_k_1"},
		{1, 256, false, false, "add_rms_norm_q8_k_1"},
		{1, norm1MaxCols, false, false, "add_rms_norm_q8_k_1"},
		{3, 4096, false, false, "add_rms_norm_q8_k"},
		{1, 4096, true, false, "add_rms_norm_q8_k"},
		{1, 4096, false, true, "add_rms_norm_q8_k"},
	} {
		t.Run(fmt.Sprintf("%d rows of %d, no norm1 %v, odd %v", c.rows, c.k, c.noN1, c.odd), func(t *testing.T) {
			q := newQueueOnly(false)
			q.fuse.cfg.noN1 = c.noN1
			q.mvsc.off = true
			s, a, b, w := q.f32(c.rows, c.k), q.f32(c.rows, c.k), q.f32(c.rows, c.k), q.f32(1, c.k+4)
			if c.odd {
				w.ptr += 4
			}
			w.cols, w.stride, w.size = c.k, 4*c.k, 4*c.k
			d, wq := q.f32(c.rows, m), q.tensor(quant.Q4_K, m, c.k)
			q.Add(s, a, b)
			q.RMSNorm(a, s, w, 1e-5)
			q.MatMul(d, wq, a)
			n0 := int(q.queue.nargs[0])
			args, dims := slices.Clone(q.queue.args[:n0]), slices.Clone(q.queue.dims[:5])
			got := q.names()
			if len(got) != 2 || got[0] != c.want {
				t.Fatalf("queued %v, want %s and the product", got, c.want)
			}
			head := []uint64{s.ptr, a.ptr, b.ptr, a.ptr, w.ptr, uint64(c.k), f32(1e-5), 1 << 40}
			if c.want == "add_rms_norm_q8_k_1" {
				if !slices.Equal(args, head) {
					t.Errorf("args %v, want %v", args, head)
				}
				if dims[0] != 1 || dims[1] != 1 || dims[3] != 256 || dims[4] != 0 {
					t.Errorf("dims %v, want one block of 256 threads and no dynamic shared memory", dims)
				}
			} else if !slices.Equal(args[:len(head)], head) || dims[3] != addNormThreads {
				t.Errorf("args %v dims %v", args, dims)
			}
		})
	}
}

// TestFuseQueueRMSNorm1: a norm with no add before it and its Q8_K rounding (a decode
// step's first, after GetRows) queue rms_norm_q8_k_1 for one row (one block of 256
// threads, the Q8_K row last), and rms_norm_q8_k's blocks where that kernel does not take
// them: several rows, a row wider than norm1MaxCols, weights not 16-byte aligned, or
// NoRMSNorm1Env's setting.
func TestFuseQueueRMSNorm1(t *testing.T) {
	const m = 64
	for _, c := range []struct {
		rows, k    int
		noRN1, odd bool
		want       string
	}{
		{1, 4096, false, false, "rms_norm_q8_k_1"},
		{1, 2048, false, false, "rms_norm_q8_k_1"},
		{1, 256, false, false, "rms_norm_q8_k_1"},
		{1, norm1MaxCols, false, false, "rms_norm_q8_k_1"},
		{1, norm1MaxCols + 256, false, false, "rms_norm_q8_k"},
		{3, 4096, false, false, "rms_norm_q8_k"},
		{1, 4096, true, false, "rms_norm_q8_k"},
		{1, 4096, false, true, "rms_norm_q8_k"},
	} {
		t.Run(fmt.Sprintf("%d rows of %d, no rms norm1 %v, odd %v", c.rows, c.k, c.noRN1, c.odd), func(t *testing.T) {
			q := newQueueOnly(false)
			q.fuse.cfg.noRN1 = c.noRN1
			x, n, w := q.f32(c.rows, c.k), q.f32(c.rows, c.k), q.f32(1, c.k+4)
			if c.odd {
				w.ptr += 4
			}
			w.cols, w.stride, w.size = c.k, 4*c.k, 4*c.k
			d, wq := q.f32(c.rows, m), q.tensor(quant.Q4_K, m, c.k)
			q.RMSNorm(n, x, w, 1e-5)
			q.MatMul(d, wq, n)
			n0 := int(q.queue.nargs[0])
			args, dims := slices.Clone(q.queue.args[:n0]), slices.Clone(q.queue.dims[:5])
			got := q.names()
			if len(got) != 2 || got[0] != c.want {
				t.Fatalf("queued %v, want %s and the product", got, c.want)
			}
			head := []uint64{n.ptr, x.ptr, w.ptr, uint64(c.k), f32(1e-5), 1 << 40}
			if c.want == "rms_norm_q8_k_1" {
				if !slices.Equal(args, head) {
					t.Errorf("args %v, want %v", args, head)
				}
				if dims[0] != 1 || dims[1] != 1 || dims[3] != 256 || dims[4] != 0 {
					t.Errorf("dims %v, want one block of 256 threads and no dynamic shared memory", dims)
				}
			} else if !slices.Equal(args[:len(head)], head) || int(dims[0]) != c.k/256 || int(dims[1]) != c.rows {
				t.Errorf("args %v dims %v", args, dims)
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
