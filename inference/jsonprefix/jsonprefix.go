// Package jsonprefix follows text that must become one JSON object (RFC 8259), so that
// sampling can refuse the tokens that would make that impossible (the JSON modes of the
// local API).
package jsonprefix

type state uint8

const (
	sStart      state = iota // before the object: whitespace or '{'
	sKeyOrClose              // after '{': a key or '}'
	sKey                     // after ',' in an object: a key
	sColon                   // after a key: ':'
	sValue                   // a value
	sValueOrEnd              // after '[': a value or ']'
	sAfter                   // after a value: ',' or the container's close
	sString                  // inside a string
	sEscape                  // after '\' in a string
	sHex                     // in the four hex digits of \u
	sLiteral                 // in true, false or null
	sMinus                   // after a number's '-'
	sZero                    // a number's leading 0
	sInt                     // a number's integer digits
	sDot                     // after a number's '.'
	sFrac                    // a number's fraction digits
	sE                       // after a number's 'e'
	sESign                   // after the exponent's sign
	sExp                     // the exponent's digits
	sDone                    // the object closed: whitespace only
)

// MaxSpace is the most whitespace bytes in a row a Checker takes outside strings (as
// llama.cpp's JSON grammar limits them): valid JSON allows any number, but a model
// constrained to JSON would otherwise pad with whitespace forever.
const MaxSpace = 20

// Checker follows a text, byte by byte, while it can still be extended into one JSON
// object with optional whitespace around it (at most MaxSpace bytes in a row). The zero
// value expects the text's start.
type Checker struct {
	spaces int    // whitespace bytes in a row outside strings
	stack  []byte // the open containers, '{' or '['
	st     state
	key    bool   // the string being read is an object key
	lit    string // the rest of the literal being read
	hex    int    // \u digits left
	tmp    []byte // Accepts' copy of the stack
}

// Done reports whether the object has closed (only whitespace may follow).
func (c *Checker) Done() bool { return c.st == sDone }

// Feed advances over s and reports whether the text is still a prefix of a JSON
// object; on false the checker is left where the offending byte stopped it, and must
// not be fed again.
func (c *Checker) Feed(s string) bool {
	for i := 0; i < len(s); i++ {
		if !c.byte(s[i]) {
			return false
		}
	}
	return true
}

// Accepts reports whether Feed(s) would succeed, leaving c as it is.
func (c *Checker) Accepts(s string) bool {
	t := *c
	t.stack = append(c.tmp[:0], c.stack...)
	ok := t.Feed(s)
	c.tmp = t.stack[:0]
	return ok
}

func space(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func digit(b byte) bool { return b >= '0' && b <= '9' }

// byte advances over one byte.
func (c *Checker) byte(b byte) bool {
	if c.st < sString || c.st > sHex { // outside strings
		if space(b) {
			if c.spaces++; c.spaces > MaxSpace {
				return false
			}
		} else {
			c.spaces = 0
		}
	}
	switch c.st {
	case sStart:
		switch {
		case space(b):
			return true
		case b == '{':
			c.stack, c.st = append(c.stack, '{'), sKeyOrClose
			return true
		}
		return false
	case sDone:
		return space(b)
	case sKeyOrClose, sKey:
		switch {
		case space(b):
			return true
		case b == '"':
			c.st, c.key = sString, true
			return true
		case b == '}' && c.st == sKeyOrClose:
			return c.close('{')
		}
		return false
	case sColon:
		switch {
		case space(b):
			return true
		case b == ':':
			c.st = sValue
			return true
		}
		return false
	case sValue, sValueOrEnd:
		if b == ']' && c.st == sValueOrEnd {
			return c.close('[')
		}
		return c.value(b)
	case sAfter:
		switch {
		case space(b):
			return true
		case b == ',':
			if c.stack[len(c.stack)-1] == '{' {
				c.st = sKey
			} else {
				c.st = sValue
			}
			return true
		case b == '}':
			return c.close('{')
		case b == ']':
			return c.close('[')
		}
		return false
	case sString:
		switch {
		case b == '"':
			if c.key {
				c.st, c.key = sColon, false
			} else {
				c.st = sAfter
			}
		case b == '\\':
			c.st = sEscape
		case b < 0x20:
			return false
		}
		return true
	case sEscape:
		switch b {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			c.st = sString
		case 'u':
			c.st, c.hex = sHex, 4
		default:
			return false
		}
		return true
	case sHex:
		if !digit(b) && (b|0x20 < 'a' || b|0x20 > 'f') {
			return false
		}
		if c.hex--; c.hex == 0 {
			c.st = sString
		}
		return true
	case sLiteral:
		if b != c.lit[0] {
			return false
		}
		if c.lit = c.lit[1:]; c.lit == "" {
			c.st = sAfter
		}
		return true
	}
	return c.number(b)
}

// value starts a value with b.
func (c *Checker) value(b byte) bool {
	switch {
	case space(b):
		return true
	case b == '{' || b == '[':
		c.stack = append(c.stack, b)
		c.st = sKeyOrClose
		if b == '[' {
			c.st = sValueOrEnd
		}
	case b == '"':
		c.st, c.key = sString, false
	case b == 't':
		c.st, c.lit = sLiteral, "rue"
	case b == 'f':
		c.st, c.lit = sLiteral, "alse"
	case b == 'n':
		c.st, c.lit = sLiteral, "ull"
	case b == '-':
		c.st = sMinus
	case b == '0':
		c.st = sZero
	case digit(b):
		c.st = sInt
	default:
		return false
	}
	return true
}

// number advances a number over b; a byte that ends it is taken as what follows.
func (c *Checker) number(b byte) bool {
	switch c.st {
	case sMinus:
		switch {
		case b == '0':
			c.st = sZero
		case digit(b):
			c.st = sInt
		default:
			return false
		}
		return true
	case sDot, sE, sESign:
		switch {
		case digit(b) && c.st == sDot:
			c.st = sFrac
		case digit(b):
			c.st = sExp
		case (b == '+' || b == '-') && c.st == sE:
			c.st = sESign
		default:
			return false
		}
		return true
	}
	switch { // sZero, sInt, sFrac, sExp: the number may end here
	case digit(b) && (c.st == sInt || c.st == sFrac || c.st == sExp):
		return true
	case b == '.' && (c.st == sZero || c.st == sInt):
		c.st = sDot
		return true
	case (b == 'e' || b == 'E') && c.st != sExp:
		c.st = sE
		return true
	}
	c.st = sAfter
	return c.byte(b)
}

// close closes the innermost container, which must be open.
func (c *Checker) close(open byte) bool {
	n := len(c.stack)
	if n == 0 || c.stack[n-1] != open {
		return false
	}
	c.stack = c.stack[:n-1]
	c.st = sAfter
	if n == 1 {
		c.st = sDone
	}
	return true
}
