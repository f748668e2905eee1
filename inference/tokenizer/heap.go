package tokenizer

// bigram is a candidate merge of two adjacent symbols, the one at index left and the one
// at index right (its next neighbour when the bigram was queued).
type bigram struct {
	prio  float32 // higher merges first: the token score (SentencePiece) or -rank (BPE)
	left  int32   // symbol index; ties in prio go to the smaller (leftmost) one
	right int32   // symbol index
	size  int32   // byte length of the merged text when queued; a mismatch marks it stale
	out   int32   // BPE: token id of the merged text (noToken if none); unused by SPM
}

// before reports whether a is popped before b: higher prio, then smaller left. This is
// llama.cpp's llm_bigram_spm/llm_bigram_bpe comparator for its std::priority_queue.
func (a bigram) before(b bigram) bool {
	return a.prio > b.prio || (a.prio == b.prio && a.left < b.left)
}

// bigramQueue is a binary heap of bigrams ordered by before.
type bigramQueue []bigram

func (q *bigramQueue) push(b bigram) {
	h := append(*q, b)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	*q = h
}

func (q *bigramQueue) pop() bigram {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
