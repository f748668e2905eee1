package cuda

import (
	"fmt"
	"time"

	"ember/inference/quant"
)

// Two projections as one cuBLASLt product.
//
// The projections of a MatMulShared read the same activation rows. Two of one shape
// whose weights are f16 (their copies, f16copy.go, or F16 weights) and one chunk each
// can go to cuBLASLt as one strided batch of two: item 1's weights and output at fixed
// distances from item 0's, the activation rows shared (B's stride 0). That is Llama's
// gate and up at 48+ rows (each alone ran on 112 CTAs of an H200's 132 SMs, ~34 us,
// session 15's profile), and K and V in prompts. One call and one grid instead of two;
// the sums are cuBLASLt's either way (f32 accumulation; the algorithm may differ, so the
// bits may too).
//
// Status: written in session 15, first run on a GPU in session 16, on by default since
// (session 16, H200, same call: 8B 64 streams 7,420 / 7,117 against 6,905 / 7,019
// without; pp512 31,963 against 30,154; V2-Lite 64 streams 5,614 against 5,546).
// Item 0 is the projection whose weights lie first, so A's stride is positive; outputs
// that lie the other way round are no pair (a negative batch stride: before they were
// refused, pairs in prompts and V2-Lite's decode failed with EXECUTION_FAILED). Whether
// two projections pair depends on where the allocator put their copies and outputs.
// A batch the library refuses (its heuristic fails or has no algorithm) is remembered
// and runs as two calls, with no failure.

// LtNoPairsEnv names an environment variable: when set, MatMulShared never runs two
// projections as one batched product (for timing against the pairs).
const LtNoPairsEnv = "EMBER_CUDA_LT_NO_PAIRS"

// ltWeights is the f16 weight rows a job's one product reads (its copy, or F16 weights
// in place), 0 when it has none (weights dequantized per product, or several chunks).
func ltWeights(j *ltJob) uint64 {
	switch {
	case len(j.plans) != 1:
		return 0
	case j.w.f16 != 0:
		return j.w.f16
	case j.w.typ == quant.F16:
		return j.w.ptr
	}
	return 0
}

// ltPairKey is the plan key of jobs j0 and j1 as one batched product, and the weights
// and output of its item 0 (the job whose weights lie first); ok false when they cannot
// be one: another shape, weights not f16 in one chunk, distances that are not whole
// elements, or outputs that overlap.
func ltPairKey(j0, j1 *ltJob) (key ltKey, a, d uint64, ok bool) {
	a0, a1 := ltWeights(j0), ltWeights(j1)
	if a0 == 0 || a1 == 0 || a0 == a1 {
		return ltKey{}, 0, 0, false
	}
	if a1 < a0 {
		j0, j1, a0, a1 = j1, j0, a1, a0
	}
	k0, k1 := j0.plans[0].key, j1.plans[0].key
	if k0.m != k1.m || k0.n != k1.n || k0.k != k1.k || k0.lda != k1.lda || k0.ldb != k1.ldb || k0.ldd != k1.ldd {
		return ltKey{}, 0, 0, false
	}
	d0, d1 := j0.d.ptr, j1.d.ptr
	if d1 < d0 {
		return ltKey{}, 0, 0, false // outputs the other way round from the weights: a negative stride
	}
	sa, sd := int64(a1-a0), int64(d1-d0)
	if sa%2 != 0 || sd%4 != 0 {
		return ltKey{}, 0, 0, false
	}
	sa, sd = sa/2, sd/4
	if span := int64(k0.ldd) * int64(k0.n); sd < span {
		return ltKey{}, 0, 0, false // the outputs overlap
	}
	key = k0
	key.alA, key.alD = min(align(a0), align(a1)), min(align(d0), align(d1))
	key.batch, key.sa, key.sd = 2, sa, sd
	return key, a0, d0, true
}

// ltRunPair runs jobs j0 and j1 (products of the same activation rows xh) as one
// batched product when they allow it, and reports whether it did (having done nothing
// when not). The caller asks only with pairs on (b.lt.pairs).
func (b *Backend) ltRunPair(j0, j1 *ltJob, xh uint64) bool {
	key, a, d, ok := ltPairKey(j0, j1)
	if !ok {
		return false
	}
	p := b.ltPlanFor(key, false)
	if p == nil || p.c == nil {
		return false
	}
	if xh == 0 || b.err != nil {
		return true // a failure is recorded: nothing runs
	}
	t0 := time.Now()
	if !b.ltIssue(p, a, xh, d, func() string {
		return fmt.Sprintf("a pair of %v %dx%d weights, %d activation rows", j0.w.typ, key.m, key.k, key.n)
	}) {
		return true
	}
	b.lt.products += 2
	b.lt.paired += 2
	if b.prof != nil {
		b.ltProfiled(t0, fmt.Sprintf("cublasLt pair %v %dx%d, %d rows", j0.w.typ, key.m, key.k, key.n))
	}
	return true
}
