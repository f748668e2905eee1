package cpu

/*
#include "kernels.h"
#include "attnq8.h"
*/
import "C"

import (
	"fmt"
)

// GQAMax is the most query heads AttentionGroup and AttentionQ8Group take in one call.
const GQAMax = 8

// GQAMax is kernels.h's EMBER_GQA_MAX (an array of negative length does not compile).
var (
	_ [GQAMax - C.EMBER_GQA_MAX]struct{}
	_ [C.EMBER_GQA_MAX - GQAMax]struct{}
)

// AttentionGroupScratchLen is the number of scratch floats AttentionGroup and
// AttentionQ8Group need for g heads: g*(nkv+headDim) (for g = 1, what Attention and
// AttentionQ8 need).
func AttentionGroupScratchLen(g, nkv, headDim int) int { return g * (nkv + headDim) }

// AttentionGroup is Attention for the g query heads (1 <= g <= GQAMax) that share one
// KV head in grouped-query attention, reading each K and V row once for all of them: q
// holds the g heads one after another (g*headDim floats) and head i's output goes to
// out[i*vHeadDim:(i+1)*vHeadDim]. Every head's output has the bits of an Attention call
// on that head (same ISA). scratch holds at least AttentionGroupScratchLen(g, nkv,
// headDim) floats.
func (k Kernels) AttentionGroup(q []float32, g int, kc []uint16, kStride int, vc []uint16, vStride int, rows []int32, nkv, headDim, vHeadDim int, scale float32, out, scratch []float32) {
	const what = "AttentionGroup"
	if headDim <= 0 || vHeadDim <= 0 {
		panic(fmt.Sprintf("kernels/cpu: %s: head dims %d and %d", what, headDim, vHeadDim))
	}
	last, rp := attnCheck(what, g, rows, nkv, kStride, vStride)
	need(what+" q", len(q), g*headDim)
	need(what+" k", len(kc), last*kStride+headDim)
	need(what+" v", len(vc), last*vStride+vHeadDim)
	need(what+" out", len(out), g*vHeadDim)
	need(what+" scratch", len(scratch), AttentionGroupScratchLen(g, nkv, headDim))
	C.ember_attention_group(C.int(k.isa), f32p(q), C.int64_t(g), u16p(kc), C.int64_t(kStride), u16p(vc), C.int64_t(vStride), rp,
		C.int64_t(nkv), C.int64_t(headDim), C.int64_t(vHeadDim), C.float(scale), f32p(out), f32p(scratch))
}

// AttentionQ8Group is AttentionQ8 for the g query heads (1 <= g <= GQAMax) that share
// one KV head, reading each K and V row once for all of them, with AttentionGroup's
// layout of q and out; every head's output has the bits of an AttentionQ8 call on that
// head (same ISA). headDim and vHeadDim are positive multiples of 32; scratch holds at
// least AttentionGroupScratchLen(g, nkv, headDim) floats.
func (k Kernels) AttentionQ8Group(q []float32, g int, kc []byte, kStride int, vc []byte, vStride int, rows []int32, nkv, headDim, vHeadDim int, scale float32, out, scratch []float32) {
	const what = "AttentionQ8Group"
	aq8Dims(what, headDim, vHeadDim)
	last, rp := attnCheck(what, g, rows, nkv, kStride, vStride)
	need(what+" q", len(q), g*headDim)
	need(what+" k", len(kc), last*kStride+RowBytes(TypeQ8_0, headDim))
	need(what+" v", len(vc), last*vStride+RowBytes(TypeQ8_0, vHeadDim))
	need(what+" out", len(out), g*vHeadDim)
	need(what+" scratch", len(scratch), AttentionGroupScratchLen(g, nkv, headDim))
	C.ember_attention_q8_group(C.int(k.isa), f32p(q), C.int64_t(g), bytep(kc), C.int64_t(kStride), bytep(vc), C.int64_t(vStride), rp,
		C.int64_t(nkv), C.int64_t(headDim), C.int64_t(vHeadDim), C.float(scale), f32p(out), f32p(scratch))
}

// attnCheck checks the arguments the attention kernels share (what names the caller in
// the panics): 1 <= g <= GQAMax heads, nkv > 0 positions, row strides >= 0, and rows
// (nil for a contiguous cache) holding nkv rows >= 0. It returns the last cache row read
// and rows for C.
func attnCheck(what string, g int, rows []int32, nkv, kStride, vStride int) (int, *C.int32_t) {
	if g < 1 || g > GQAMax {
		panic(fmt.Sprintf("kernels/cpu: %s: %d query heads, need 1 to %d", what, g, GQAMax))
	}
	if nkv <= 0 {
		panic(fmt.Sprintf("kernels/cpu: %s over no positions", what))
	}
	if kStride < 0 || vStride < 0 {
		panic(fmt.Sprintf("kernels/cpu: %s: row strides %d and %d", what, kStride, vStride))
	}
	return splitRows(what, rows, 0, nkv, 0)
}

// aq8Dims panics unless the head dims of a Q8_0 cache are positive multiples of 32.
func aq8Dims(what string, headDim, vHeadDim int) {
	if headDim <= 0 || headDim%32 != 0 || vHeadDim <= 0 || vHeadDim%32 != 0 {
		panic(fmt.Sprintf("kernels/cpu: %s: head dims %d and %d, need positive multiples of 32", what, headDim, vHeadDim))
	}
}
