package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"ember/inference/engine"
)

// completions serves POST /v1/completions: the prompt goes to the model as it is (no
// chat template; special-token text in it is recognised, as llama.cpp does).
func (h *Handler) completions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if e := h.decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	p, e := h.validateCompletion(&req)
	if e != nil {
		writeError(w, e)
		return
	}
	c := textCall{h: h, w: w, r: r, p: p, prompts: req.Prompt, echo: req.Echo, id: newID("cmpl-"), created: time.Now().Unix()}
	if req.Logprobs != nil {
		c.topLogprobs = *req.Logprobs > 0
	}
	if p.stream {
		c.stream()
	} else {
		c.complete()
	}
}

func (h *Handler) validateCompletion(req *completionRequest) (genParams, *apiError) {
	if e := h.checkModel(req.Model); e != nil {
		return genParams{}, e
	}
	if req.Prompt == nil {
		return genParams{}, invalid("prompt", "Missing required parameter: 'prompt'.").withCode("missing_required_parameter")
	}
	if len(req.Prompt) == 0 || len(req.Prompt) > maxPrompts {
		return genParams{}, invalid("prompt", "Invalid 'prompt': give 1..%d prompts, not %d.", maxPrompts, len(req.Prompt)).withCode("invalid_value")
	}
	p, e := req.params(req.MaxTokens, "max_tokens")
	if e != nil {
		return p, e
	}
	if req.Suffix != nil && *req.Suffix != "" {
		for _, pr := range req.Prompt {
			if pr.tokens != nil {
				return p, invalid("suffix", "'suffix' (fill in the middle) needs text prompts, not token arrays.").withCode("invalid_value")
			}
		}
		p.base.Suffix = *req.Suffix // the prompt is the text before the cursor
	}
	if req.BestOf != nil && *req.BestOf != int64(p.n) && *req.BestOf != 1 {
		return p, invalid("best_of", "'best_of' other than n is not supported.").withCode("unsupported_value")
	}
	if req.Logprobs != nil {
		if *req.Logprobs < 0 || *req.Logprobs > 20 {
			return p, invalid("logprobs", "Invalid 'logprobs': %d is outside 0..20.", *req.Logprobs).withCode("invalid_value")
		}
		if req.Echo {
			return p, invalid("logprobs", "'logprobs' together with 'echo' (the prompt's logprobs) is not supported.").withCode("unsupported_value")
		}
		p.base.Logprobs, p.base.TopLogprobs = true, int(*req.Logprobs)
	}
	return p, nil
}

// textCall is one completions request being answered; choice k is prompt k/n's (k%n)th
// completion.
type textCall struct {
	h           *Handler
	w           http.ResponseWriter
	r           *http.Request
	p           genParams
	prompts     promptList
	echo        bool
	topLogprobs bool
	id          string
	created     int64
}

func (c *textCall) choices() int { return len(c.prompts) * c.p.n }

// start begins choice k.
func (c *textCall) start(k int) (<-chan engine.Event, context.CancelFunc, *apiError) {
	pr := c.prompts[k/c.p.n]
	req := c.p.request(k % c.p.n)
	switch {
	case pr.tokens != nil:
		req.Tokens = pr.tokens
	case req.Suffix != "": // fill in the middle: plain text around the model's FIM tokens
		req.Prompt = pr.text
	default:
		req.Prompt, req.ParseSpecial = pr.text, true
	}
	return c.h.start(c.r.Context(), req, "prompt")
}

// echoText is the prompt text echo prepends to choice k.
func (c *textCall) echoText(k int) string {
	if !c.echo {
		return ""
	}
	pr := c.prompts[k/c.p.n]
	if pr.tokens == nil {
		return pr.text
	}
	var sb strings.Builder
	for _, id := range pr.tokens {
		sb.WriteString(c.h.b.TokenText(id))
	}
	return sb.String()
}

func (c *textCall) complete() {
	resp := textCompletion{ID: c.id, Object: "text_completion", Created: c.created, Model: c.h.b.ModelName(),
		SystemFingerprint: fingerprint, Usage: &usage{}}
	st, e := startAll(c.choices(), c.start)
	if e != nil {
		writeError(c.w, e)
		return
	}
	defer st.cancel()
	for k := range c.choices() {
		ch, cancel := st.chs[k], st.cancels[k]
		var text strings.Builder
		text.WriteString(c.echoText(k))
		var lps *textLogprobs
		if c.p.base.Logprobs {
			lps = &textLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TextOffset: []int{}}
		}
		off := 0
		out := consume(ch, cancel, runOpts{}, func(pc piece) error {
			text.WriteString(pc.content)
			if lps != nil && pc.lp != nil {
				off += c.h.addTextLogprob(lps, pc.lp, off, c.topLogprobs)
			}
			return nil
		})
		if out.gone {
			return
		}
		if out.failed != nil {
			writeError(c.w, out.failed)
			return
		}
		finish := out.finish
		resp.Choices = append(resp.Choices, textChoice{Text: text.String(), Index: k, Logprobs: lps, FinishReason: &finish})
		addUsage(resp.Usage, out, k%c.p.n == 0) // each prompt counts once

	}
	writeJSON(c.w, resp)
}

func (c *textCall) stream() {
	st, e := startAll(c.choices(), c.start)
	if e != nil {
		writeError(c.w, e)
		return
	}
	defer st.cancel()
	s := newSSE(c.w, c.h.opt.WriteTimeout)
	defer s.close()
	var u usage
	for k := range c.choices() {
		ch, cancel := st.chs[k], st.cancels[k]
		if t := c.echoText(k); t != "" && c.chunk(s, textChoice{Text: t, Index: k}) != nil {
			cancel()
			return
		}
		off := 0
		out := consume(ch, cancel, runOpts{}, func(pc piece) error {
			tc := textChoice{Text: pc.content, Index: k}
			if c.p.base.Logprobs && pc.lp != nil {
				tc.Logprobs = &textLogprobs{Tokens: []string{}, TokenLogprobs: []float64{}, TextOffset: []int{}}
				off += c.h.addTextLogprob(tc.Logprobs, pc.lp, off, c.topLogprobs)
			}
			return c.chunk(s, tc)
		})
		if out.gone {
			return
		}
		if out.failed != nil {
			s.data(out.failed.body())
			return
		}
		finish := out.finish
		if c.chunk(s, textChoice{Index: k, FinishReason: &finish}) != nil {
			return
		}
		addUsage(&u, out, k%c.p.n == 0)
	}
	if c.p.includeUsage {
		b, _ := json.Marshal(u)
		s.data(textCompletionChunk{ID: c.id, Object: "text_completion", Created: c.created, Model: c.h.b.ModelName(),
			SystemFingerprint: fingerprint, Choices: []textChoice{}, Usage: b})
	}
	s.done()
}

func (c *textCall) chunk(s *sseWriter, tc textChoice) error {
	ch := textCompletionChunk{ID: c.id, Object: "text_completion", Created: c.created, Model: c.h.b.ModelName(),
		SystemFingerprint: fingerprint, Choices: []textChoice{tc}}
	if c.p.includeUsage {
		ch.Usage = json.RawMessage("null")
	}
	return s.data(ch)
}
