package tokenizer

import "unicode"

// The DeepSeek pre-tokenizers are chains of patterns (llama-vocab.cpp). Patterns written
// with \p{..} run on llama.cpp's collapsed text (see pretok.go); patterns with literal
// non-ASCII ranges run on the code points themselves, except that non-ASCII whitespace
// has been replaced by \v (0x0B) and so falls outside those ranges.

var (
	// deepseek-llm: [\r\n] , \s?[LC]+ , \s?[!-/:-~！-／：-～‘-‟　-。]+ , \s+$ ,
	// [一-龥ࠀ-一가-퟿]+ , \p{N}+
	preDeepseekLLM = &pretokenizer{"deepseek-llm", []stage{
		matchStage(matchNewline),
		matchStage(spacedRun(func(r rune) bool { return inRanges(wide(r), deepseekLetters) })),
		matchStage(spacedRun(func(r rune) bool { return inRanges(wide(r), deepseekPunct) })),
		trailingSpaceStage,
		matchStage(runOf(func(r rune) bool { return inRanges(wide(r), deepseekCJK) }, 0)),
		matchStage(runOf(isNumber, 0)),
	}}

	// deepseek-coder: [\r\n] , \s?\p{L}+ , \s?\p{P}+ , [一-龥ࠀ-一가-퟿]+ , \p{N}
	preDeepseekCoder = &pretokenizer{"deepseek-coder", []stage{
		matchStage(matchNewline),
		matchStage(spacedRun(func(r rune) bool { return class(r) == cLetter })),
		matchStage(spacedRun(func(r rune) bool { return class(r) == cPunct })),
		matchStage(runOf(func(r rune) bool { return inRanges(wide(r), deepseekCJK) }, 0)),
		matchStage(runOf(isNumber, 1)),
	}}

	// deepseek-v3: \p{N}{1,3} , [一-龥぀-ゟ゠-ヿ]+ , then matchDeepseekV3.
	preDeepseekV3 = &pretokenizer{"deepseek-v3", []stage{
		matchStage(runOf(isNumber, 3)),
		matchStage(runOf(func(r rune) bool { return inRanges(wide(r), deepseekV3CJK) }, 0)),
		matchStage(matchDeepseekV3),
	}}
)

// wide is the code point a std::wregex pattern sees: non-ASCII whitespace becomes \v.
func wide(r rune) rune {
	if r >= 128 && class(r) == cSpace {
		return '\v'
	}
	return r
}

func inRanges(r rune, t []unicode.Range32) bool {
	for _, g := range t {
		if r < rune(g.Lo) {
			return false
		}
		if r <= rune(g.Hi) {
			return true
		}
	}
	return false
}

func matchNewline(s []rune, i int) int {
	if s[i] == '\r' || s[i] == '\n' {
		return i + 1
	}
	return -1
}

// spacedRun matches `\s?[set]+`: one optional leading whitespace, then a run of in.
func spacedRun(in func(rune) bool) matcher {
	return func(s []rune, i int) int {
		j := i
		if class(s[i]) == cSpace && i+1 < len(s) && in(s[i+1]) {
			j = i + 1
		}
		if !in(s[j]) {
			return -1
		}
		for j < len(s) && in(s[j]) {
			j++
		}
		return j
	}
}

// matchDeepseekV3 matches, in order of preference:
//
//	[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+
//	[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
//	 ?[\p{P}\p{S}]+[\r\n]*
//	\s*[\r\n]+ | \s+(?!\S) | \s+
func matchDeepseekV3(s []rune, i int) int {
	c := s[i]
	asciiLetter := func(j int) bool {
		return j < len(s) && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z'))
	}
	if c >= '!' && c <= '~' && !asciiLetter(i) && !(c >= '0' && c <= '9') && asciiLetter(i+1) {
		j := i + 1
		for asciiLetter(j) {
			j++
		}
		return j
	}
	letterMark := func(j int) bool { cl := classAt(s, j); return cl == cLetter || cl == cMark }
	punctSym := func(j int) bool { cl := classAt(s, j); return cl == cPunct || cl == cSymbol }
	cl := class(c)
	if c != '\r' && c != '\n' && cl != cLetter && !punctSym(i) && letterMark(i+1) {
		j := i + 1 // the optional leading code point, then the run
		for letterMark(j) {
			j++
		}
		return j
	}
	if letterMark(i) {
		j := i
		for letterMark(j) {
			j++
		}
		return j
	}
	j := i
	if c == ' ' && punctSym(i+1) {
		j = i + 1
	}
	if punctSym(j) {
		for punctSym(j) {
			j++
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	if cl == cSpace {
		return matchSpaces(s, i, true)
	}
	return -1
}

// deepseekLetters is the letter class of deepseek-llm's second pattern (the cased
// letters, Lu/Ll/Lt), as code point ranges.
var deepseekLetters = []unicode.Range32{
	{0x0041, 0x005A, 1}, {0x0061, 0x007A, 1}, {0x00B5, 0x00B5, 1}, {0x00C0, 0x00D6, 1}, {0x00D8, 0x00F6, 1}, {0x00F8, 0x01BA, 1},
	{0x01BC, 0x01BF, 1}, {0x01C4, 0x0293, 1}, {0x0295, 0x02AF, 1}, {0x0370, 0x0373, 1}, {0x0376, 0x0377, 1},
	{0x037B, 0x037D, 1}, {0x037F, 0x037F, 1}, {0x0386, 0x0386, 1}, {0x0388, 0x038A, 1}, {0x038C, 0x038C, 1}, {0x038E, 0x03A1, 1},
	{0x03A3, 0x03F5, 1}, {0x03F7, 0x0481, 1}, {0x048A, 0x052F, 1}, {0x0531, 0x0556, 1}, {0x10A0, 0x10C5, 1}, {0x13A0, 0x13F5, 1},
	{0x13F8, 0x13FD, 1}, {0x1C90, 0x1CBA, 1}, {0x1CBD, 0x1CBF, 1}, {0x1D00, 0x1D2B, 1}, {0x1D6B, 0x1D77, 1}, {0x1D79, 0x1D9A, 1},
	{0x1E00, 0x1F15, 1}, {0x1F18, 0x1F1D, 1}, {0x1F20, 0x1F45, 1}, {0x1F48, 0x1F4D, 1}, {0x1F50, 0x1F57, 1}, {0x1F59, 0x1F59, 1},
	{0x1F5B, 0x1F5B, 1}, {0x1F5D, 0x1F5D, 1}, {0x1F5F, 0x1F7D, 1}, {0x1F80, 0x1FB4, 1}, {0x1FB6, 0x1FBC, 1}, {0x1FBE, 0x1FBE, 1},
	{0x1FC2, 0x1FC4, 1}, {0x1FC6, 0x1FCC, 1}, {0x1FD0, 0x1FD3, 1}, {0x1FD6, 0x1FDB, 1}, {0x1FE0, 0x1FEC, 1}, {0x1FF2, 0x1FF4, 1},
	{0x1FF6, 0x1FFC, 1}, {0x2102, 0x2102, 1}, {0x2107, 0x2107, 1}, {0x210A, 0x2113, 1}, {0x2115, 0x2115, 1}, {0x2119, 0x211D, 1},
	{0x2124, 0x2124, 1}, {0x2126, 0x2126, 1}, {0x2128, 0x2128, 1}, {0x212A, 0x212D, 1}, {0x212F, 0x2134, 1}, {0x2139, 0x2139, 1},
	{0x213C, 0x213F, 1}, {0x2145, 0x2149, 1}, {0x214E, 0x214E, 1}, {0x2183, 0x2184, 1},
	{0x2C00, 0x2C7B, 1}, {0x2C7E, 0x2CE4, 1}, {0x2CEB, 0x2CEE, 1}, {0x2CF2, 0x2CF3, 1},
	{0xA640, 0xA66D, 1}, {0xA680, 0xA69B, 1}, {0xA722, 0xA76F, 1}, {0xA771, 0xA787, 1}, {0xA78B, 0xA78E, 1}, {0xAB70, 0xABBF, 1},
	{0xFB00, 0xFB06, 1}, {0xFB13, 0xFB17, 1}, {0xFF21, 0xFF3A, 1}, {0xFF41, 0xFF5A, 1}, {0x10400, 0x1044F, 1}, {0x104B0, 0x104D3, 1},
	{0x104D8, 0x104FB, 1}, {0x10C80, 0x10CB2, 1}, {0x10CC0, 0x10CF2, 1}, {0x118A0, 0x118DF, 1}, {0x1E900, 0x1E943, 1},
}

// deepseekPunct is [!-/:-~！-／：-～‘-‟　-。] (sorted).
var deepseekPunct = []unicode.Range32{
	{0x21, 0x2F, 1}, {0x3A, 0x7E, 1}, {0x2018, 0x201F, 1}, {0x3000, 0x3002, 1}, {0xFF01, 0xFF0F, 1}, {0xFF1A, 0xFF5E, 1},
}

// deepseekCJK is [一-龥ࠀ-一가-퟿] (sorted; the first two ranges touch at U+4E00).
var deepseekCJK = []unicode.Range32{{0x0800, 0x9FA5, 1}, {0xAC00, 0xD7FF, 1}}

// deepseekV3CJK is [一-龥぀-ゟ゠-ヿ] (sorted).
var deepseekV3CJK = []unicode.Range32{{0x3040, 0x30FF, 1}, {0x4E00, 0x9FA5, 1}}
