package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// The fused launches of fuse.go and fuse_ops.go must give the bits of the separate
// kernels. Each test issues a sequence of ops on a backend that fuses and on one that
// does not (cuda.NoFusion), from the same inputs, and compares the outputs bit for bit
// and the launches the fused run saved.

// fuseEnv makes one run's tensors; its generator is seeded alike in both runs.
type fuseEnv struct {
	t   *testing.T
	be  *cuda.Backend
	rng *rand.Rand
}

func (e *fuseEnv) zeros(typ quant.Type, rows, cols int) backend.Tensor {
	x, err := e.be.New(typ, rows, cols)
	if err != nil {
		e.t.Fatal(err)
	}
	return x
}

// vals is an F32 tensor holding v.
func (e *fuseEnv) vals(rows, cols int, v []float32) backend.Tensor {
	x := e.zeros(quant.F32, rows, cols)
	e.be.WriteF32(x, v)
	return x
}

// randn is an F32 tensor of normal values of deviation s.
func (e *fuseEnv) randn(rows, cols int, s float64) backend.Tensor {
	return e.vals(rows, cols, e.normals(rows*cols, s))
}

// normals is n normal values of deviation s.
func (e *fuseEnv) normals(n int, s float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(e.rng.NormFloat64() * s)
	}
	return v
}

// ids is an I32 column holding v.
func (e *fuseEnv) ids(v ...int32) backend.Tensor {
	x := e.zeros(quant.I32, len(v), 1)
	e.be.WriteI32(x, v)
	return x
}

// q4k is a random Q4_K weight of rows x cols.
func (e *fuseEnv) q4k(rows, cols int) backend.Tensor { return e.weight(quant.Q4_K, rows, cols) }

// weight is a random weight of type typ, rows x cols.
func (e *fuseEnv) weight(typ quant.Type, rows, cols int) backend.Tensor {
	v := make([]float32, rows*cols)
	for i := range v {
		v[i] = float32(e.rng.NormFloat64() * 0.05)
	}
	rb, err := quant.RowBytes(typ, uint64(cols))
	if err != nil {
		e.t.Fatal(err)
	}
	data := make([]byte, rows*int(rb))
	if err := quant.Quantize(typ, v, data); err != nil {
		e.t.Fatal(err)
	}
	w, err := e.be.Weight(typ, rows, cols, data)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// bits reads x (F32, or F16 through GetRows) as float32 bit patterns.
func (e *fuseEnv) bits(x backend.Tensor) []uint32 {
	if x.Type() != quant.F32 {
		all := make([]int32, x.Rows())
		for i := range all {
			all[i] = int32(i)
		}
		f := e.zeros(quant.F32, x.Rows(), x.Cols())
		e.be.GetRows(f, x, e.ids(all...))
		x = f
	}
	v := make([]float32, x.Rows()*x.Cols())
	if err := e.be.ReadF32(context.Background(), x, v); err != nil {
		e.t.Fatal(err)
	}
	u := make([]uint32, len(v))
	for i, f := range v {
		u[i] = math.Float32bits(f)
	}
	return u
}

// checkFused runs build's ops fused and unfused and wants the same bits in every output
// and saved fewer launches in the fused run. build makes the inputs (host writes end
// any pattern, so they come first) and returns the ops and the tensors to compare.
func checkFused(t *testing.T, name string, saved int, build func(e *fuseEnv) (ops func(), outs []backend.Tensor)) {
	t.Helper()
	checkFusedOn(t, newOrSkip, name, saved, build)
}

// checkFusedOn is checkFused on backends that start tries.
func checkFusedOn(t *testing.T, start func(*testing.T) *cuda.Backend, name string, saved int,
	build func(e *fuseEnv) (ops func(), outs []backend.Tensor)) {
	t.Helper()
	var got [2][][]uint32
	var n [2]int
	var queued [2][]string // for the message: what the ops queued (a flush empties it)
	for i := range 2 {
		be := start(t)
		if i == 1 {
			cuda.NoFusion(be)
		}
		e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(5, 6))}
		ops, outs := build(e)
		if err := be.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		k0 := cuda.Launches(be)
		ops()
		n[i], queued[i] = cuda.Launches(be)-k0, cuda.Queued(be)
		for _, o := range outs {
			got[i] = append(got[i], e.bits(o))
		}
		if err := be.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n[1]-n[0] != saved {
		t.Errorf("%s: %d launches fused, %d unfused; want %d fewer (queued %v and %v)", name, n[0], n[1], saved, queued[0], queued[1])
	}
	for j := range got[0] {
		for i, w := range got[1][j] {
			if g := got[0][j][i]; g != w {
				t.Fatalf("%s: output %d [%d]: fused %g (%#x), unfused %g (%#x)", name, j, i,
					math.Float32frombits(g), g, math.Float32frombits(w), w)
			}
		}
	}
}

// TestFusedRoPE: RoPE of Q then of K (same positions and parameters) is one launch.
func TestFusedRoPE(t *testing.T) {
	const hd = 64
	pos := []int32{5, 1000, 77}
	ropes := []backend.RoPE{
		{Style: backend.RoPENormal, Dims: hd, HeadDim: hd, Base: 500000},
		{Style: backend.RoPENeoX, Dims: 32, HeadDim: hd, Base: 10000, FreqScale: 0.25, ExtFactor: 1, AttnFactor: 1,
			BetaFast: 32, BetaSlow: 1, OrigCtx: 4096},
		{Style: backend.RoPENormal, Dims: hd, HeadDim: hd, Base: 500000, AttnFactor: 0.9},
	}
	for _, rows := range []int{1, 3} {
		for ri, r := range ropes {
			checkFused(t, fmt.Sprintf("rows %d rope %d", rows, ri), 1, func(e *fuseEnv) (func(), []backend.Tensor) {
				q, k, p := e.randn(rows, 11*hd, 1), e.randn(rows, 3*hd, 1), e.ids(pos[:rows]...)
				if ri == 2 { // llama3-style frequency factors
					f := make([]float32, hd/2)
					for i := range f {
						f[i] = 1 + float32(i)/4
					}
					r.Factors = e.vals(1, hd/2, f)
				}
				return func() { e.be.RoPE(q, p, r); e.be.RoPE(k, p, r) }, []backend.Tensor{q, k}
			})
		}
	}
	// Not fused: one tensor twice, other positions, other parameters.
	r := ropes[0]
	checkFused(t, "same tensor", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		q, p := e.randn(3, 4*hd, 1), e.ids(pos...)
		return func() { e.be.RoPE(q, p, r); e.be.RoPE(q, p, r) }, []backend.Tensor{q}
	})
	checkFused(t, "other positions", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		q, k, p, p2 := e.randn(3, 4*hd, 1), e.randn(3, 2*hd, 1), e.ids(pos...), e.ids(pos...)
		return func() { e.be.RoPE(q, p, r); e.be.RoPE(k, p2, r) }, []backend.Tensor{q, k}
	})
	checkFused(t, "other parameters", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		q, k, p := e.randn(3, 4*hd, 1), e.randn(3, 2*hd, 1), e.ids(pos...)
		r2 := r
		r2.Base = 10000
		return func() { e.be.RoPE(q, p, r); e.be.RoPE(k, p, r2) }, []backend.Tensor{q, k}
	})
}

// TestFusedRoPESet: RoPE of one tensor, then SetRows of its rows, is one launch (rope2_set
// without Q or V: DeepSeek's q_pe rotated and placed into its query rows), F16 or F32
// destination, with YaRN; not when the destination overlaps the rotated rows.
func TestFusedRoPESet(t *testing.T) {
	r := backend.RoPE{Style: backend.RoPENormal, Dims: 64, HeadDim: 64, Base: 10000, FreqScale: 0.025, ExtFactor: 1,
		AttnFactor: 0.8, BetaFast: 32, BetaSlow: 1, OrigCtx: 4096}
	for _, rows := range []int{1, 48} {
		for _, dt := range []quant.Type{quant.F32, quant.F16} {
			checkFused(t, fmt.Sprintf("rows %d into %v", rows, dt), 1, func(e *fuseEnv) (func(), []backend.Tensor) {
				x, d := e.randn(rows, 64, 1), e.zeros(dt, 9*rows, 64)
				pos, at := make([]int32, rows), make([]int32, rows)
				for i := range pos {
					pos[i], at[i] = int32(3*i+1), int32(9*i)
				}
				p, ids := e.ids(pos...), e.ids(at...)
				return func() { e.be.RoPE(x, p, r); e.be.SetRows(d, x, ids) }, []backend.Tensor{x, d}
			})
		}
	}
	checkFused(t, "destination overlaps", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		d := e.randn(8, 64, 1)
		x, p, ids := e.be.View(d, 0, 2), e.ids(4, 5), e.ids(6, 7)
		return func() { e.be.RoPE(x, p, r); e.be.SetRows(d, x, ids) }, []backend.Tensor{d}
	})
}

// TestFusedSetRows: SetRows of K then of V (same row ids) is one launch.
func TestFusedSetRows(t *testing.T) {
	slots := []int32{7, 2, 11}
	const capRows, wk, wv = 16, 320, 192
	for _, rows := range []int{1, 3} {
		for _, vt := range []quant.Type{quant.F16, quant.F32} {
			checkFused(t, fmt.Sprintf("rows %d V cache %v", rows, vt), 1, func(e *fuseEnv) (func(), []backend.Tensor) {
				kc, vc := e.zeros(quant.F16, capRows, wk), e.zeros(vt, capRows, wv)
				k, v, s := e.randn(rows, wk, 1), e.randn(rows, wv, 1), e.ids(slots[:rows]...)
				return func() { e.be.SetRows(kc, k, s); e.be.SetRows(vc, v, s) }, []backend.Tensor{kc, vc}
			})
		}
	}
	// Not fused: one cache twice (the second write wins), other ids, a source that the
	// first SetRows writes.
	checkFused(t, "same cache", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		c, k, v, s := e.zeros(quant.F16, capRows, wk), e.randn(3, wk, 1), e.randn(3, wk, 1), e.ids(slots...)
		return func() { e.be.SetRows(c, k, s); e.be.SetRows(c, v, s) }, []backend.Tensor{c}
	})
	checkFused(t, "other ids", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		kc, vc := e.zeros(quant.F16, capRows, wk), e.zeros(quant.F16, capRows, wk)
		k, v, s, s2 := e.randn(3, wk, 1), e.randn(3, wk, 1), e.ids(slots...), e.ids(slots...)
		return func() { e.be.SetRows(kc, k, s); e.be.SetRows(vc, v, s2) }, []backend.Tensor{kc, vc}
	})
	checkFused(t, "source written", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		kc, vc := e.zeros(quant.F32, capRows, wk), e.zeros(quant.F16, capRows, wk)
		k, s := e.randn(3, wk, 1), e.ids(slots...)
		return func() { e.be.SetRows(kc, k, s); e.be.SetRows(vc, e.be.View(kc, 1, 3), s) }, []backend.Tensor{kc, vc}
	})
}

// TestNorm1Widths: add_rms_norm_q8_k_1's and rms_norm_q8_k_1's forms (quant.cu's
// norm1_row: rows of exactly 2,048 and 4,096 columns unrolled without guards, any other
// width up to 8,192 with them) against the separate kernels' bits, one row into one Q4_K
// product, the add's in place and not: the widths on both sides of each exact form.
func TestNorm1Widths(t *testing.T) {
	const m = 48
	for _, k := range []int{256, 1792, 2048, 2304, 3840, 4096, 4352, 8192} {
		for _, inPlace := range []bool{false, true} {
			checkFused(t, fmt.Sprintf("k %d in place %v", k, inPlace), 2, func(e *fuseEnv) (func(), []backend.Tensor) {
				a, b, w := e.randn(1, k, 2), e.randn(1, k, 2), e.randn(1, k, 1)
				s, n := e.zeros(quant.F32, 1, k), a
				if inPlace {
					s = a
				}
				d, wq := e.zeros(quant.F32, 1, m), e.weight(quant.Q4_K, m, k)
				return func() {
					e.be.Add(s, a, b)
					e.be.RMSNorm(n, s, w, 1e-5)
					e.be.MatMul(d, wq, n)
				}, []backend.Tensor{s, n, d}
			})
		}
		checkFused(t, fmt.Sprintf("k %d no add", k), 1, func(e *fuseEnv) (func(), []backend.Tensor) {
			x, w := e.randn(1, k, 2), e.randn(1, k, 1)
			n, d, wq := e.zeros(quant.F32, 1, k), e.zeros(quant.F32, 1, m), e.weight(quant.Q4_K, m, k)
			return func() {
				e.be.RMSNorm(n, x, w, 1e-5)
				e.be.MatMul(d, wq, n)
			}, []backend.Tensor{n, d}
		})
	}
}

// TestFusedAddRMSNorm: Add then RMSNorm of the sum is one launch, and with the next
// MatMul's rounding still one, wherever the norm writes: Q8_K for Q4_K weights
// (add_rms_norm_q8_k), Q8_0 for Q8_0 and Q8_1 for Q4_1 (add_rms_norm_q8).
func TestFusedAddRMSNorm(t *testing.T) {
	const m = 48
	type where int
	const (
		intoA   where = iota // Add(S, A, B); RMSNorm(A, S): the decoder's
		intoB                // Add(S, A, B); RMSNorm(B, S)
		inPlace              // Add(A, A, B); RMSNorm(A, A)
		apart                // Add(S, A, B); RMSNorm(N, S)
	)
	// One row of Q4_K products runs add_rms_norm_q8_k_1 (up to 8,192 wide), more rows
	// add_rms_norm_q8_k: both against the separate kernels' bits.
	for _, k := range []int{320, 2304, 4096, 8192} {
		for _, rows := range []int{1, 3} {
			for _, wh := range []where{intoA, intoB, inPlace, apart} {
				for _, mm := range []int{0, 1, 2, 3, 4} { // MatMuls after the norm: none, one, shared by two (Q4_K); one Q8_0; one Q4_1
					wt := map[int]quant.Type{1: quant.Q4_K, 2: quant.Q4_K, 3: quant.Q8_0, 4: quant.Q4_1}[mm]
					if wt == quant.Q4_K && k%256 != 0 || mm > 2 && wh != intoA && rows > 1 || k == 8192 && (rows > 1 || mm == 0 || mm > 2) {
						continue
					}
					name := fmt.Sprintf("k %d rows %d where %d matmuls %d", k, rows, wh, mm)
					saved := 1
					if mm > 0 {
						saved = 2 // add, rms_norm, quant_q8_k (quant_q8) -> add_rms_norm_q8_k (add_rms_norm_q8)
					}
					checkFused(t, name, saved, func(e *fuseEnv) (func(), []backend.Tensor) {
						a, b, w := e.randn(rows, k, 2), e.randn(rows, k, 2), e.randn(1, k, 1)
						s, n := e.zeros(quant.F32, rows, k), e.zeros(quant.F32, rows, k)
						switch wh {
						case intoA:
							n = a
						case intoB:
							n = b
						case inPlace:
							s, n = a, a
						}
						d1, d2 := e.zeros(quant.F32, rows, m), e.zeros(quant.F32, rows, 2*m)
						var w1, w2 backend.Tensor
						if mm > 0 {
							w1, w2 = e.weight(wt, m, k), e.weight(wt, 2*m, k)
						}
						ops := func() {
							e.be.Add(s, a, b)
							e.be.RMSNorm(n, s, w, 1e-5)
							switch mm {
							case 1, 3, 4:
								e.be.MatMul(d1, w1, n)
							case 2:
								backend.MatMulShared(e.be, n, []backend.Proj{{Dst: d1, W: w1}, {Dst: d2, W: w2}})
							}
						}
						return ops, []backend.Tensor{s, n, d1, d2}
					})
				}
			}
		}
	}
	// Not fused: a broadcast row, a row wider than the shared memory holds, a Sync between.
	checkFused(t, "broadcast", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		a, b, w, s := e.randn(3, 512, 2), e.randn(1, 512, 2), e.randn(1, 512, 1), e.zeros(quant.F32, 3, 512)
		return func() { e.be.Add(s, a, b); e.be.RMSNorm(a, s, w, 1e-5) }, []backend.Tensor{s, a}
	})
	checkFused(t, "wide", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		a, b, w, s := e.randn(2, 8448, 2), e.randn(2, 8448, 2), e.randn(1, 8448, 1), e.zeros(quant.F32, 2, 8448)
		return func() { e.be.Add(s, a, b); e.be.RMSNorm(a, s, w, 1e-5) }, []backend.Tensor{s, a}
	})
	checkFused(t, "sync between", 0, func(e *fuseEnv) (func(), []backend.Tensor) {
		a, b, w, s := e.randn(3, 512, 2), e.randn(3, 512, 2), e.randn(1, 512, 1), e.zeros(quant.F32, 3, 512)
		return func() {
			e.be.Add(s, a, b)
			if err := e.be.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			e.be.RMSNorm(a, s, w, 1e-5)
		}, []backend.Tensor{s, a}
	})
}

// TestFusedSwiGLUQ8: SwiGLU whose output a MatMul of Q8_0, Q5_0 or Q4_1 weights rounds
// to Q8_0 (Q8_1) is one launch with the rounding (swiglu_q8): a mixture of experts'
// down experts (DeepSeek-V2-Lite's Q5_0 and Q8_0), one row and a batch.
func TestFusedSwiGLUQ8(t *testing.T) {
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q5_0, quant.Q4_1} {
		for _, rows := range []int{1, 20} {
			checkFused(t, fmt.Sprintf("%v, %d rows", typ, rows), 1, func(e *fuseEnv) (func(), []backend.Tensor) {
				const k, m = 1408, 96
				g, u, d := e.randn(rows, k, 1), e.randn(rows, k, 1), e.zeros(quant.F32, rows, m)
				w := e.weight(typ, m, k)
				return func() {
					e.be.SwiGLU(g, g, u)
					e.be.MatMul(d, w, g)
				}, []backend.Tensor{g, d}
			})
		}
	}
}

// TestFusedSwiGLUQ8K: SwiGLU whose output a MatMul of Q4_K weights rounds to Q8_K is one
// launch (swiglu_q8_k, a warp a 256-element block) with the bits of swiglu_f32 and
// quant_q8_k (a CUDA block a 256-element block): one row, a few, and a batch of 64, over
// five blocks a row (the last CUDA block of each row partly idle), with ties of opposite
// signs for the largest magnitude (the first wins), an all-zero block and a NaN.
func TestFusedSwiGLUQ8K(t *testing.T) {
	for _, rows := range []int{1, 5, 64} {
		checkFused(t, fmt.Sprintf("%d rows", rows), 1, func(e *fuseEnv) (func(), []backend.Tensor) {
			const k, m = 1280, 48
			gv, uv := make([]float32, rows*k), make([]float32, rows*k)
			for i := range gv {
				gv[i], uv[i] = float32(e.rng.NormFloat64()), float32(e.rng.NormFloat64())
			}
			for i := 0; i < 256; i++ { // block 0 of row 0: equal magnitudes, the first negative
				gv[i], uv[i] = 1.5, float32(1-2*((i+1)%2))
			}
			for i := 256; i < 512; i++ { // block 1: all zero
				gv[i] = 0
			}
			if rows > 1 {
				gv[k+700] = float32(math.NaN()) // row 1, block 2: a NaN never wins
			}
			g, u, d := e.vals(rows, k, gv), e.vals(rows, k, uv), e.zeros(quant.F32, rows, m)
			w := e.q4k(m, k)
			return func() {
				e.be.SwiGLU(g, g, u)
				e.be.MatMul(d, w, g)
			}, []backend.Tensor{g, d}
		})
	}
}

// TestFusedGetRowsQ8K: GetRows from an F32 table into rows that a MatMul of Q4_K weights
// then reads as rows of another width (DeepSeek's latent attention output gathered from
// 64-value chunks into 512-value rows) is one launch with the Q8_K rounding; also chunks
// of 4 and 36 values (not whole groups of a lane's eight: get_rows_q8_k's other path).
func TestFusedGetRowsQ8K(t *testing.T) {
	for _, c := range []struct{ rows, ch int }{{16, 64}, {48, 64}, {3, 4}, {5, 36}} {
		checkFused(t, fmt.Sprintf("%d rows of %d-value chunks", c.rows, c.ch), 1, func(e *fuseEnv) (func(), []backend.Tensor) {
			const m = 64
			rows, ch := c.rows, c.ch
			k := 512
			if ch == 36 { // 64 chunks of 36 values: 2,304 = 9 x 256
				k = 2304
			}
			per := k / ch // chunks a row
			table := e.randn(rows*(per+1), ch, 1)
			lat, d := e.zeros(quant.F32, rows, k), e.zeros(quant.F32, rows, m)
			at := make([]int32, 0, rows*per)
			for r := 0; r < rows; r++ {
				for j := 1; j <= per; j++ {
					at = append(at, int32((per+1)*r+j))
				}
			}
			ids, w := e.ids(at...), e.q4k(m, k)
			return func() {
				e.be.GetRows(e.be.Reshape(lat, rows*per, ch), table, ids)
				e.be.MatMul(d, w, lat)
			}, []backend.Tensor{lat, d}
		})
	}
}
