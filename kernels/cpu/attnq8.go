package cpu

/*
#include "attnq8.h"
*/
import "C"

// AttentionQ8ScratchLen is the number of scratch floats AttentionQ8 needs: the scores,
// then q rounded to Q8_0 (its headDim/32 scales and headDim int8 quants).
func AttentionQ8ScratchLen(nkv, headDim int) int { return nkv + headDim }

// AttentionQ8 is Attention over a Q8_0 cache (see attnq8.h), as llama.cpp's flash
// attention computes it for a q8_0 cache: q is rounded to Q8_0, the scores are block
// integer dots scaled by dK*dQ, and out = sum_t p_t v_t with p_t kept in f32. kc and vc
// start at this KV head's first block in row 0; position t is row rows[t], or row t when
// rows is nil (a contiguous cache), and rows are kStride and vStride BYTES apart. headDim
// and vHeadDim are positive multiples of 32; scratch holds at least nkv+headDim floats
// (AttentionQ8ScratchLen).
func (k Kernels) AttentionQ8(q []float32, kc []byte, kStride int, vc []byte, vStride int, rows []int32, nkv, headDim, vHeadDim int, scale float32, out, scratch []float32) {
	aq8Dims("AttentionQ8", headDim, vHeadDim)
	last, rp := attnCheck("AttentionQ8", 1, rows, nkv, kStride, vStride)
	need("AttentionQ8 q", len(q), headDim)
	need("AttentionQ8 k", len(kc), last*kStride+RowBytes(TypeQ8_0, headDim))
	need("AttentionQ8 v", len(vc), last*vStride+RowBytes(TypeQ8_0, vHeadDim))
	need("AttentionQ8 out", len(out), vHeadDim)
	need("AttentionQ8 scratch", len(scratch), AttentionQ8ScratchLen(nkv, headDim))
	C.ember_attention_q8(C.int(k.isa), f32p(q), bytep(kc), C.int64_t(kStride), bytep(vc), C.int64_t(vStride), rp,
		C.int64_t(nkv), C.int64_t(headDim), C.int64_t(vHeadDim), C.float(scale), f32p(out), f32p(scratch))
}
