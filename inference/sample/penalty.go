package sample

import (
	"math"
	"slices"
)

// Penalties discourage repetition, applied to the logits before sampling.
type Penalties struct {
	// Repeat divides positive logits (multiplies negative ones) of tokens seen in the
	// last LastN tokens, as llama.cpp's repeat penalty does; 0 or 1 is off.
	Repeat float32
	// Presence and Frequency subtract, OpenAI style, Presence once for every token seen
	// and Frequency times the number of times it was seen; 0 is off.
	Presence, Frequency float32
	// LastN is the window of recent tokens considered; 0 means 64, -1 the whole history.
	LastN int
}

// window is the window's length for history.add: LastN, 64 for 0.
func (p Penalties) window() int {
	if p.LastN == 0 {
		return 64
	}
	return p.LastN
}

// Active reports whether p changes any logit.
func (p Penalties) Active() bool {
	return (p.Repeat != 0 && p.Repeat != 1) || p.Presence != 0 || p.Frequency != 0
}

// history counts the recent tokens a sampler has accepted.
type history struct {
	window []int32 // ring buffer of the last LastN tokens (all of them when LastN < 0)
	next   int
	counts map[int32]int
}

func (h *history) add(id int32, lastN int) {
	if h.counts == nil {
		h.counts = map[int32]int{}
	}
	if lastN < 0 || len(h.window) < lastN {
		h.window = append(h.window, id)
	} else if lastN > 0 {
		old := h.window[h.next]
		if h.counts[old]--; h.counts[old] == 0 {
			delete(h.counts, old)
		}
		h.window[h.next] = id
		h.next = (h.next + 1) % lastN
	} else {
		return
	}
	h.counts[id]++
}

// apply penalizes logits in place.
func (h *history) apply(logits []float32, p Penalties) { penalizeCounts(logits, p, h.counts) }

// penalizeCounts applies p to logits (in place) for each token of counts, seen as many
// times as it counts; tokens outside logits are left out.
func penalizeCounts(logits []float32, p Penalties, counts map[int32]int) {
	for id, n := range counts {
		if id >= 0 && int(id) < len(logits) {
			logits[id] = p.penalize(logits[id], n)
		}
	}
}

// penalize is a logit v of a token seen n times, penalized: the repeat penalty, then
// Frequency n + Presence subtracted, each operation rounded to float32 apart (never
// fused: kernels/cuda/sample_row.cu's sample_penalize_f32 does the same operations).
func (p Penalties) penalize(v float32, n int) float32 {
	if p.Repeat != 0 && p.Repeat != 1 {
		if v > 0 {
			v /= p.Repeat
		} else {
			v = float32(v * p.Repeat) // rounded here: Go may fuse across statements
		}
	}
	return v - (float32(p.Frequency*float32(n)) + p.Presence)
}

// aheadSeen is the window's tokens that stay in it when one more is added (all of them
// but the oldest when it is full): with that one, the tokens a draw one token ahead is
// penalized for.
func (h *history) aheadSeen(lastN int) []int32 {
	s := h.seen(lastN)
	if lastN > 0 && len(s) == lastN {
		return s[1:]
	}
	return s
}

// seen returns the window's tokens, oldest first.
func (h *history) seen(lastN int) []int32 {
	if lastN < 0 || len(h.window) < lastN {
		return slices.Clone(h.window)
	}
	out := make([]int32, 0, lastN)
	for i := range lastN {
		out = append(out, h.window[(h.next+i)%lastN])
	}
	return out
}

// penalizeSeen applies p to row (in place) for the tokens of seen, each as often as it
// occurs there: history.apply for a history holding them.
func penalizeSeen(row []float32, p Penalties, seen []int32) {
	counts := map[int32]int{}
	for _, id := range seen {
		counts[id]++
	}
	penalizeCounts(row, p, counts)
}

// TokenLogprob is the log-probability of a token under the model's distribution
// (temperature 1, before penalties and filters).
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// Logprobs returns the log-probability of id and the top k alternatives, most likely
// first (k may be 0).
func Logprobs(logits []float32, id int32, k int) (TokenLogprob, []TokenLogprob) {
	maxL := float32(math.Inf(-1))
	for _, v := range logits {
		if v > maxL {
			maxL = v
		}
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v - maxL))
	}
	lse := float64(maxL) + math.Log(sum)
	lp := func(i int32) float32 { return float32(float64(logits[i]) - lse) }
	chosen := TokenLogprob{ID: id, Logprob: lp(id)}
	if k <= 0 {
		return chosen, nil
	}
	top := make([]TokenLogprob, 0, k+1)
	for i, v := range logits {
		if len(top) == k && v <= logits[top[k-1].ID] {
			continue
		}
		// insertion into the sorted top list
		j := len(top)
		if j < k {
			top = append(top, TokenLogprob{})
		} else {
			j = k - 1
		}
		for j > 0 && logits[top[j-1].ID] < v {
			top[j] = top[j-1]
			j--
		}
		top[j] = TokenLogprob{ID: int32(i)}
	}
	for i := range top {
		top[i].Logprob = lp(top[i].ID)
	}
	return chosen, top
}
