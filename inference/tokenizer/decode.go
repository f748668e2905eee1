package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Decoding renders each token as llama.cpp's token_to_piece with special = false:
// control and unknown tokens (BOS, EOS, <|im_end|>, ...) render as nothing, user-defined
// tokens as their text, byte tokens as their byte. Spaces around punctuation are not
// cleaned up (llama.cpp's clean_spaces), so that decoding inverts encoding.
//
// The leading space convention (SentencePiece vocabularies, add_space_prefix): Encode
// prefixes a space to the text, so the first piece of a sequence, and the first piece
// after a BOS, loses one leading space. Thus Decode(Encode(s, opt)) == s for valid UTF-8
// s with or without AddSpecial, except where llama.cpp's encoding itself loses
// information: without ParseSpecial, s must not contain U+2581 (SentencePiece's space
// mark, which decodes to ' ') nor text that merges into a control token, and a
// SentencePiece user-defined token makes llama.cpp prefix a space to the text after it.
// Decoding BOS + ids of a story gives the story without a leading space, as llama2.c and
// SentencePiece do (llama.cpp's detokenizer would keep the space after a BOS).
//
// Bytes that do not form valid UTF-8 come out as U+FFFD, one per byte.

// Decode returns the text of ids. It equals what a Decoder that was first given BOS
// returns from Add for each id followed by Flush.
func (t *Tokenizer) Decode(ids []int32) string {
	var sb strings.Builder
	d := Decoder{t: t, strip: t.addSpacePrefix}
	for _, id := range ids {
		sb.WriteString(d.Add(id))
	}
	sb.WriteString(d.Flush())
	return sb.String()
}

// Decoder turns a stream of token ids into text incrementally, never splitting a UTF-8
// character: bytes of an incomplete character are held until the next Add or Flush.
// A Decoder is not safe for concurrent use.
type Decoder struct {
	t       *Tokenizer
	pending []byte // bytes not yet returned: an incomplete UTF-8 sequence
	strip   bool   // drop one leading space from the next rendered piece
}

// NewDecoder returns a Decoder for a stream that continues some earlier text: the first
// piece keeps its leading space unless it follows a BOS given to Add.
func (t *Tokenizer) NewDecoder() *Decoder {
	return &Decoder{t: t}
}

// Add consumes one token and returns the text that became complete.
func (d *Decoder) Add(id int32) string {
	t := d.t
	piece := ""
	if id >= 0 && int(id) < len(t.pieces) && t.attrs[id]&(attrControl|attrUnknown) == 0 {
		piece = t.pieces[id]
	}
	if d.strip && strings.HasPrefix(piece, " ") {
		piece = piece[1:]
	}
	d.strip = t.addSpacePrefix && id == t.bos && id != noToken
	if len(d.pending) == 0 && utf8.ValidString(piece) {
		return piece // fast path: nothing held, nothing to hold
	}
	d.pending = append(d.pending, piece...)
	return d.drain(false)
}

// Flush returns whatever is held, each byte as U+FFFD, and resets the held bytes.
func (d *Decoder) Flush() string {
	return d.drain(true)
}

// drain returns the longest decidable prefix of pending: valid characters as they are,
// bytes that cannot start or continue a character as U+FFFD. An incomplete but possibly
// valid sequence at the end is kept, unless final.
func (d *Decoder) drain(final bool) string {
	b := d.pending
	var sb strings.Builder
	i := 0
	for i < len(b) {
		if !final && !utf8.FullRune(b[i:]) {
			break
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			sb.WriteRune(utf8.RuneError)
			i++
			continue
		}
		sb.Write(b[i : i+n])
		i += n
	}
	d.pending = append(d.pending[:0], b[i:]...)
	return sb.String()
}
