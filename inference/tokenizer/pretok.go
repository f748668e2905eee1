package tokenizer

import "fmt"

// Pre-tokenizers split a text fragment into words before BPE, as llama.cpp's
// unicode_regex_split: a pre-tokenizer is a chain of patterns; the text starts as one
// segment, and each pattern splits every segment into its matches and the gaps between
// them (std::regex_iterator semantics: leftmost match, then search on from its end).
//
// Go's regexp has no lookahead, so every pattern is a hand-written matcher over code
// points. The GPT-2 and Llama-3 patterns copy llama.cpp's own scanners
// (unicode_regex_split_custom_gpt2/_llama3); the others follow ECMAScript regex
// semantics on llama.cpp's "collapsed" text, where a code point >= 128 stands for its
// category (White_Space first) and \p{P}, \p{S} on ASCII are llama.cpp's fixed sets.

// matcher returns the end (> i) of the pattern's match starting exactly at seg[i], or -1.
// The segment end acts as the end of input for lookahead and '$'.
type matcher func(seg []rune, i int) int

// stage is one pattern of a chain: it maps segment lengths (in code points, summing to
// len(cps)) to finer ones, appended to dst.
type stage func(cps []rune, segs, dst []int) []int

// matchStage makes a stage that splits each segment at the matches of m.
func matchStage(m matcher) stage {
	return func(cps []rune, segs, dst []int) []int {
		start := 0
		for _, n := range segs {
			seg := cps[start : start+n]
			last := 0
			for i := 0; i < n; {
				e := m(seg, i)
				if e <= i {
					i++
					continue
				}
				if i > last {
					dst = append(dst, i-last) // unmatched gap
				}
				dst = append(dst, e-i)
				last, i = e, e
			}
			if last < n {
				dst = append(dst, n-last)
			}
			start += n
		}
		return dst
	}
}

// trailingSpaceStage is the pattern `\s+$`: it splits off each segment's trailing
// whitespace (the leftmost match of \s+$ starts where that run starts).
func trailingSpaceStage(cps []rune, segs, dst []int) []int {
	start := 0
	for _, n := range segs {
		p := n
		for p > 0 && class(cps[start+p-1]) == cSpace {
			p--
		}
		if p > 0 && p < n {
			dst = append(dst, p, n-p)
		} else {
			dst = append(dst, n)
		}
		start += n
	}
	return dst
}

// pretokenizer is a named chain of stages.
type pretokenizer struct {
	name   string
	stages []stage
}

// split returns the word lengths (in code points) of cps. segs and tmp are scratch
// buffers; the result uses one of them, and the other is returned for reuse.
func (p *pretokenizer) split(cps []rune, segs, tmp []int) (words, spare []int) {
	segs = append(segs[:0], len(cps))
	for _, st := range p.stages {
		tmp = st(cps, segs, tmp[:0])
		segs, tmp = tmp, segs
	}
	return segs, tmp
}

// preset describes one tokenizer.ggml.pre value: its chain and the vocabulary flags that
// llama.cpp sets along with it.
type preset struct {
	chain        *pretokenizer
	ignoreMerges bool // a word found whole in the vocabulary is one token (Llama 3)
	addBOS       bool // default for add_bos_token (the GGUF key overrides it)
}

// lookupPreset maps tokenizer.ggml.pre to its preset, as llama.cpp's llama_vocab::load.
func lookupPreset(pre string) (preset, error) {
	switch pre {
	case "", "default":
		return preset{chain: preDefault}, nil
	case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2":
		return preset{chain: preLlama3, ignoreMerges: true, addBOS: true}, nil
	case "dbrx", "smaug-bpe":
		return preset{chain: preLlama3}, nil
	case "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v1-en", "jina-v2-es",
		"jina-v2-de", "jina-v2-code", "roberta-bpe", "a.x-4.0", "mellum", "mpt", "olmo", "jais":
		return preset{chain: preGPT2}, nil
	case "qwen2", "deepseek-r1-qwen", "stablelm2", "megrez":
		return preset{chain: preQwen2}, nil
	case "deepseek-llm":
		return preset{chain: preDeepseekLLM}, nil
	case "deepseek-coder":
		return preset{chain: preDeepseekCoder}, nil
	case "deepseek-v3":
		return preset{chain: preDeepseekV3}, nil
	case "starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b":
		return preset{chain: preStarcoder}, nil
	}
	return preset{}, fmt.Errorf("unsupported pre-tokenizer %q", pre)
}

var (
	// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
	preGPT2 = &pretokenizer{"gpt-2", []stage{matchStage(matchGPT2)}}

	// Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
	// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
	preLlama3 = &pretokenizer{"llama3", []stage{matchStage(func(s []rune, i int) int { return matchLlama3(s, i, 3) })}}

	// Qwen2: as Llama 3 with \p{N} (one digit per word).
	preQwen2 = &pretokenizer{"qwen2", []stage{matchStage(func(s []rune, i int) int { return matchLlama3(s, i, 1) })}}

	// llama.cpp's default: [\p{P}\$\+<=>\^~\|]+ , GPT-2, \p{N}+ , [0-9][0-9][0-9]
	preDefault = &pretokenizer{"default", []stage{
		matchStage(runOf(func(r rune) bool {
			c := class(r)
			return c == cPunct || r == '$' || r == '+' || r == '<' || r == '=' || r == '>' || r == '^' || r == '~' || r == '|'
		}, 0)),
		matchStage(matchGPT2),
		matchStage(runOf(isNumber, 0)),
		matchStage(runOf(func(r rune) bool { return r >= '0' && r <= '9' }, 3, 3)),
	}}

	// StarCoder and relatives: \p{N} , then GPT-2.
	preStarcoder = &pretokenizer{"starcoder", []stage{matchStage(runOf(isNumber, 1)), matchStage(matchGPT2)}}
)

func isNumber(r rune) bool { return class(r) == cNumber }

// runOf matches a run of code points satisfying in: at most maxLen when maxLen > 0, and
// at least minLen[0] when given (a shorter run does not match).
func runOf(in func(rune) bool, maxLen int, minLen ...int) matcher {
	return func(s []rune, i int) int {
		j := i
		for j < len(s) && (maxLen <= 0 || j-i < maxLen) && in(s[j]) {
			j++
		}
		if j == i || (len(minLen) > 0 && j-i < minLen[0]) {
			return -1
		}
		return j
	}
}

// classAt is the class of s[i], or cNone past the segment end.
func classAt(s []rune, i int) uint8 {
	if i >= len(s) {
		return cNone
	}
	return class(s[i])
}

// cNone is the class of a position past the segment end (llama.cpp's empty flags).
const cNone uint8 = 0xFF

// matchContraction matches 's 't 're 've 'm 'll 'd at i; fold also accepts upper case.
func matchContraction(s []rune, i int, fold bool) int {
	if s[i] != '\'' || i+1 >= len(s) {
		return -1
	}
	lower := func(r rune) rune {
		if fold && r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	switch lower(s[i+1]) {
	case 's', 't', 'm', 'd':
		return i + 2
	}
	if i+2 < len(s) {
		a, b := lower(s[i+1]), lower(s[i+2])
		if (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l') {
			return i + 3
		}
	}
	return -1
}

// wordy reports whether class c is whitespace, letter or number (or past the end): the
// classes the "punctuation" alternative [^\s\p{L}\p{N}] excludes.
func wordy(c uint8) bool { return c == cSpace || c == cLetter || c == cNumber || c == cNone }

// matchGPT2 is llama.cpp's unicode_regex_split_custom_gpt2 at one position.
func matchGPT2(s []rune, i int) int {
	if e := matchContraction(s, i, false); e > 0 {
		return e
	}
	c := s[i]
	cl := class(c)
	j := i
	if c == ' ' {
		cl = classAt(s, i+1)
		j = i + 1
	}
	switch {
	case cl == cLetter || cl == cNumber: // ` ?\p{L}+` and ` ?\p{N}+`
		for classAt(s, j) == cl {
			j++
		}
		return j
	case !wordy(cl): // ` ?[^\s\p{L}\p{N}]+`
		for !wordy(classAt(s, j)) {
			j++
		}
		return j
	}
	return matchSpaces(s, i, false)
}

// matchSpaces handles the whitespace alternatives at i: `\s*[\r\n]+` when newlines is
// set, then `\s+(?!\S)`, then `\s+`; a lone non-space code point matches itself.
func matchSpaces(s []rune, i int, newlines bool) int {
	k, nl := i, -1
	for classAt(s, k) == cSpace {
		if s[k] == '\r' || s[k] == '\n' {
			nl = k + 1
		}
		k++
	}
	switch {
	case newlines && nl >= 0:
		return nl
	case k-i > 1 && k < len(s):
		return k - 1 // leave the last space to prefix the next word
	case k > i:
		return k
	}
	return i + 1
}

// matchLlama3 is llama.cpp's unicode_regex_split_custom_llama3 at one position, with
// digit runs cut every maxDigits (3 for Llama 3; 1 gives Qwen2's pattern, which
// llama.cpp runs through std::regex with the same result).
func matchLlama3(s []rune, i int, maxDigits int) int {
	if e := matchContraction(s, i, true); e > 0 {
		return e
	}
	c := s[i]
	cl := class(c)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c != '\r' && c != '\n' && cl != cNumber && (cl == cLetter || classAt(s, i+1) == cLetter) {
		j := i + 1
		for classAt(s, j) == cLetter {
			j++
		}
		return j
	}
	// \p{N}{1,maxDigits}
	if cl == cNumber {
		j := i + 1
		for j-i < maxDigits && classAt(s, j) == cNumber {
			j++
		}
		return j
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	cl2, j := cl, i
	if c == ' ' {
		cl2, j = classAt(s, i+1), i+1
	}
	if !wordy(cl2) || (c == ' ' && cl2 == cNone) {
		for !wordy(classAt(s, j)) {
			j++
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	return matchSpaces(s, i, true)
}
