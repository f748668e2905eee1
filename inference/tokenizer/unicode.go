package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Code point classes used by the pre-tokenizers; one class per code point.
//
// They follow llama.cpp's unicode_cpt_flags as its regexes see them: White_Space code
// points are cSpace whatever their category (llama.cpp collapses them to \v before
// matching), the others are classed by general category. For ASCII, punctuation and
// symbols are the sets llama.cpp substitutes for \p{P} and \p{S}, which leave out '~'.
const (
	cOther  uint8 = iota // controls, format, separators that are not White_Space, unassigned
	cSpace               // White_Space (\s)
	cLetter              // \p{L}
	cNumber              // \p{N}
	cPunct               // \p{P}
	cSymbol              // \p{S}
	cMark                // \p{M}
)

var asciiClass = func() (t [128]uint8) {
	for c := 0; c < 128; c++ {
		switch {
		case c == ' ' || (c >= '\t' && c <= '\r'):
			t[c] = cSpace
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			t[c] = cLetter
		case c >= '0' && c <= '9':
			t[c] = cNumber
		case c < 0x20 || c == 0x7f || c == '~':
			t[c] = cOther
		case c == '$' || c == '+' || c == '<' || c == '=' || c == '>' || c == '^' || c == '`' || c == '|':
			t[c] = cSymbol
		default:
			t[c] = cPunct
		}
	}
	return t
}()

// bmpClass caches classOf for the Basic Multilingual Plane; built on first use.
var (
	bmpOnce  sync.Once
	bmpTable []uint8
)

// class returns the class of code point r.
func class(r rune) uint8 {
	if r < 128 {
		if r < 0 {
			return cOther
		}
		return asciiClass[r]
	}
	if r < 0x10000 {
		bmpOnce.Do(func() {
			bmpTable = make([]uint8, 0x10000)
			for c := rune(0); c < 0x10000; c++ {
				bmpTable[c] = classOf(c)
			}
		})
		return bmpTable[r]
	}
	return classOf(r)
}

// classOf classifies r from Go's Unicode tables.
func classOf(r rune) uint8 {
	switch {
	case r < 128:
		return asciiClass[r]
	case unicode.IsSpace(r): // White_Space: the same set as llama.cpp's unicode_set_whitespace
		return cSpace
	case unicode.IsLetter(r):
		return cLetter
	case unicode.IsNumber(r):
		return cNumber
	case unicode.IsPunct(r):
		return cPunct
	case unicode.IsSymbol(r):
		return cSymbol
	case unicode.IsMark(r):
		return cMark
	}
	return cOther
}

// decodeCpt decodes one code point at s[i] as llama.cpp's unicode_cpt_from_utf8 does: by
// the lead byte's high bits, checking only that enough continuation bytes follow (so
// overlong forms and surrogates decode). A byte that starts no such sequence gives
// U+FFFD and length 1. Values above U+10FFFF, which llama.cpp cannot re-encode, give
// U+FFFD for the whole sequence.
func decodeCpt(s string, i int) (rune, int) {
	c := s[i]
	cont := func(k int) bool { return i+k < len(s) && s[i+k]&0xC0 == 0x80 }
	switch {
	case c < 0x80:
		return rune(c), 1
	case c&0x40 == 0:
		return utf8.RuneError, 1
	case c&0x20 == 0:
		if cont(1) {
			return rune(c&0x1F)<<6 | rune(s[i+1]&0x3F), 2
		}
	case c&0x10 == 0:
		if cont(1) && cont(2) {
			return rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
		}
	case c&0x08 == 0:
		if cont(1) && cont(2) && cont(3) {
			r := rune(c&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F)
			if r > unicode.MaxRune {
				r = utf8.RuneError
			}
			return r, 4
		}
	}
	return utf8.RuneError, 1
}

// appendCpt appends the UTF-8 encoding of r as llama.cpp's unicode_cpt_to_utf8 (which,
// unlike utf8.AppendRune, encodes surrogates as three bytes).
func appendCpt(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(b, byte(r))
	case r < 0x800:
		return append(b, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
	case r < 0x10000:
		return append(b, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
	}
	return append(b, 0xF0|byte(r>>18), 0x80|byte(r>>12&0x3F), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
}

// cptLen is the length of appendCpt's encoding of r.
func cptLen(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

// toCpts decodes text into code points the llama.cpp way, and returns with them the text
// those code points re-encode to (text itself when it is valid UTF-8).
func toCpts(text string, buf []rune) ([]rune, string) {
	if cap(buf) < len(text) {
		buf = make([]rune, 0, len(text))
	}
	buf = buf[:0]
	if utf8.ValidString(text) {
		for _, r := range text {
			buf = append(buf, r)
		}
		return buf, text
	}
	b := make([]byte, 0, len(text)+8)
	for i := 0; i < len(text); {
		r, n := decodeCpt(text, i)
		buf = append(buf, r)
		b = appendCpt(b, r)
		i += n
	}
	return buf, string(b)
}

// GPT-2's byte-to-unicode table: the printable bytes '!'..'~', '¡'..'¬', '®'..'ÿ' stand for
// themselves; the other 68 bytes, in order, become U+0100 upwards.
var (
	byteRune [256]rune    // byte -> code point
	runeByte [0x144]int16 // code point -> byte, -1 when the code point stands for none
)

func init() {
	for i := range runeByte {
		runeByte[i] = -1
	}
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteRune[b] = rune(b)
		} else {
			byteRune[b] = 256 + n
			n++
		}
		runeByte[byteRune[b]] = int16(b)
	}
}

// gpt2Decode maps a GPT-2-encoded token text back to its bytes. ok is false when the text
// holds a code point that stands for no byte.
func gpt2Decode(s string) (b []byte, ok bool) {
	b = make([]byte, 0, len(s))
	for _, r := range s {
		if r < 0 || int(r) >= len(runeByte) || runeByte[r] < 0 {
			return nil, false
		}
		b = append(b, byte(runeByte[r]))
	}
	return b, true
}

// gpt2Encode maps bytes to their GPT-2 code points.
func gpt2Encode(b []byte) string {
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = utf8.AppendRune(out, byteRune[c])
	}
	return string(out)
}
