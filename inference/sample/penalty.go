package sample

import "math"

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

func (p Penalties) active() bool {
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
func (h *history) apply(logits []float32, p Penalties) {
	for id, n := range h.counts {
		if int(id) >= len(logits) || id < 0 {
			continue
		}
		v := logits[id]
		if p.Repeat != 0 && p.Repeat != 1 {
			if v > 0 {
				v /= p.Repeat
			} else {
				v *= p.Repeat
			}
		}
		v -= p.Frequency*float32(n) + p.Presence
		logits[id] = v
	}
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
