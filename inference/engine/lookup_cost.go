package engine

import (
	"math"
	"time"
)

// What a draft token costs and what it is worth, measured as the engine runs, so that
// prompt lookup drafts only where it pays on this machine: on two CPU cores a step of
// four rows took ~1.8 times a step of one (AVX-512) or nearly three (AVX2), where on a
// GPU a few more rows should cost little (not measured yet). A draft token is worth the step it saves when it
// holds; the k-th token of a draft holds with probability about a^k, a the sequence's
// acceptance, so drafting k tokens pays while a^k exceeds the cost of a row as a
// fraction of a step.
const (
	// costBuckets: base step times are kept per count of decoding sequences, up to this.
	costBuckets = 8
	// costRowPrior is a draft row's cost as a fraction of a step before any is measured.
	costRowPrior = 0.3
	// accPrior is a sequence's acceptance before its first draft.
	accPrior = 0.6
	// emaStep and accStep weigh a new measurement in the running averages.
	emaStep, accStep = 0.2, 0.3
	// probeEvery: a sequence whose drafts do not pay still drafts one token this often
	// (steps), so that its acceptance can recover when its text starts repeating.
	probeEvery = 16
	// calibrateEvery: one decode step in this many drafts nothing, so that the base time
	// a row's cost is measured against is known (and kept current) even where every
	// other step drafts.
	calibrateEvery = 64
)

// specCost is the measured cost of draft rows (scheduler.spec).
type specCost struct {
	base  [costBuckets]float64 // a pure decode step's seconds without drafts, by decoding sequences
	row   float64              // a draft row's extra seconds as a fraction of base
	steps int                  // decode steps observed
}

// calibrating reports whether this step should draft nothing: the first decode steps
// until a base time is known, then one in calibrateEvery.
func (c *specCost) calibrating() bool {
	return c.steps%calibrateEvery == 0
}

func newSpecCost() specCost { return specCost{row: costRowPrior} }

// decodeOnly reports whether every entry of plan decodes (no prompt chunk); call it
// before postprocess moves the sequences on.
func decodeOnly(plan []planned) bool {
	for _, p := range plan {
		if len(p.q.tokens)-p.q.computed != 1 {
			return false
		}
	}
	return true
}

// observe records a step of plan, a decode-only one, that took d: without drafts into
// the base time of its count of sequences, with drafts into the cost of a row against
// that base.
func (c *specCost) observe(plan []planned, d time.Duration) {
	c.steps++
	drafts := 0
	for _, p := range plan {
		drafts += len(p.draft)
	}
	b := min(len(plan), costBuckets) - 1
	if b < 0 {
		return
	}
	sec := d.Seconds()
	switch {
	case drafts == 0:
		c.base[b] = ema(c.base[b], sec, emaStep)
	case c.base[b] > 0:
		r := (sec - c.base[b]) / (float64(drafts) * c.base[b])
		c.row = ema(c.row, min(max(r, 0), 2), emaStep)
	}
}

// ema moves avg toward x by w (to x when avg is unset).
func ema(avg, x, w float64) float64 {
	if avg == 0 {
		return x
	}
	return avg + w*(x-avg)
}

// length is how many draft tokens pay at acceptance a: the k with a^k above the cost of
// a row, at most k.
func (c *specCost) length(a float64, k int) int {
	if a <= c.row || k <= 0 {
		return 0
	}
	if a >= 1 || c.row <= 0 {
		return k
	}
	return min(k, int(math.Log(c.row)/math.Log(a)))
}

// accept updates q's acceptance after a draft of n tokens of which the first accepted
// held: accepted of the accepted+1 tokens tried (accepted of n when all held).
func (q *sequence) accept(n, accepted int) {
	tried := min(accepted+1, n)
	q.acc = ema(q.acc, float64(accepted)/float64(tried), accStep)
}
