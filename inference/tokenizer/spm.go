package tokenizer

import "strings"

// symbol is a run of bytes text[start:start+n] in a merge chain; prev/next are the indices
// of its live neighbours (-1 at the ends). n == 0 marks a symbol merged into its left.
type symbol struct {
	start, n   int32
	prev, next int32
}

// utf8Len is the length of the UTF-8 sequence that lead byte c starts, from its high
// four bits only (llama.cpp's unicode_len_utf8): continuation bytes count as 1.
func utf8Len(c byte) int {
	switch c >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// encodeSPM appends the SentencePiece tokens of one text fragment, as llama.cpp's
// llm_tokenizer_spm_session:
//
//  1. prefix a space when asked, then replace every ' ' with U+2581 ("▁");
//  2. split into UTF-8 characters (by lead byte; a truncated last one is kept short);
//  3. queue every adjacent pair whose concatenation is a token, by that token's score;
//  4. repeatedly merge the best pair (highest score, then leftmost), skipping pairs
//     whose symbols changed since they were queued, and queue the new pairs formed
//     with the merged symbol's neighbours;
//  5. emit each final symbol as its token, or when it is not in the vocabulary as one
//     byte-fallback token <0xXX> per byte.
func (t *Tokenizer) encodeSPM(out []int32, frag string, spacePrefix bool) []int32 {
	text := frag
	if spacePrefix {
		text = " " + text
	}
	text = strings.ReplaceAll(text, " ", "\u2581")
	if text == "" {
		return out
	}

	syms := make([]symbol, 0, len(text))
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		i := int32(len(syms))
		syms = append(syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: i + 1})
		off += n
	}
	syms[len(syms)-1].next = -1

	// When no token has a U+2581 after a character other than U+2581 (t.spmSplit), no
	// merge can cross the boundary before a "▁" that follows another character, so the
	// chunks between such boundaries merge independently, in the same order as in one
	// queue. Small queues are much faster on long texts.
	var q bigramQueue
	lo := 0
	for hi := 1; hi <= len(syms); hi++ {
		if hi < len(syms) && !(t.spmSplit && isMark(text, syms[hi]) && !isMark(text, syms[hi-1])) {
			continue
		}
		t.mergeSPM(text, syms, int32(lo), int32(hi), &q)
		lo = hi
	}

	for i := int32(0); i != -1; i = syms[i].next {
		s := syms[i]
		piece := text[s.start : s.start+s.n]
		if id, ok := t.toID[piece]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(piece); j++ {
			if id := t.spmByte[piece[j]]; id != noToken {
				out = append(out, id)
			}
		}
	}
	return out
}

// spaceMark is the escaped space, U+2581.
const spaceMark = "\u2581"

func isMark(text string, s symbol) bool {
	return text[s.start:s.start+s.n] == spaceMark
}

// mergeSPM runs the merge queue over syms[lo:hi] (steps 3 and 4).
func (t *Tokenizer) mergeSPM(text string, syms []symbol, lo, hi int32, q *bigramQueue) {
	*q = (*q)[:0]
	tryAdd := func(l, r int32) {
		if l < lo || r < lo || l >= hi || r >= hi {
			return
		}
		s := syms[l].start
		size := syms[l].n + syms[r].n
		id, ok := t.toID[text[s:s+size]]
		if !ok {
			return
		}
		q.push(bigram{prio: t.scores[id], left: l, right: r, size: size})
	}
	for i := lo + 1; i < hi; i++ {
		tryAdd(i-1, i)
	}
	for len(*q) > 0 {
		b := q.pop()
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue // stale: one side was merged since this pair was queued
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if l.next >= 0 {
			syms[l.next].prev = b.left
		}
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}
}
