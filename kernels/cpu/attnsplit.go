package cpu

/*
#include "kernels.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// AttnSplitMax is the most query heads the phased attention (AttnScores, AttnValues)
// takes in one call.
const AttnSplitMax = 32

// AttnSplitMax is kernels.h's EMBER_ATTN_SPLIT_MAX.
var (
	_ [AttnSplitMax - C.EMBER_ATTN_SPLIT_MAX]struct{}
	_ [C.EMBER_ATTN_SPLIT_MAX - AttnSplitMax]struct{}
)

// The phases of AttentionGroup over an f16 cache, for callers that split one token's
// attention among threads: the scores of a range of positions, one head's
// probabilities, the outputs of a range of columns. Run in order over all positions,
// heads and columns, they give every head the bits of an Attention call on it (same
// ISA), for up to AttnSplitMax heads sharing the K and V rows (DeepSeek's latent
// attention: 16 heads over one 576-value row that is both K and V).

// AttnQ16 rounds q to f16 into q16 (the scores' query).
func (k Kernels) AttnQ16(q, q16 []float32) {
	need("AttnQ16 q16", len(q16), len(q))
	if len(q) > 0 {
		C.ember_attn_q16(C.int(k.isa), f32p(q), C.int64_t(len(q)), f32p(q16))
	}
}

// AttnScores writes s[i*nkv+t] = scale * dot(head i of q16, K row t) for the g heads of
// q16 (headDim floats apart, from AttnQ16) and the positions t in [t0, t1): t0 a
// multiple of 4, t1 <= nkv. K row t is kc[r*kStride:] with r = rows[t] (t when rows is
// nil).
func (k Kernels) AttnScores(q16 []float32, g int, kc []uint16, kStride int, rows []int32, t0, t1, nkv, headDim int, scale float32, s []float32) {
	const what = "AttnScores"
	splitHeads(what, g, headDim)
	if t0 < 0 || t0%4 != 0 || t1 <= t0 || t1 > nkv {
		panic(fmt.Sprintf("kernels/cpu: %s: positions [%d, %d) of %d (the first a multiple of 4)", what, t0, t1, nkv))
	}
	last, rp := splitRows(what, rows, t0, t1, kStride)
	need(what+" q16", len(q16), g*headDim)
	need(what+" k", len(kc), last*kStride+headDim)
	need(what+" s", len(s), (g-1)*nkv+t1)
	C.ember_attn_scores(C.int(k.isa), f32p(q16), C.int64_t(g), u16p(kc), C.int64_t(kStride), rp, C.int64_t(t0), C.int64_t(t1),
		C.int64_t(nkv), C.int64_t(headDim), C.float(scale), f32p(s))
}

// AttnProbs turns one head's scores s (all its positions) into its probabilities, in
// place, as Attention does: softmax with the sum in double, each rounded to f16.
func (k Kernels) AttnProbs(s []float32) {
	if len(s) > 0 {
		C.ember_attn_probs(C.int(k.isa), f32p(s), C.int64_t(len(s)))
	}
}

// AttnValues writes out[i*outStride+c] = sum over t < nkv of s[i*nkv+t] * V row t [c]
// for the g heads and the columns c in [c0, c1) of vHeadDim: c0 a multiple of 8, c1
// too or vHeadDim. V row t is vc[r*vStride:] as in AttnScores.
func (k Kernels) AttnValues(s []float32, g, nkv int, vc []uint16, vStride int, rows []int32, vHeadDim, c0, c1 int, out []float32, outStride int) {
	const what = "AttnValues"
	splitHeads(what, g, vHeadDim)
	if nkv <= 0 || c0 < 0 || c0%8 != 0 || c1 <= c0 || c1 > vHeadDim || (c1%8 != 0 && c1 != vHeadDim) {
		panic(fmt.Sprintf("kernels/cpu: %s: columns [%d, %d) of %d over %d positions", what, c0, c1, vHeadDim, nkv))
	}
	if outStride < c1 {
		panic(fmt.Sprintf("kernels/cpu: %s: out rows %d apart for columns to %d", what, outStride, c1))
	}
	last, rp := splitRows(what, rows, 0, nkv, vStride)
	need(what+" s", len(s), g*nkv)
	need(what+" v", len(vc), last*vStride+vHeadDim)
	need(what+" out", len(out), (g-1)*outStride+c1)
	C.ember_attn_values(C.int(k.isa), f32p(s), C.int64_t(g), C.int64_t(nkv), u16p(vc), C.int64_t(vStride), rp,
		C.int64_t(vHeadDim), C.int64_t(c0), C.int64_t(c1), f32p(out), C.int64_t(outStride))
}

func splitHeads(what string, g, dim int) {
	if g < 1 || g > AttnSplitMax || dim <= 0 {
		panic(fmt.Sprintf("kernels/cpu: %s: %d heads of %d (need 1 to %d)", what, g, dim, AttnSplitMax))
	}
}

// splitRows checks the row list for positions [t0, t1) (rows nil: contiguous) and the
// stride, and returns the last cache row read and rows for C.
func splitRows(what string, rows []int32, t0, t1, stride int) (int, *C.int32_t) {
	if stride < 0 {
		panic(fmt.Sprintf("kernels/cpu: %s: row stride %d", what, stride))
	}
	if rows == nil {
		return t1 - 1, nil
	}
	need(what+" rows", len(rows), t1)
	last := 0
	for _, r := range rows[t0:t1] {
		if r < 0 {
			panic(fmt.Sprintf("kernels/cpu: %s: cache row %d", what, r))
		}
		last = max(last, int(r))
	}
	return last, (*C.int32_t)(unsafe.Pointer(&rows[0]))
}
