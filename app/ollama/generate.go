package ollama

import (
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"ember/inference/jsonprefix"
	"ember/inference/prompt"
)

// generate serves POST /api/generate: the prompt, as a user message rendered with the
// chat template (after System, when given), or as it is when Raw.
func (h *Handler) generate(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var req api.GenerateRequest
	if e := h.decode(w, r, &req); e != nil {
		writeStatusError(w, e)
		return
	}
	if e := h.checkModel(req.Model); e != nil {
		writeStatusError(w, e)
		return
	}
	// An empty prompt is Ollama's way to load (or, keep_alive 0, unload) a model, the
	// system prompt notwithstanding; with a suffix it is code completion at a file's start.
	if req.Prompt == "" && req.Suffix == "" {
		writeJSON(w, api.GenerateResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Done: true, DoneReason: loadReason(req.KeepAlive)})
		return
	}
	if e := checkThink(req.Think); e != nil {
		writeStatusError(w, e)
		return
	}
	switch {
	case req.Raw && (req.System != "" || req.Template != "" || len(req.Context) > 0):
		writeError(w, http.StatusBadRequest, "raw mode does not support template, system, or context")
		return
	case len(req.Images) > 0:
		writeError(w, http.StatusBadRequest, req.Model+" does not support images")
		return
	case req.Template != "":
		writeError(w, http.StatusBadRequest, "template overrides are not supported")
		return
	}
	ereq, e := request(req.Options)
	if e != nil {
		writeStatusError(w, e)
		return
	}
	ro := runOpts{think: !req.Raw}
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
	text := req.Prompt
	if req.Suffix != "" { // fill in the middle: the prompt and suffix around the model's FIM tokens, no template
		ro.think = false
	} else if !req.Raw {
		var msgs []prompt.Message
		if req.System != "" {
			msgs = append(msgs, prompt.Message{Role: "system", Content: req.System})
		}
		msgs = append(msgs, prompt.Message{Role: "user", Content: req.Prompt})
		var err error
		if text, err = h.b.Render(ctx, msgs, nil, true); err != nil {
			writeError(w, http.StatusBadRequest, "the model's chat template cannot render this prompt: "+err.Error())
			return
		}
		ro.startInThink = strings.HasSuffix(strings.TrimRight(text, " \t\r\n"), "<think>")
	}
	ereq.Prompt, ereq.Suffix, ereq.ParseSpecial = text, req.Suffix, req.Suffix == "" // FIM prompts are plain text
	ereq.JSON, ereq.ThinkFirst, ereq.JSONSchema = ro.json, ro.startInThink, schema   // sampling keeps the reply a JSON object

	ch, cancel, e := h.start(ctx, ereq)
	if e != nil {
		writeStatusError(w, e)
		return
	}
	loaded := time.Now()
	reply := func(p piece) api.GenerateResponse {
		resp := api.GenerateResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Response: p.content}
		if !hideThinking {
			resp.Thinking = p.thinking
		}
		if p.lp != nil && req.Logprobs {
			resp.Logprobs = []api.Logprob{h.logprob(p.lp)}
		}
		return resp
	}

	answer(h, w, req.Stream == nil || *req.Stream, ch, cancel, ro, hideThinking, req.Logprobs, reply,
		func(resp *api.GenerateResponse, lps []api.Logprob, out outcome) {
			resp.Logprobs, resp.Done, resp.DoneReason, resp.Metrics = lps, true, out.reason, metrics(start, loaded, out.usage)
		})
}
