// Package openai serves OpenAI's chat completions, completions and models APIs over the
// loaded model, so editors and tools written for OpenAI can use it:
//
//	POST /v1/chat/completions   chat, streamed as server-sent events or not
//	POST /v1/completions        raw text completion (no chat template)
//	GET  /v1/models             the loaded model
//	GET  /v1/models/{model}
//
// Each handler decodes, validates, calls the Backend and streams (convention 10). The
// behaviour follows OpenAI's API reference; where Ember differs:
//
//   - n (1..8) completions are generated together (one batch, the prompt computed once)
//     with seeds seed, seed+1, ...; streamed, choice 0 streams to its end, then choice 1
//     (already generated meanwhile), and so on.
//   - Without seed a random one is drawn per request.
//   - response_format {"type":"json_object"}: sampling draws only tokens that keep the
//     reply (after a reasoning section) a prefix of one JSON object (engine.Request.JSON)
//     and the reply ends where the object closes; one that does not close within
//     max_tokens is answered, as Groq does, with a 400 invalid_request_error of code
//     "json_validate_failed" (in a stream: an error event instead of [DONE]).
//     {"type":"json_schema"} does the same with the object also matching the schema
//     (jsonprefix.Compile's subset: type, properties, required, additionalProperties,
//     items, enum of strings); a schema outside it is refused (400 unsupported_value).
//   - DeepSeek-R1-style replies "<think>...</think>answer" (or a prompt whose template
//     opened <think>) are split by package inference/reasoning into
//     message.reasoning_content and message.content, in streams too
//     (delta.reasoning_content), as DeepSeek's API does;
//     usage.completion_tokens_details.reasoning_tokens counts the reasoning's tokens.
//   - max_tokens beyond the context is allowed: generation ends at the context's end with
//     finish_reason "length". The prompt itself must fit: otherwise 400
//     context_length_exceeded.
//   - Tools (tools.go): "tools" reach the model's chat template (or the system turn when
//     the template takes none); the calls in the reply, in the form the model's family
//     writes them, come back as message.tool_calls (content null, finish_reason
//     "tool_calls"; streamed as one delta of tool_calls, the call's text held back).
//     tool_choice "none" leaves the tools out; "required" or a named function
//     constrains the reply to one call object, the name first, then the arguments to
//     that function's schema (when jsonprefix takes it; else any object).
//   - llama.cpp's top_k, min_p and repeat_penalty are accepted as extensions. top_p 0
//     keeps the most likely token alone, as OpenAI's nucleus of probability 0 does.
//   - A generation the engine ends itself (it is closing) is a 503 "unavailable"; in a
//     stream, an error event instead of [DONE].
//   - logprobs cover every generated token, the reasoning's included.
//   - An empty or absent "model" is refused like OpenAI does (400); a model name other
//     than the loaded one is a 404 model_not_found (a ":latest" suffix is ignored).
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"ember/inference/engine"
	"ember/inference/prompt"
)

// Backend is what the handlers need from the model: the engine's Generate, the model's
// name and context size, its chat template, and token texts for logprobs.
type Backend interface {
	Generate(ctx context.Context, req engine.Request) (<-chan engine.Event, error)
	ModelName() string
	ContextSize() int
	// Render renders a conversation into prompt text (special tokens as text; the
	// engine adds BOS); tools, when given, are tool definitions (OpenAI's form) for
	// the template, or written into the system turn when it does not read them.
	Render(ctx context.Context, msgs []prompt.Message, tools []any, addGenerationPrompt bool) (string, error)
	// TokenText is one token's text, possibly an incomplete UTF-8 sequence.
	TokenText(id int32) string
}

// Options configure a Handler.
type Options struct {
	// MaxBodyBytes caps request bodies (413 beyond); 0 means 8 MiB.
	MaxBodyBytes int64
	// WriteTimeout is how long one streamed write may block before the client counts
	// as gone (and its generation is cancelled); 0 means 60 s.
	WriteTimeout time.Duration
}

// Handler serves the OpenAI API. It is an http.Handler on its own, or registers its
// routes on a server's mux (Register).
type Handler struct {
	b       Backend
	opt     Options
	created int64 // the model card's creation time: when the handler was made
	mux     *http.ServeMux
}

// New returns a handler over b.
func New(b Backend, opt Options) *Handler {
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = 8 << 20
	}
	if opt.WriteTimeout <= 0 {
		opt.WriteTimeout = 60 * time.Second
	}
	h := &Handler{b: b, opt: opt, created: time.Now().Unix(), mux: http.NewServeMux()}
	h.Register(h.mux)
	return h
}

// Register adds the API's routes to mux, with OpenAI-shaped 404s for unknown /v1/ paths
// and 405s for known paths called with the wrong method.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/chat/completions", h.chat)
	mux.HandleFunc("POST /v1/completions", h.completions)
	mux.HandleFunc("GET /v1/models", h.models)
	mux.HandleFunc("GET /v1/models/{model...}", h.model)
	for _, p := range []string{"/v1/chat/completions", "/v1/completions"} {
		mux.HandleFunc(p, methodNotAllowed("POST"))
	}
	for _, p := range []string{"/v1/models", "/v1/models/{model...}"} {
		mux.HandleFunc(p, methodNotAllowed("GET"))
	}
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "unknown_url",
			message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")"})
	})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			message: "Method " + r.Method + " is not allowed for " + r.URL.Path + "; use " + allow + "."})
	}
}

func (h *Handler) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, modelList{Object: "list", Data: []modelCard{h.card()}})
}

func (h *Handler) model(w http.ResponseWriter, r *http.Request) {
	if e := h.checkModel(r.PathValue("model")); e != nil {
		writeError(w, e)
		return
	}
	writeJSON(w, h.card())
}

func (h *Handler) card() modelCard {
	return modelCard{ID: h.b.ModelName(), Object: "model", Created: h.created, OwnedBy: "ember"}
}

// checkModel accepts the loaded model's name, with or without ":latest".
func (h *Handler) checkModel(name string) *apiError {
	if name == "" {
		return invalid("model", "You must provide a model parameter.").withCode("missing_required_parameter")
	}
	if strings.TrimSuffix(name, ":latest") != strings.TrimSuffix(h.b.ModelName(), ":latest") {
		return &apiError{status: http.StatusNotFound, typ: "invalid_request_error", param: "model", code: "model_not_found",
			message: "The model `" + name + "` does not exist; this server has `" + h.b.ModelName() + "`."}
	}
	return nil
}

// decode reads a JSON request body of at most MaxBodyBytes into v.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	r.Body = http.MaxBytesReader(w, r.Body, h.opt.MaxBodyBytes)
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	// Only white space may follow the value: Decoder.More alone lets a stray ']' or '}'
	// through.
	if _, err := dec.Token(); err != io.EOF {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return decodeError(err)
		}
		return invalid("", "We could not parse the JSON body of your request (data after the JSON value). The OpenAI API expects a JSON payload.").withCode("invalid_json")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
