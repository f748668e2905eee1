package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// metadata is the part of *gguf.File the loader reads; tests may supply their own.
type metadata interface {
	Has(key string) bool
	String(key string) (string, error)
	Uint(key string) (uint64, error)
	Bool(key string) (bool, error)
	Strings(key string) ([]string, error)
	Float32s(key string) ([]float32, error)
	Int32s(key string) ([]int32, error)
}

// GGUF keys read by the loader.
const (
	keyModel       = "tokenizer.ggml.model"
	keyPre         = "tokenizer.ggml.pre"
	keyTokens      = "tokenizer.ggml.tokens"
	keyScores      = "tokenizer.ggml.scores"
	keyTokenType   = "tokenizer.ggml.token_type"
	keyMerges      = "tokenizer.ggml.merges"
	keyAddBOS      = "tokenizer.ggml.add_bos_token"
	keyAddEOS      = "tokenizer.ggml.add_eos_token"
	keySpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyName        = "general.name"
)

// errNoKey wraps a missing required key.
var errNoKey = errors.New("missing")

// load builds a Tokenizer from GGUF metadata, following llama.cpp's llama_vocab::load.
func load(m metadata) (*Tokenizer, error) {
	t := &Tokenizer{bos: noToken, eos: noToken, eot: noToken, eom: noToken, unk: noToken, pad: noToken}
	for i := range t.fim {
		t.fim[i] = noToken
	}
	var err error
	if !m.Has(keyModel) {
		return nil, fmt.Errorf("tokenizer: %s: %w", keyModel, errNoKey)
	}
	if t.model, err = m.String(keyModel); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", keyModel, err)
	}
	if m.Has(keyPre) {
		if t.pre, err = m.String(keyPre); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", keyPre, err)
		}
	}
	if !m.Has(keyTokens) {
		return nil, fmt.Errorf("tokenizer: %s: %w", keyTokens, errNoKey)
	}
	if t.texts, err = m.Strings(keyTokens); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", keyTokens, err)
	}
	n := len(t.texts)
	if n == 0 {
		return nil, fmt.Errorf("tokenizer: %s: empty vocabulary", keyTokens)
	}

	var pre preset
	switch t.model {
	case "llama":
		t.kind = kindSPM
		t.bos, t.eos, t.unk = 1, 2, 0
		t.addSpacePrefix, t.addBOS = true, true
	case "gpt2":
		t.kind = kindBPE
		t.bos, t.eos = 11, 11
		if pre, err = lookupPreset(t.pre); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", keyPre, err)
		}
		t.addBOS = pre.addBOS
	default:
		return nil, fmt.Errorf("tokenizer: %s: unsupported tokenizer model %q", keyModel, t.model)
	}
	for _, p := range []*int32{&t.bos, &t.eos, &t.unk} {
		if *p >= int32(n) {
			*p = noToken // default id out of range
		}
	}

	// Token texts, scores and attributes; the first id of a repeated text wins lookups.
	t.scores = make([]float32, n)
	t.attrs = make([]attr, n)
	t.toID = make(map[string]int32, n)
	if m.Has(keyScores) {
		s, err := m.Float32s(keyScores)
		if err == nil && len(s) < n {
			err = fmt.Errorf("%d scores for %d tokens", len(s), n)
		}
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", keyScores, err)
		}
		copy(t.scores, s)
	}
	var types []int32
	if m.Has(keyTokenType) {
		types, err = m.Int32s(keyTokenType)
		if err == nil && len(types) < n {
			err = fmt.Errorf("%d token types for %d tokens", len(types), n)
		}
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", keyTokenType, err)
		}
	}
	for i := range t.texts {
		if t.texts[i] == "" {
			t.texts[i] = fmt.Sprintf("[EMPTY_%d]", i)
		}
		if _, dup := t.toID[t.texts[i]]; !dup {
			t.toID[t.texts[i]] = int32(i)
		}
		t.attrs[i] = attrNormal
		if types != nil {
			t.attrs[i] = attrFromType(types[i])
		}
	}

	if t.kind == kindBPE {
		if !m.Has(keyMerges) {
			return nil, fmt.Errorf("tokenizer: %s: %w", keyMerges, errNoKey)
		}
		merges, err := m.Strings(keyMerges)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", keyMerges, err)
		}
		t.bpe = newBPEVocab(t.texts, t.toID, merges)
		t.bpe.pre, t.bpe.ignoreMerges = pre.chain, pre.ignoreMerges
	}

	if m.Has(keySpacePrefix) {
		if t.addSpacePrefix, err = m.Bool(keySpacePrefix); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", keySpacePrefix, err)
		}
	}
	if err := t.loadSpecialIDs(m); err != nil {
		return nil, err
	}
	for _, k := range []struct {
		key string
		dst *bool
	}{{keyAddBOS, &t.addBOS}, {keyAddEOS, &t.addEOS}} {
		if m.Has(k.key) {
			if *k.dst, err = m.Bool(k.key); err != nil {
				return nil, fmt.Errorf("tokenizer: %s: %w", k.key, err)
			}
		}
	}

	t.findEOG()

	// Special tokens, longest text first (ties by id, for determinism).
	for id, a := range t.attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.specials = append(t.specials, int32(id))
		}
	}
	sort.SliceStable(t.specials, func(i, j int) bool {
		return len(t.texts[t.specials[i]]) > len(t.texts[t.specials[j]])
	})

	t.specIdx = newSpecialIndex(t.texts, t.specials)

	t.pieces = make([]string, n)
	for id := range t.pieces {
		t.pieces[id] = t.render(int32(id))
	}
	if t.kind == kindSPM {
		for b := range t.spmByte {
			t.spmByte[b] = t.byteToken(byte(b))
		}
		t.spmSplit = true
		for _, s := range t.texts {
			if strings.Contains(strings.TrimLeft(s, "\u2581"), "\u2581") {
				t.spmSplit = false
				break
			}
		}
	}
	if m.Has(keyName) {
		name, _ := m.String(keyName)
		t.nameHacks(strings.ToLower(name))
	}
	return t, nil
}

// loadSpecialIDs reads the special token ids; an id outside the vocabulary leaves the
// default, as llama.cpp does.
func (t *Tokenizer) loadSpecialIDs(m metadata) error {
	var sep, mask int32 = noToken, noToken
	for _, k := range []struct {
		key string
		dst *int32
	}{
		{"tokenizer.ggml.bos_token_id", &t.bos},
		{"tokenizer.ggml.eos_token_id", &t.eos},
		{"tokenizer.ggml.eot_token_id", &t.eot},
		{"tokenizer.ggml.eom_token_id", &t.eom},
		{"tokenizer.ggml.unknown_token_id", &t.unk},
		{"tokenizer.ggml.seperator_token_id", &sep},
		{"tokenizer.ggml.padding_token_id", &t.pad},
		{"tokenizer.ggml.mask_token_id", &mask},
		{"tokenizer.ggml.fim_pre_token_id", &t.fim[fimPre]},
		{"tokenizer.ggml.fim_suf_token_id", &t.fim[fimSuf]},
		{"tokenizer.ggml.fim_mid_token_id", &t.fim[fimMid]},
		{"tokenizer.ggml.fim_pad_token_id", &t.fim[fimPad]},
		{"tokenizer.ggml.fim_rep_token_id", &t.fim[fimRep]},
		{"tokenizer.ggml.fim_sep_token_id", &t.fim[fimSep]},
		{"tokenizer.ggml.prefix_token_id", &t.fim[fimPre]},
		{"tokenizer.ggml.suffix_token_id", &t.fim[fimSuf]},
		{"tokenizer.ggml.middle_token_id", &t.fim[fimMid]},
	} {
		if !m.Has(k.key) {
			continue
		}
		v, err := m.Uint(k.key)
		if err != nil {
			return fmt.Errorf("tokenizer: %s: %w", k.key, err)
		}
		if v < uint64(len(t.texts)) {
			*k.dst = int32(v)
		}
	}
	return nil
}

// byteToken is the SentencePiece byte-fallback token of b: "<0xXX>", else the one-byte
// token, else unk (where llama.cpp would throw).
func (t *Tokenizer) byteToken(b byte) int32 {
	if id, ok := t.toID[fmt.Sprintf("<0x%02X>", b)]; ok {
		return id
	}
	if id, ok := t.toID[string([]byte{b})]; ok {
		return id
	}
	return t.unk
}

// render is llama.cpp's token_to_piece with special = true.
func (t *Tokenizer) render(id int32) string {
	a, text := t.attrs[id], t.texts[id]
	switch {
	case a&(attrUnknown|attrControl|attrUserDefined) != 0:
		return text
	case a&attrNormal != 0:
		if t.kind == kindSPM {
			return strings.ReplaceAll(text, "\u2581", " ")
		}
		return decodeGPT2Text(text)
	case a&attrByte != 0:
		if len(text) == 6 && strings.HasPrefix(text, "<0x") && text[5] == '>' {
			var v byte
			for _, c := range text[3:5] {
				v <<= 4
				switch {
				case c >= '0' && c <= '9':
					v |= byte(c - '0')
				case c >= 'A' && c <= 'F':
					v |= byte(c - 'A' + 10)
				case c >= 'a' && c <= 'f':
					v |= byte(c - 'a' + 10)
				}
			}
			return string([]byte{v})
		}
	}
	return ""
}

// decodeGPT2Text maps a BPE token's code points back to bytes (llama_decode_text); a code
// point that stands for no byte is written as llama.cpp does, "[UNK_BYTE_0x..text]",
// except that the token's text is repeated only for tokens of at most maxEchoedText
// bytes: llama.cpp's piece grows with the square of the text's length, so one long token
// in a hostile vocabulary would take gigabytes at load.
func decodeGPT2Text(text string) string {
	if b, ok := gpt2Decode(text); ok {
		return string(b)
	}
	var sb strings.Builder
	for _, r := range text {
		if r >= 0 && int(r) < len(runeByte) && runeByte[r] >= 0 {
			sb.WriteByte(byte(runeByte[r]))
			continue
		}
		sb.WriteString("[UNK_BYTE_0x")
		for _, c := range appendCpt(nil, r) {
			fmt.Fprintf(&sb, "%02x", c)
		}
		if len(text) <= maxEchoedText {
			sb.WriteString(text)
		}
		sb.WriteString("]")
	}
	return sb.String()
}

// maxEchoedText is the longest token text that decodeGPT2Text repeats after each code
// point that stands for no byte (real vocabularies' tokens are far shorter).
const maxEchoedText = 256
