package tokenizer

import "strings"

// Indices into Tokenizer.fim.
const (
	fimPre = iota
	fimSuf
	fimMid
	fimPad
	fimRep
	fimSep
)

// Token texts llama.cpp recognises when the GGUF does not name the token (llama_vocab::
// load, "auto-detect special tokens by text"). Each list is tried in token id order; the
// first match fills an unset id.
var (
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
		"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomTexts = []string{"<|eom_id|>"}
	fimTexts = [6][]string{
		fimPre: {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"},
		fimSuf: {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"},
		fimMid: {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"},
		fimPad: {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"},
		fimRep: {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
		fimSep: {"<|file_sep|>"},
	}
	// eogTexts end generation wherever they appear in the vocabulary.
	eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
		"<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]",
		"[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
		"<｜end▁of▁sentence｜>", "[e~["}
	// alwaysRendered are set to user-defined (gpt-oss).
	alwaysRendered = []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}
)

// findEOG fills the EOT/EOM/FIM ids from token texts when unset, marks those tokens
// control, and builds the end-of-generation set, with llama.cpp's model workarounds.
func (t *Tokenizer) findEOG() {
	markControl := func(id int32) { t.attrs[id] |= attrControl }
	byText := func(texts []string) int32 {
		best := noToken
		for _, s := range texts {
			if id, ok := t.toID[s]; ok && (best == noToken || id < best) {
				best = id
			}
		}
		return best
	}
	detect := func(dst *int32, texts []string) {
		if *dst == noToken {
			if id := byText(texts); id != noToken {
				*dst = id
				markControl(id)
			}
		}
	}
	detect(&t.eot, eotTexts)
	detect(&t.eom, eomTexts)
	for i := range t.fim {
		detect(&t.fim[i], fimTexts[i])
	}

	t.eog = make([]bool, len(t.texts))
	for _, id := range []int32{t.fim[fimPad], t.fim[fimRep], t.fim[fimSep]} {
		if id != noToken {
			t.eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.toID[s]; ok {
			t.eog[id] = true
			markControl(id)
		}
	}
	for _, s := range alwaysRendered {
		if id, ok := t.toID[s]; ok {
			t.attrs[id] = attrUserDefined
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id != noToken {
			t.eog[id] = true
		}
	}

	// o200k_harmony / solar-open: "<|end|>" is not EOG when "<|return|>" and "<|call|>"
	// (or "<|calls|>" and "<|flush|>") are.
	has := func(s string) (int32, bool) {
		id, ok := t.toID[s]
		return id, ok && t.eog[id]
	}
	_, ret := has("<|return|>")
	_, call := has("<|call|>")
	_, calls := has("<|calls|>")
	_, flush := has("<|flush|>")
	if end, ok := has("<|end|>"); ok && ((ret && (call || calls)) || ((call || calls) && flush)) {
		t.eog[end] = false
		t.attrs[end] = attrUserDefined
	}
	// gemma4 / paddleocr: "</s>" is not EOG when "<|tool_response>" is.
	if _, tr := has("<|tool_response>"); tr {
		if s, ok := has("</s>"); ok {
			t.eog[s] = false
			t.attrs[s] = attrNormal
		}
	}
}

// nameHacks sets llama.cpp's per-model strip attributes, chosen by the lower-cased
// general.name: Phi-3's special tokens eat the whitespace after them.
func (t *Tokenizer) nameHacks(name string) {
	if !containsAny(name, "phi-3", "phi3") {
		return
	}
	for _, id := range t.specials {
		t.attrs[id] |= attrRStrip
	}
	if id, ok := t.toID["</s>"]; ok {
		t.attrs[id] |= attrRStrip
	}
	for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
		if id, ok := t.toID[s]; ok {
			t.attrs[id] &^= attrRStrip
		}
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
