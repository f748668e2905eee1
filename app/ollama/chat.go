package ollama

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"ember/inference/jsonprefix"
	"ember/inference/prompt"
)

// chat serves POST /api/chat: decode, validate, render, generate, answer.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var req api.ChatRequest
	if e := h.decode(w, r, &req); e != nil {
		writeStatusError(w, e)
		return
	}
	if e := h.checkModel(req.Model); e != nil {
		writeStatusError(w, e)
		return
	}
	if len(req.Messages) == 0 { // Ollama's way to load (keep_alive 0: unload) a model: nothing to do here
		writeJSON(w, api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(),
			Message: api.Message{Role: "assistant"}, Done: true, DoneReason: loadReason(req.KeepAlive)})
		return
	}
	if e := checkThink(req.Think); e != nil {
		writeStatusError(w, e)
		return
	}
	defs, names, e := toolDefs(req.Tools)
	if e != nil {
		writeStatusError(w, e)
		return
	}
	msgs := make([]prompt.Message, len(req.Messages))
	for i, m := range req.Messages {
		if len(m.Images) > 0 {
			writeError(w, http.StatusBadRequest, req.Model+" does not support images")
			return
		}
		if m.Role == "" {
			writeError(w, http.StatusBadRequest, "messages: a message has no role")
			return
		}
		msgs[i] = prompt.Message{Role: m.Role, Content: m.Content, ReasoningContent: m.Thinking,
			ToolCalls: promptToolCalls(m.ToolCalls), ToolCallID: m.ToolCallID, Name: m.ToolName}
	}
	ereq, e := request(req.Options)
	if e != nil {
		writeStatusError(w, e)
		return
	}
	ro := runOpts{think: true, tools: names}
	var schema *jsonprefix.Schema
	if ro.json, schema, e = jsonFormat(req.Format); e != nil {
		writeStatusError(w, e)
		return
	}
	if req.TopLogprobs < 0 || req.TopLogprobs > 20 {
		writeError(w, http.StatusBadRequest, "top_logprobs must be between 0 and 20")
		return
	}
	ereq.Logprobs, ereq.TopLogprobs = req.Logprobs, req.TopLogprobs
	hideThinking := req.Think != nil && !req.Think.Bool()

	ctx := r.Context()
	text, inThink, err := h.renderChat(ctx, msgs, defs)
	if err != nil {
		writeError(w, http.StatusBadRequest, "the model's chat template cannot render these messages: "+err.Error())
		return
	}
	ereq.Prompt, ereq.ParseSpecial = text, true
	ro.startInThink = inThink
	ereq.JSON, ereq.ThinkFirst, ereq.JSONSchema = ro.json, ro.startInThink, schema // sampling keeps the reply a JSON object

	ch, cancel, e := h.start(ctx, ereq)
	if e != nil {
		writeStatusError(w, e)
		return
	}
	loaded := time.Now()
	shape := func(p piece) api.ChatResponse {
		m := api.Message{Role: "assistant", Content: p.content, ToolCalls: ollamaCalls(p.calls)}
		if !hideThinking {
			m.Thinking = p.thinking
		}
		resp := api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: m}
		if p.lp != nil && req.Logprobs {
			resp.Logprobs = []api.Logprob{h.logprob(p.lp)}
		}
		return resp
	}

	answer(h, w, req.Stream == nil || *req.Stream, ch, cancel, ro, hideThinking, req.Logprobs, shape,
		func(resp *api.ChatResponse, lps []api.Logprob, out outcome) {
			resp.Logprobs, resp.Done, resp.DoneReason, resp.Metrics = lps, true, out.reason, metrics(start, loaded, out.usage)
		})
}

// renderChat renders a conversation into the prompt. A last assistant message (without
// tool calls) is the start of the reply, for the model to continue, as Ollama's templates
// leave that message open: the conversation before it with the generation prompt, then
// its content (the reply holds only what follows). inThink reports whether the prompt
// leaves a reasoning section ("<think>") open.
func (h *Handler) renderChat(ctx context.Context, msgs []prompt.Message, defs []any) (text string, inThink bool, err error) {
	var prefill string
	if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" && len(msgs[n-1].ToolCalls) == 0 {
		prefill, msgs = msgs[n-1].Content, msgs[:n-1]
	}
	if text, err = h.b.Render(ctx, msgs, defs, true); err != nil {
		return "", false, fmt.Errorf("rendering %d messages: %w", len(msgs), err)
	}
	inThink = strings.HasSuffix(strings.TrimRight(text, " \t\r\n"), "<think>") && !strings.Contains(prefill, "</think>")
	return text + prefill, inThink, nil
}
