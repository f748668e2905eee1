package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"ember/inference/quant"
	"ember/kernels/cpu"
)

// AttentionGroup and AttentionQ8Group (attngroup*.c, attnq8*.c): on every path, each
// head's output has the bits of a single-head call (Attention, AttentionQ8) on that head,
// for contiguous and paged caches; writes stay inside out and scratch; bad arguments
// panic.

var agGroups = []int{1, 2, 4, 5, 8}

var agLens = []int{1, 3, 17, 100, 257}

// agCache lays out the rows of a cache of nrows rows stride elements apart: data[t] at
// row rows[t] (row t when rows is nil); every other element is garbage().
func agCache[T any](data [][]T, stride, nrows int, rows []int32, garbage func() T) []T {
	c := make([]T, (nrows-1)*stride+len(data[0]))
	for i := range c {
		c[i] = garbage()
	}
	for t, d := range data {
		r := t
		if rows != nil {
			r = int(rows[t])
		}
		copy(c[r*stride:], d)
	}
	return c
}

// agPerm is a row list placing nkv positions at random among nkv+9 cache rows.
func agPerm(rng *rand.Rand, nkv int) []int32 {
	rows := make([]int32, nkv)
	for t, r := range rng.Perm(nkv + 9)[:nkv] {
		rows[t] = int32(r)
	}
	return rows
}

// agSingle is a single-head kernel on a cache of T.
type agSingle[T any] func(q []float32, kc []T, ks int, vc []T, vs int, rows []int32, nkv, hd, vhd int, scale float32, out, scratch []float32)

// agCheck lays out the rows kr and vr of a head's cache ks and vs apart, contiguous or
// paged (among 9 more rows, through a row list; all else garbage), and requires on every
// path, for each g of agGroups, every head of the grouped kernel (writing inside its
// guarded out and scratch) to have the bits of the single-head kernel on that head.
func agCheck[T any](t *testing.T, rng *rand.Rand, what string, kr, vr [][]T, ks, vs int, paged bool, garbage func() T,
	q []float32, hd, vhd int, scale float32, group func(cpu.Kernels) agCall[T], single func(cpu.Kernels) agSingle[T]) {
	t.Helper()
	nkv, nrows := len(kr), len(kr)
	var rows []int32
	if paged {
		rows, nrows = agPerm(rng, nkv), nkv+9
	}
	kc, vc := agCache(kr, ks, nrows, rows, garbage), agCache(vr, vs, nrows, rows, garbage)
	want, ss := make([]float32, vhd), make([]float32, cpu.AttentionGroupScratchLen(1, nkv, hd))
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		for _, g := range agGroups {
			at := fmt.Sprintf("%v g=%d hd=%d vhd=%d nkv=%d paged=%v %s", isa, g, hd, vhd, nkv, paged, what)
			out, checkOut := elemGuarded(g * vhd)
			scratch, checkScratch := elemGuarded(cpu.AttentionGroupScratchLen(g, nkv, hd))
			group(k)(q[:g*hd], g, kc, ks, vc, vs, rows, nkv, hd, vhd, scale, out, scratch)
			checkOut(t, at+" out")
			checkScratch(t, at+" scratch")
			for i := 0; i < g; i++ {
				single(k)(q[i*hd:(i+1)*hd], kc, ks, vc, vs, rows, nkv, hd, vhd, scale, want, ss)
				for d, w := range want {
					if got := out[i*vhd+d]; math.Float32bits(got) != math.Float32bits(w) {
						t.Fatalf("%s: head %d out[%d] = %g (%#x), single head %g (%#x)", at, i, d, got, math.Float32bits(got), w, math.Float32bits(w))
					}
				}
			}
		}
	}
}

func TestAttentionGroup(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	type shape struct{ hd, vhd int }
	// the brief's shapes, and odd ones for the tails of the SIMD paths (head dims not a
	// multiple of 8 or of 16)
	shapes := []shape{{64, 64}, {128, 128}, {96, 160}, {40, 24}, {37, 21}}
	garbage := func() uint16 { return uint16(rng.Uint32()) } // some are NaN or inf
	group := func(k cpu.Kernels) agCall[uint16] { return k.AttentionGroup }
	single := func(k cpu.Kernels) agSingle[uint16] { return k.Attention }
	for _, sh := range shapes {
		for _, nkv := range agLens {
			ks, vs := 3*sh.hd+5, 2*sh.vhd+3 // a head's rows in a cache of several heads
			kr, vr := make([][]uint16, nkv), make([][]uint16, nkv)
			for i := range kr {
				kr[i], vr[i] = elemRandF16(rng, sh.hd), elemRandF16(rng, sh.vhd)
			}
			q := elemRand(rng, cpu.GQAMax*sh.hd, 1.5)
			scale := float32(1 / math.Sqrt(float64(sh.hd)))
			for _, bias := range []bool{false, true} {
				if bias {
					// p is rounded to f16, which hides most changes to the last bit of a
					// score: these runs add 1024 to every dot (element 0 of q and k at 32),
					// so that the rounding of another order of summation shows in p
					for i := range kr {
						kr[i][0] = quant.FP32ToFP16(32)
					}
					for i := 0; i < cpu.GQAMax; i++ {
						q[i*sh.hd] = 32
					}
				}
				for _, paged := range []bool{false, true} {
					agCheck(t, rng, fmt.Sprintf("bias=%v", bias), kr, vr, ks, vs, paged, garbage, q, sh.hd, sh.vhd, scale, group, single)
				}
			}
		}
	}
}

func TestAttentionQ8Group(t *testing.T) {
	rng := rand.New(rand.NewPCG(73, 74))
	type shape struct{ hd, vhd int }
	shapes := []shape{{64, 64}, {128, 128}, {576, 512}, {96, 160}}
	garbage := func() byte { return byte(rng.Uint32()) } // f16 scales that may be NaN or inf
	group := func(k cpu.Kernels) agCall[byte] { return k.AttentionQ8Group }
	single := func(k cpu.Kernels) agSingle[byte] { return k.AttentionQ8 }
	for _, sh := range shapes {
		rbK, rbV := sh.hd/aq8QK*aq8Block, sh.vhd/aq8QK*aq8Block
		for _, nkv := range agLens {
			ks, vs := 3*rbK+7, 2*rbV+5 // bytes; odd offsets
			kr, vr := make([][]byte, nkv), make([][]byte, nkv)
			for i := range kr {
				kr[i], vr[i] = aq8Quantize(elemRand(rng, sh.hd, 1)), aq8Quantize(elemRand(rng, sh.vhd, 1))
			}
			q := elemRand(rng, cpu.GQAMax*sh.hd, 1.5)
			scale := float32(1 / math.Sqrt(float64(sh.hd)))
			for _, paged := range []bool{false, true} {
				agCheck(t, rng, "", kr, vr, ks, vs, paged, garbage, q, sh.hd, sh.vhd, scale, group, single)
			}
		}
	}
}

// agCall is a grouped kernel on a cache of T.
type agCall[T any] func(q []float32, g int, kc []T, ks int, vc []T, vs int, rows []int32, nkv, hd, vhd int, scale float32, out, scratch []float32)

// agPanics requires the calls that vary a valid one (3 heads over 5 positions, contiguous
// and through a row list; rows ks and vs apart) in one bad argument to panic with a
// kernels/cpu message, along with the cases of the caller's cache type (given the valid
// arguments), and the valid ones not to.
func agPanics[T any](t *testing.T, f agCall[T], hd, vhd, ks, vs int,
	more func(q []float32, kc, vc []T, out, scratch []float32) map[string]func()) {
	t.Helper()
	const g, nkv = 3, 5
	q, out, scratch := make([]float32, g*hd), make([]float32, g*vhd), make([]float32, g*(nkv+hd))
	kc, vc := make([]T, nkv*ks), make([]T, nkv*vs)
	rows := []int32{4, 3, 2, 1, 0}
	call := func(q []float32, g int, kc []T, ks int, vc []T, vs int, rows []int32, nkv int, out, scratch []float32) func() {
		return func() { f(q, g, kc, ks, vc, vs, rows, nkv, hd, vhd, 0.125, out, scratch) }
	}
	cases := map[string]func(){
		"g 0":                call(q, 0, kc, ks, vc, vs, nil, nkv, out, scratch),
		"g 9":                call(make([]float32, 9*hd), 9, kc, ks, vc, vs, nil, nkv, make([]float32, 9*vhd), make([]float32, 9*(nkv+hd))),
		"nkv 0":              call(q, g, kc, ks, vc, vs, nil, 0, out, scratch),
		"short q":            call(q[:g*hd-1], g, kc, ks, vc, vs, nil, nkv, out, scratch),
		"short k":            call(q, g, kc[:len(kc)-1], ks, vc, vs, nil, nkv, out, scratch),
		"short v":            call(q, g, kc, ks, vc[:len(vc)-1], vs, nil, nkv, out, scratch),
		"k stride":           call(q, g, kc, ks+1, vc, vs, nil, nkv, out, scratch),
		"negative stride":    call(q, g, kc, ks, vc, -1, nil, nkv, out, scratch),
		"short out":          call(q, g, kc, ks, vc, vs, nil, nkv, out[:g*vhd-1], scratch),
		"short scratch":      call(q, g, kc, ks, vc, vs, nil, nkv, out, scratch[:g*(nkv+hd)-1]),
		"short rows":         call(q, g, kc, ks, vc, vs, rows[:nkv-1], nkv, out, scratch),
		"row past the cache": call(q, g, kc, ks, vc, vs, []int32{5, 0, 1, 2, 3}, nkv, out, scratch),
		"negative row":       call(q, g, kc, ks, vc, vs, []int32{0, -1, 1, 2, 3}, nkv, out, scratch),
	}
	for name, c := range more(q, kc, vc, out, scratch) {
		cases[name] = c
	}
	for name, c := range cases {
		func() {
			defer func() {
				r := recover()
				if s, ok := r.(string); !ok || !strings.HasPrefix(s, "kernels/cpu: ") {
					t.Errorf("%s: recovered %v, want a kernels/cpu panic", name, r)
				}
			}()
			c()
		}()
	}
	call(q, g, kc, ks, vc, vs, nil, nkv, out, scratch)()
	call(q, g, kc, ks, vc, vs, rows, nkv, out, scratch)()
}

func TestAttentionGroupPanics(t *testing.T) {
	const hd, vhd = 24, 16
	k := cpu.New(cpu.Detect())
	agPanics(t, k.AttentionGroup, hd, vhd, hd, vhd, func(q []float32, kc, vc []uint16, out, scratch []float32) map[string]func() {
		return map[string]func(){
			"headDim 0":   func() { k.AttentionGroup(q, 3, kc, hd, vc, vhd, nil, 5, 0, vhd, 0.125, out, scratch) },
			"vHeadDim -1": func() { k.AttentionGroup(q, 3, kc, hd, vc, vhd, nil, 5, hd, -1, 0.125, out, scratch) },
		}
	})
}

func TestAttentionQ8GroupPanics(t *testing.T) {
	const hd, vhd = 64, 32
	const rbK, rbV = hd / aq8QK * aq8Block, vhd / aq8QK * aq8Block
	k := cpu.New(cpu.Detect())
	agPanics(t, k.AttentionQ8Group, hd, vhd, rbK, rbV, func(q []float32, kc, vc []byte, out, scratch []float32) map[string]func() {
		bad := func(hd, vhd int) func() {
			return func() { k.AttentionQ8Group(q, 3, kc, rbK, vc, rbV, nil, 5, hd, vhd, 0.125, out, scratch) }
		}
		return map[string]func(){"headDim 48": bad(48, vhd), "vHeadDim 40": bad(hd, 40), "headDim 0": bad(0, vhd)}
	})
}
