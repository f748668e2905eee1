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

// MaxDepth is the most containers (objects and arrays) a Checker lets be open at once.
// Real replies nest a few levels; without a bound, a reply of only '[' would grow the
// stack by a frame a byte, and every Accepts (called for each token of the vocabulary at
// each step) copies the stack.
const MaxDepth = 128

// Checker follows a text, byte by byte, while it can still be extended into one JSON
// object with optional whitespace around it (at most MaxSpace bytes in a row). The zero
// value expects the text's start.
type Checker struct {
	spaces  int     // whitespace bytes in a row outside strings
	stack   []frame // the open containers
	st      state
	key     bool    // the string being read is an object key
	lit     string  // the rest of the literal being read
	hex     int     // \u digits left
	root    *Schema // the object's schema (NewChecker), nil for any object
	cur     *Schema // the schema of the value being read or about to start
	str     []byte  // the key or enum string read so far (keys: at most the schema's longest name and a byte)
	intOnly bool    // the number being read must be an integer
	tmp     []frame // Accepts' copies
	tmpStr  []byte
}

// frame is an open container: '{' or '[', its schema, and (objects) the keys used, by
// property index.
type frame struct {
	open byte
	s    *Schema
	used uint64
	key  int    // objects: the property index of the value being read (-1: none)
	tag  string // tagged objects (Tagged): the tag's value once read
}

// NewChecker is a Checker whose object must also match schema s (Compile).
func NewChecker(s *Schema) *Checker { return &Checker{root: s} }

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
	t.str = append(c.tmpStr[:0], c.str...)
	ok := t.Feed(s)
	c.tmp, c.tmpStr = t.stack[:0], t.str[:0]
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
		case b == '{' && c.root.allows(tObject):
			c.stack, c.st = append(c.stack, frame{open: '{', s: c.root, key: -1}), sKeyOrClose
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
			if f := c.top(); !f.s.keyPrefix(nil, f.used) {
				return false // no key may open here (a closed object with all its keys)
			}
			c.st, c.key, c.str = sString, true, c.str[:0]
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
		if c.st == sValueOrEnd && !space(b) {
			c.cur = c.top().s.itemSchema()
		}
		return c.value(b)
	case sAfter:
		switch {
		case space(b):
			return true
		case b == ',':
			f := c.top()
			if f.open == '{' {
				if !f.s.moreKeys(f.used) {
					return false // no key may follow
				}
				c.st = sKey
			} else {
				c.st, c.cur = sValue, f.s.itemSchema()
			}
			return true
		case b == '}':
			return c.close('{')
		case b == ']':
			return c.close('[')
		}
		return false
	case sString:
		f := c.top()
		switch {
		case b == '"' && c.key:
			s, i, ok := f.s.keyDone(c.str, f.used)
			if !ok {
				return false
			}
			if i >= 0 {
				f.used |= 1 << i
				if f.s.byTag != nil && f.s.props[i].name == f.s.body {
					s = f.s.byTag[f.tag] // the tag came first (keyPrefix)
				}
			}
			f.key = i
			c.st, c.key, c.cur = sColon, false, s
		case b == '"':
			if !c.cur.enumDone(c.str) {
				return false
			}
			if f.open == '{' && f.s != nil && f.s.byTag != nil && f.key >= 0 && f.s.props[f.key].name == f.s.tag {
				f.tag = string(c.str)
			}
			c.st = sAfter
		case b == '\\':
			if c.key && f.s != nil && f.s.closed || !c.key && c.cur != nil && c.cur.enum != nil {
				return false // names and enum values here have no escapes
			}
			c.st = sEscape
		case b < 0x20:
			return false
		case c.key && f.s == nil || !c.key && (c.cur == nil || c.cur.enum == nil):
			// Nothing needs the text of this string: keep no copy.
		case c.key && len(c.str) > f.s.maxName:
			// A key longer than every property name is none of them: its first
			// maxName+1 bytes say so, and keyPrefix refused it already if the object
			// is closed.
		default:
			c.str = append(c.str, b)
			if c.key && !f.s.keyPrefix(c.str, f.used) || !c.key && !c.cur.enumPrefix(c.str) {
				return false
			}
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

// value starts a value of schema c.cur with b.
func (c *Checker) value(b byte) bool {
	s := c.cur
	switch {
	case space(b):
		return true
	case (b == '{' || b == '[') && len(c.stack) >= MaxDepth:
		return false
	case b == '{' && s.allows(tObject):
		c.stack, c.st = append(c.stack, frame{open: '{', s: s, key: -1}), sKeyOrClose
	case b == '[' && s.allows(tArray):
		c.stack, c.st = append(c.stack, frame{open: '[', s: s}), sValueOrEnd
	case b == '"' && s.allows(tString):
		c.st, c.key, c.str = sString, false, c.str[:0]
	case b == 't' && s.allows(tBool):
		c.st, c.lit = sLiteral, "rue"
	case b == 'f' && s.allows(tBool):
		c.st, c.lit = sLiteral, "alse"
	case b == 'n' && s.allows(tNull):
		c.st, c.lit = sLiteral, "ull"
	case (b == '-' || digit(b)) && s.allows(tInteger):
		c.intOnly = s != nil && s.types&tNumber == 0
		c.st = sInt
		if b == '-' {
			c.st = sMinus
		} else if b == '0' {
			c.st = sZero
		}
	default:
		return false
	}
	return true
}

// top is the innermost open container.
func (c *Checker) top() *frame { return &c.stack[len(c.stack)-1] }

// itemSchema is an array's items' schema (nil: any).
func (s *Schema) itemSchema() *Schema {
	if s == nil {
		return nil
	}
	return s.items
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
	case b == '.' && (c.st == sZero || c.st == sInt) && !c.intOnly:
		c.st = sDot
		return true
	case (b == 'e' || b == 'E') && c.st != sExp && !c.intOnly:
		c.st = sE
		return true
	}
	c.st = sAfter
	return c.byte(b)
}

// close closes the innermost container, which must be open (an object only with its
// required keys).
func (c *Checker) close(open byte) bool {
	n := len(c.stack)
	if n == 0 || c.stack[n-1].open != open {
		return false
	}
	if f := c.stack[n-1]; open == '{' && !f.s.canClose(f.used) {
		return false
	}
	c.stack = c.stack[:n-1]
	c.st = sAfter
	if n == 1 {
		c.st = sDone
	}
	return true
}
