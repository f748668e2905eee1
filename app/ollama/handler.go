// Package ollama serves the Ollama API over the loaded model, with the wire types of
// github.com/ollama/ollama/api, so tools written for Ollama (and Ollama's own Go client)
// can use it:
//
//	POST /api/chat       chat, streamed as NDJSON by default ("stream": false: one object)
//	POST /api/generate   completion of a prompt (templated, or "raw")
//	GET  /api/tags       the loaded model
//	POST /api/show       its details, metadata and template
//	GET  /api/ps         the running model
//	GET  /api/version    the Ollama API version followed
//	GET  /               "Ollama is running" (clients probe it)
//
// Errors are {"error":"..."} with the status Ollama uses (400, 404 "model 'x' not found"
// for an unknown model, 500); an error after a stream began is a last line
// {"error":"..."}. As in Ollama, a chat whose last message is the assistant's continues
// that message; an empty conversation or prompt answers done_reason "load" ("unload"
// with keep_alive 0); raw with system, template or context is a 400, and so are the
// think levels ("low", "medium", "high": gpt-oss only). Where Ember differs from Ollama:
//
//   - one model, the loaded one: names compare without ":latest" and case; /api/pull,
//     /api/create, /api/delete, /api/copy, /api/push, /api/embed and /api/embeddings
//     answer 501;
//   - options: temperature, top_k, top_p (0: the most likely token alone, as llama.cpp
//     reads it), min_p, seed (-1 random), num_predict (-1 and
//     -2: to the end of the context), stop, repeat_penalty, repeat_last_n (0 off, -1 all),
//     presence_penalty, frequency_penalty; Ollama's defaults (api.DefaultOptions). The
//     runner options (num_ctx, num_gpu, ...) are ignored: the engine is already loaded;
//   - thinking: a "<think>...</think>" reply (R1 style) is split by inference/reasoning
//     into message.thinking (response.thinking for /api/generate) and the content.
//     "think": false hides the thinking, but cannot stop a model that always thinks;
//     "think": true is taken by any model (Ollama refuses it, 400, for a model without
//     the thinking capability);
//   - "format": "json" samples only tokens that keep the reply a prefix of one JSON
//     object and ends it where the object closes, failing one that does not close within
//     num_predict; a JSON schema as format does the same with the object matching it
//     (jsonprefix.Compile's subset; other schemas are refused, 400);
//   - "tools" reach the chat template, and the reply's calls come back as
//     message.tool_calls (tools.go);
//   - images and template overrides are refused (400), and a suffix where the
//     model has no fill-in-the-middle tokens; the deprecated
//     "context" of /api/generate is ignored and never returned; keep_alive is ignored
//     (the model stays loaded); a prompt longer than the context is a 400, never
//     truncated; load_duration is the time until the generation was accepted.
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"ember/inference/engine"
	"ember/inference/prompt"
)

// Version is the Ollama release whose API (package api of github.com/ollama/ollama)
// this package follows; /api/version reports it unless Options.Version is set, because
// clients compare it against the Ollama versions that introduced features.
const Version = "0.17.4"

// Backend is what the handlers need from the model.
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
	// Template is the chat template's source ("" when there is none).
	Template() string
	// Infill reports whether the model has fill-in-the-middle tokens (a suffix works).
	Infill() bool
	ModelDetails() api.ModelDetails
	// ModelInfo is the model file's metadata by key; callers do not modify it.
	ModelInfo() map[string]any
	ModelSize() int64 // bytes
	ModelDigest() string
	ModifiedAt() time.Time
}

// Options configure a Handler.
type Options struct {
	// MaxBodyBytes caps request bodies (413 beyond); 0 means 8 MiB.
	MaxBodyBytes int64
	// WriteTimeout is how long one streamed write may block before the client counts
	// as gone (and its generation is cancelled); 0 means 60 s.
	WriteTimeout time.Duration
	// Version is what /api/version reports; "" means Version.
	Version string
}

// Handler serves the Ollama API. It is an http.Handler on its own, or registers its
// routes on a server's mux (Register).
type Handler struct {
	b   Backend
	opt Options
	mux *http.ServeMux
}

// New returns a handler over b.
func New(b Backend, opt Options) *Handler {
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = 8 << 20
	}
	if opt.WriteTimeout <= 0 {
		opt.WriteTimeout = 60 * time.Second
	}
	if opt.Version == "" {
		opt.Version = Version
	}
	h := &Handler{b: b, opt: opt, mux: http.NewServeMux()}
	h.Register(h.mux)
	return h
}

// Register adds the API's routes to mux, with {"error"} 404s for unknown /api/ paths,
// 405s for known paths called with the wrong method, and 501s for Ollama's model
// management routes.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("Ollama is running"))
	})
	mux.HandleFunc("POST /api/chat", h.chat)
	mux.HandleFunc("POST /api/generate", h.generate)
	mux.HandleFunc("GET /api/tags", h.tags)
	mux.HandleFunc("POST /api/show", h.show)
	mux.HandleFunc("GET /api/ps", h.ps)
	mux.HandleFunc("GET /api/version", h.version)
	for p, m := range map[string]string{"/api/chat": "POST", "/api/generate": "POST", "/api/show": "POST",
		"/api/tags": "GET", "/api/ps": "GET", "/api/version": "GET"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", m)
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed for %s; use %s", r.Method, r.URL.Path, m))
		})
	}
	for _, p := range []string{"/api/pull", "/api/push", "/api/create", "/api/copy", "/api/delete", "/api/blobs/"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotImplemented, r.URL.Path+" is not supported by Ember: it serves the one model it has loaded")
		})
	}
	for _, p := range []string{"/api/embed", "/api/embeddings"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotImplemented, r.URL.Path+" is not supported by Ember: it does not compute embeddings")
		})
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "unknown endpoint "+r.Method+" "+r.URL.Path)
	})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// statusError is an error answered as {"error": msg} with a status.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

func badRequest(format string, args ...any) *statusError {
	return &statusError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func writeStatusError(w http.ResponseWriter, e *statusError) { writeError(w, e.status, e.msg) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v)
}

// decode reads a JSON request body of at most MaxBodyBytes into v.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) *statusError {
	r.Body = http.MaxBytesReader(w, r.Body, h.opt.MaxBodyBytes)
	err := json.NewDecoder(r.Body).Decode(v)
	var mb *http.MaxBytesError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mb):
		return &statusError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", mb.Limit)}
	case errors.As(err, &te) && te.Field != "":
		return badRequest("invalid value for %q: cannot use %s as %s", te.Field, te.Value, te.Type)
	case errors.Is(err, io.EOF):
		return badRequest("missing request body")
	}
	return badRequest("invalid JSON: %v", err)
}

// tagged is the model's name as Ollama lists it, with a tag.
func (h *Handler) tagged() string {
	n := h.b.ModelName()
	if !strings.Contains(n, ":") {
		n += ":latest"
	}
	return n
}

// checkModel accepts the loaded model's name, with or without ":latest", in any case.
func (h *Handler) checkModel(name string) *statusError {
	if name == "" {
		return badRequest("model is required")
	}
	if !strings.EqualFold(strings.TrimSuffix(name, ":latest"), strings.TrimSuffix(h.b.ModelName(), ":latest")) {
		// Ollama's wording, which clients match, then what this server has.
		return &statusError{http.StatusNotFound, fmt.Sprintf("model '%s' not found (this server has %q)", name, h.tagged())}
	}
	return nil
}

// genError maps an error of Backend.Generate or Render to a response.
func genError(ctx context.Context, err error, contextSize int, model string) *statusError {
	switch {
	case errors.Is(err, engine.ErrContextTooLong):
		return badRequest("the prompt does not fit in the model's context of %d tokens (%v)", contextSize, err)
	case errors.Is(err, engine.ErrNoInfill):
		return badRequest("%s does not support insert (suffix): its vocabulary has no fill-in-the-middle tokens", model)
	case errors.Is(err, engine.ErrClosed):
		return &statusError{http.StatusServiceUnavailable, "the engine is shutting down"}
	case ctx.Err() != nil:
		return &statusError{499, "client closed the request"}
	}
	return badRequest("%v", err)
}
