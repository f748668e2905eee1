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
}

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
	return piece != "" && !j.tok.IsControl(id) && j.c.Accepts(piece)
}

// push records the piece of the token drawn and reports whether the reply is over: the
// object is whole, or the piece does not continue it (the masked draw found no token
// allowed, a dead end of the vocabulary: the reply ends there rather than run on
// unconstrained; the API then reports the object incomplete).
func (j *jsonReply) push(piece string) bool {
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
