// Package tokenizer turns text into token ids and back exactly as llama.cpp does
// (src/llama-vocab.cpp, src/unicode.cpp), for the two vocabulary kinds found in GGUF files:
//
//   - SentencePiece ("tokenizer.ggml.model" = "llama"): a space prefix, spaces escaped as
//     U+2581, bigrams of UTF-8 characters merged by highest score, byte fallback <0xXX>.
//   - byte-level BPE ("gpt2"): a pre-tokenizer chosen by "tokenizer.ggml.pre" splits the
//     text into words, each word's bytes are mapped to GPT-2's printable code points and
//     merged by merge rank.
//
// Before either, special tokens are cut out of the text (tokenizer_st_partition):
// user-defined tokens always, control and unknown tokens only with ParseSpecial.
//
// A Tokenizer is immutable after construction and safe for concurrent use.
package tokenizer

import "strings"

// Token attributes, as llama.cpp's llama_token_attr bit flags. The GGUF token_type array
// holds llama_token_type values (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused,
// 6 byte); each maps to one of these bits, and the loader may add LSTRIP/RSTRIP/CONTROL.
type attr uint16

const (
	attrUndefined   attr = 0
	attrUnknown     attr = 1 << 0
	attrUnused      attr = 1 << 1
	attrNormal      attr = 1 << 2
	attrControl     attr = 1 << 3
	attrUserDefined attr = 1 << 4
	attrByte        attr = 1 << 5
	attrNormalized  attr = 1 << 6
	attrLStrip      attr = 1 << 7
	attrRStrip      attr = 1 << 8
	attrSingleWord  attr = 1 << 9
)

// attrFromType maps a GGUF tokenizer.ggml.token_type value to its attribute.
func attrFromType(t int32) attr {
	switch t {
	case 1:
		return attrNormal
	case 2:
		return attrUnknown
	case 3:
		return attrControl
	case 4:
		return attrUserDefined
	case 5:
		return attrUnused
	case 6:
		return attrByte
	}
	return attrUndefined
}

// kind is the vocabulary type (llama_vocab_type).
type kind int

const (
	kindSPM kind = iota // SentencePiece, "llama"
	kindBPE             // byte-level BPE, "gpt2"
)

// noToken marks an absent special token (LLAMA_TOKEN_NULL).
const noToken int32 = -1

// Tokenizer encodes and decodes text for one GGUF vocabulary. All fields are set by the
// loader and never written afterwards.
type Tokenizer struct {
	kind  kind
	model string // tokenizer.ggml.model
	pre   string // tokenizer.ggml.pre ("" when absent)

	texts  []string  // token text as stored in the GGUF, by id; "" replaced by "[EMPTY_<id>]"
	scores []float32 // SentencePiece scores by id (0 when absent)
	attrs  []attr    // by id
	pieces []string  // rendered text by id, control tokens included (token_to_piece, special=true)
	toID   map[string]int32

	bos, eos, eot, eom, unk, pad int32    // noToken when absent
	fim                          [6]int32 // fill-in-the-middle tokens by fimPre..fimSep, noToken when absent
	eog                          []bool
	addBOS, addEOS               bool
	addSpacePrefix               bool

	// specials lists the tokens cut out of the text before tokenizing (control,
	// user-defined, unknown), longest text first, ties by id.
	specials []int32
	specIdx  *specialIndex

	spmByte  [256]int32 // SentencePiece byte fallback token for each byte, noToken if none
	spmSplit bool       // no token has U+2581 after another character (see encodeSPM)
	bpe      *bpeVocab  // byte-level BPE data; nil for SentencePiece
}

// EncodeOptions selects what Encode adds and recognises.
type EncodeOptions struct {
	// AddSpecial adds BOS (and EOS) as the file's add_bos_token/add_eos_token say.
	AddSpecial bool
	// ParseSpecial recognises the text of control and unknown tokens in the input
	// ("<|im_start|>", "<s>", ...). User-defined tokens are recognised either way, as in
	// llama.cpp (and Hugging Face tokenizers).
	ParseSpecial bool
}

// VocabSize is the number of token ids.
func (t *Tokenizer) VocabSize() int { return len(t.texts) }

// BOS is the beginning-of-sequence token id, or -1 when the vocabulary has none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence token id, or -1 when the vocabulary has none.
func (t *Tokenizer) EOS() int32 { return t.eos }

// AddBOS reports whether Encode with AddSpecial prepends BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// HasInfill reports whether the vocabulary has the fill-in-the-middle tokens that
// EncodeInfill needs (its prefix, suffix and middle tokens).
func (t *Tokenizer) HasInfill() bool {
	return t.fim[fimPre] != noToken && t.fim[fimSuf] != noToken && t.fim[fimMid] != noToken
}

// EncodeInfill is the fill-in-the-middle prompt of prefix and suffix (code before and
// after the cursor), in the prefix-suffix-middle order llama.cpp's infill uses: BOS
// where the model adds it, the FIM prefix token, prefix, the suffix token, suffix, the
// middle token; the model then writes the middle. Special-token text in prefix and
// suffix stays text. ok is false when the vocabulary has no FIM tokens.
func (t *Tokenizer) EncodeInfill(prefix, suffix string) (ids []int32, ok bool) {
	if !t.HasInfill() {
		return nil, false
	}
	pre, suf, mid := t.fim[fimPre], t.fim[fimSuf], t.fim[fimMid]
	if t.addBOS && t.bos != noToken {
		ids = append(ids, t.bos)
	}
	ids = append(ids, pre)
	ids = append(ids, t.Encode(prefix, EncodeOptions{})...)
	ids = append(ids, suf)
	ids = append(ids, t.Encode(suffix, EncodeOptions{})...)
	return append(ids, mid), true
}

// IsEOG reports whether id ends generation: EOS, EOT, EOM, the FIM pad/repo/separator
// tokens and tokens whose text is a known end marker ("<|eot_id|>", "<|im_end|>",
// "<|end|>", "<|endoftext|>", "<|end_of_text|>", "<end_of_turn>", ...).
func (t *Tokenizer) IsEOG(id int32) bool {
	return id >= 0 && int(id) < len(t.eog) && t.eog[id]
}

// IsControl reports whether id is a control or unknown token: one that decodes to no
// text ("<s>", "<|im_start|>", ...).
func (t *Tokenizer) IsControl(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&(attrControl|attrUnknown) != 0
}

// Piece is the text of one token: normal tokens with U+2581 as space (SentencePiece) or
// GPT-2 code points mapped back to bytes (BPE), byte tokens as their single byte (which
// may be an incomplete UTF-8 sequence), control and user-defined tokens as their text.
// An id out of range gives "".
func (t *Tokenizer) Piece(id int32) string {
	if id < 0 || int(id) >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// Encode tokenizes text. It never fails: bytes that are not valid UTF-8 are treated as
// llama.cpp treats them (SentencePiece: byte fallback; BPE: U+FFFD).
func (t *Tokenizer) Encode(text string, opt EncodeOptions) []int32 {
	out := make([]int32, 0, len(text)/3+2)
	frags := t.partition(text, opt.ParseSpecial)
	if opt.AddSpecial && t.addBOS && t.bos != noToken {
		out = append(out, t.bos)
	}
	switch t.kind {
	case kindSPM:
		// A space is prefixed to the first text fragment and to every fragment that
		// follows a special token (llama.cpp's is_prev_special).
		prevSpecial := true
		for _, f := range frags {
			if f.tok != noToken {
				out = append(out, f.tok)
				prevSpecial = true
				continue
			}
			out = t.encodeSPM(out, text[f.start:f.end], t.addSpacePrefix && prevSpecial)
			prevSpecial = false
		}
	case kindBPE:
		s := t.newBPEState()
		for _, f := range frags {
			if f.tok != noToken {
				out = append(out, f.tok)
				continue
			}
			out = s.encode(out, text[f.start:f.end])
		}
		t.freeBPEState(s)
	}
	if opt.AddSpecial && t.addEOS && t.eos != noToken {
		out = append(out, t.eos)
	}
	return out
}

// fragment is a piece of the input: text[start:end] when tok is noToken, else a special
// token cut out of the text.
type fragment struct {
	start, end int
	tok        int32
}

// partition cuts special tokens out of text, as llama.cpp's tokenizer_st_partition: for
// each special token in order (longest text first), every remaining text fragment is
// split at each occurrence, left to right. A token with LSTRIP/RSTRIP also eats the
// ASCII whitespace (C isspace) to its left/right. Control and unknown tokens take part
// only with parseSpecial; user-defined tokens always do.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{0, len(text), noToken}}
	if len(t.specials) == 0 {
		return frags
	}
	seen := make([]bool, len(t.specials))
	if !t.specIdx.present(text, seen) {
		return frags
	}
	var next []fragment
	for k, id := range t.specials {
		a := t.attrs[id]
		if !seen[k] || (!parseSpecial && a&(attrControl|attrUnknown) != 0) {
			continue
		}
		tok := t.texts[id]
		next = next[:0]
		changed := false
		for _, f := range frags {
			if f.tok != noToken {
				next = append(next, f)
				continue
			}
			start, end := f.start, f.end
			for start < end {
				i := indexIn(text, start, end, tok)
				if i < 0 {
					break
				}
				changed = true
				left := i
				if a&attrLStrip != 0 {
					for left > start && isCSpace(text[left-1]) {
						left--
					}
				}
				if left > start {
					next = append(next, fragment{start, left, noToken})
				}
				next = append(next, fragment{i, i + len(tok), id})
				start = i + len(tok)
				if a&attrRStrip != 0 {
					for start < end && isCSpace(text[start]) {
						start++
					}
				}
			}
			if start < end {
				next = append(next, fragment{start, end, noToken})
			}
		}
		if changed {
			frags, next = next, frags
		}
	}
	return frags
}

// indexIn finds sub in text[start:end] and returns its offset in text, or -1.
func indexIn(text string, start, end int, sub string) int {
	if end-start < len(sub) {
		return -1
	}
	i := strings.Index(text[start:end], sub)
	if i < 0 {
		return -1
	}
	return start + i
}

// isCSpace is C's isspace in the "C" locale.
func isCSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}
