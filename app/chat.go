package app

import (
	"context"
	"fmt"
	"strings"

	"ember/inference/prompt"
	"ember/inference/tokenizer"
)

// Chat turns conversations into prompt tokens for one loaded model, with the chat
// template its file carries (or a builtin one for its architecture).
type Chat struct {
	tmpl     *prompt.Template
	tok      *tokenizer.Tokenizer
	bos, eos string
	// base is true for a model without a chat template whose family has none either
	// (e.g. the bundled story model): it continues the last user message as plain text.
	base bool
}

// NewChat prepares l's chat template.
func NewChat(l *Loaded) *Chat {
	src, _ := l.File.String("tokenizer.chat_template")
	c := &Chat{tok: l.Tokenizer, tmpl: prompt.Detect(src, l.File.Architecture())}
	if t := l.Tokenizer; t.BOS() >= 0 {
		c.bos = t.Piece(t.BOS())
	}
	if t := l.Tokenizer; t.EOS() >= 0 {
		c.eos = t.Piece(t.EOS())
	}
	// A template-less file whose vocabulary has no chat markers is a base model.
	c.base = src == "" && !hasChatMarkers(l.Tokenizer)
	return c
}

func hasChatMarkers(t *tokenizer.Tokenizer) bool {
	for _, marker := range []string{"<|im_start|>", "<|start_header_id|>", "<｜User｜>"} {
		ids := t.Encode(marker, tokenizer.EncodeOptions{ParseSpecial: true})
		if len(ids) == 1 {
			return true
		}
	}
	return false
}

// Tokens renders msgs (ending with the user's turn) and tokenizes the result. thinking
// reports that the prompt already opened a <think> block, so the model's output starts
// inside its reasoning.
func (c *Chat) Tokens(ctx context.Context, msgs []prompt.Message) (toks []int32, thinking bool, err error) {
	if c.base {
		var last string
		for _, m := range msgs {
			if m.Role == "user" {
				last = m.Content
			}
		}
		return c.tok.Encode(strings.TrimSpace(last), tokenizer.EncodeOptions{AddSpecial: true}), false, nil
	}
	text, err := c.tmpl.Render(ctx, msgs, prompt.Options{AddGenerationPrompt: true, BOSToken: c.bos, EOSToken: c.eos})
	if err != nil {
		return nil, false, fmt.Errorf("chat template: %w", err)
	}
	// The template writes BOS itself when it wants one; add it only when it did not.
	addBOS := c.bos == "" || !strings.HasPrefix(text, c.bos)
	toks = c.tok.Encode(text, tokenizer.EncodeOptions{AddSpecial: addBOS, ParseSpecial: true})
	thinking = strings.HasSuffix(strings.TrimRight(text, " \n"), "<think>")
	return toks, thinking, nil
}
