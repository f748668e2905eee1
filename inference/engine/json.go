package engine

import (
	"strings"

	"ember/inference/jsonprefix"
	"ember/inference/tokenizer"
)

// jsonReply constrains a sequence's reply to one JSON object (Request.JSON), of
// Request.JSONSchema when given: a token is allowed while the reply's text with it stays
// a prefix of such an object (end of
// generation once the object is whole); with a reasoning section first, everything is
// allowed until "</think>" has been written.
type jsonReply struct {
	tok   *tokenizer.Tokenizer
	c     *jsonprefix.Checker
	wait  bool   // still in the reasoning section
	think string // its text so far, while wait
	// first says which bytes may come next (while firstOK: until the next push). A
	// token whose first byte may not is refused without feeding the checker: a masked
	// draw that scans the whole vocabulary (few tokens allowed, as in an enum) tests one
	// byte for most of it.
	first   [256]bool
	firstOK bool
}

// oneByte are the strings of one byte each, for jsonReply.first.
var oneByte = func() (t [256]string) {
	for b := range t {
		t[b] = string([]byte{byte(b)})
	}
	return t
}()

const thinkEnd = "</think>"

func newJSONReply(tok *tokenizer.Tokenizer, thinkFirst bool, schema *jsonprefix.Schema) *jsonReply {
	return &jsonReply{tok: tok, c: jsonprefix.NewChecker(schema), wait: thinkFirst}
}

// active reports whether the constraint applies to the next token.
func (j *jsonReply) active() bool { return !j.wait }

// allowed reports whether token id may come next.
func (j *jsonReply) allowed(id int32) bool {
	if j.tok.IsEOG(id) {
		return j.c.Done()
	}
	piece := j.tok.Piece(id)
	if piece == "" || j.tok.IsControl(id) {
		return false
	}
	if !j.firstOK {
		for b := range j.first {
			j.first[b] = j.c.Accepts(oneByte[b])
		}
		j.firstOK = true
	}
	return j.first[piece[0]] && j.c.Accepts(piece)
}

// push records the piece of the token drawn and reports whether the reply is over: the
// object is whole, or the piece does not continue it (the masked draw found no token
// allowed, a dead end of the vocabulary: the reply ends there rather than run on
// unconstrained; the API then reports the object incomplete).
func (j *jsonReply) push(piece string) bool {
	j.firstOK = false
	if j.wait {
		j.think += piece
		i := strings.Index(j.think, thinkEnd)
		if i < 0 {
			if n := len(j.think) - len(thinkEnd); n > 0 {
				j.think = j.think[n:] // keep only what may start the marker
			}
			return false
		}
		j.wait, piece = false, j.think[i+len(thinkEnd):]
		j.think = ""
	}
	if !j.c.Feed(piece) {
		return true
	}
	return j.c.Done()
}
