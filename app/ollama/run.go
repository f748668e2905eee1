package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ollama/ollama/api"

	"ember/app/reply"
	"ember/inference/engine"
	"ember/inference/jsonprefix"
	"ember/inference/sample"
)

const maxStops = 16

// request turns Ollama's options, with Ollama's defaults, into an engine request.
func request(opts map[string]any) (engine.Request, *statusError) {
	o := api.DefaultOptions()
	if err := o.FromMap(opts); err != nil {
		return engine.Request{}, badRequest("%v", err)
	}
	for _, f := range []struct {
		name   string
		v      float32
		lo, hi float32
	}{
		{"temperature", o.Temperature, 0, 100},
		{"top_p", o.TopP, 0, 1},
		{"min_p", o.MinP, 0, 1},
		{"repeat_penalty", o.RepeatPenalty, 0, 100},
		{"presence_penalty", o.PresencePenalty, -100, 100},
		{"frequency_penalty", o.FrequencyPenalty, -100, 100},
	} {
		if math.IsNaN(float64(f.v)) || f.v < f.lo || f.v > f.hi {
			return engine.Request{}, badRequest("option %q: %v is outside %v..%v", f.name, f.v, f.lo, f.hi)
		}
	}
	switch {
	case o.TopK < 0:
		return engine.Request{}, badRequest("option \"top_k\": %d is negative", o.TopK)
	case o.NumPredict < -2 || o.NumPredict > math.MaxInt32:
		return engine.Request{}, badRequest("option \"num_predict\": %d is outside -2..%d", o.NumPredict, math.MaxInt32)
	case o.RepeatLastN < -1:
		return engine.Request{}, badRequest("option \"repeat_last_n\": %d is below -1", o.RepeatLastN)
	case len(o.Stop) > maxStops:
		return engine.Request{}, badRequest("option \"stop\": at most %d stop sequences", maxStops)
	}
	r := engine.Request{Sampling: sample.Params{
		Temperature: o.Temperature, TopK: o.TopK, TopP: o.TopP, MinP: o.MinP,
		Penalties: sample.Penalties{Repeat: o.RepeatPenalty, Presence: o.PresencePenalty, Frequency: o.FrequencyPenalty, LastN: o.RepeatLastN},
	}}
	if o.TopP == 0 {
		// llama.cpp's top-p of 0 keeps the most likely token alone; the sampler reads
		// TopP 0 as "keep all", so say it with top-k.
		r.Sampling.TopP, r.Sampling.TopK = 1, 1
	}
	if o.RepeatLastN == 0 { // Ollama: 0 turns the penalties off
		r.Sampling.Penalties = sample.Penalties{}
	}
	if o.Seed < 0 {
		r.Sampling.Seed = rand.Uint64()
	} else {
		r.Sampling.Seed = uint64(o.Seed)
	}
	if o.NumPredict > 0 {
		r.MaxTokens = o.NumPredict
	}
	for _, s := range o.Stop {
		if s != "" {
			r.Stop = append(r.Stop, s)
		}
	}
	return r, nil
}

// jsonFormat reads "format": "" or null (free text), "json" (a JSON object), or a JSON
// schema (an object matching it: jsonprefix.Compile's subset; others are refused).
func jsonFormat(f json.RawMessage) (bool, *jsonprefix.Schema, *statusError) {
	f = bytes.TrimSpace(f)
	switch {
	case len(f) == 0 || string(f) == "null" || string(f) == `""`:
		return false, nil, nil
	case string(f) == `"json"`:
		return true, nil, nil
	case f[0] == '{':
		var v any
		if err := json.Unmarshal(f, &v); err != nil {
			return false, nil, badRequest("format: %v", err)
		}
		s, err := jsonprefix.Compile(v)
		if err != nil {
			return false, nil, badRequest("format: this JSON schema is not supported: %v", err)
		}
		if !s.Object() {
			return false, nil, badRequest("format: the schema must describe an object")
		}
		return true, s, nil
	}
	return false, nil, badRequest("format: %s is not \"json\" or a JSON schema", f)
}

// checkThink refuses the think levels ("low", "medium", "high"), as Ollama does for every
// model but gpt-oss (whose harmony format Ember does not speak); true and false are taken.
func checkThink(t *api.ThinkValue) *statusError {
	if t.IsString() {
		return badRequest("think value %q is not supported for this model", t.String())
	}
	return nil
}

// loadReason is the done_reason of a request with nothing to generate, Ollama's way to
// load a model ("load") or, with keep_alive 0, to unload it ("unload": Ember keeps its
// one model loaded, but answers as Ollama does).
func loadReason(keepAlive *api.Duration) string {
	if keepAlive != nil && keepAlive.Duration == 0 {
		return "unload"
	}
	return "load"
}

// piece is one step of a reply.
type piece struct {
	thinking, content string
	lp                *engine.Logprob
	calls             []reply.Call // the reply's tool calls (at its end)
}

// outcome is how a reply ended.
type outcome struct {
	reason string // done_reason: "stop" or "length"
	usage  engine.Usage
	failed *statusError
	gone   bool // the client went away
}

type runOpts struct {
	think, startInThink, json bool
	tools                     []string // the tools a reply may call (nil: calls are not looked for)
}

// start begins a generation under the request's context; cancel ends it early.
func (h *Handler) start(ctx context.Context, req engine.Request) (<-chan engine.Event, context.CancelFunc, *statusError) {
	ctx, cancel := context.WithCancel(ctx)
	ch, err := h.b.Generate(ctx, req)
	if err != nil {
		e := genError(ctx, err, h.b.ContextSize(), h.b.ModelName())
		cancel()
		return nil, nil, e
	}
	return ch, cancel, nil
}

// consume reads a generation's events to the end, passing each piece to emit
// (reply.Consume), and says how it ended in Ollama's terms.
func consume(ch <-chan engine.Event, cancel context.CancelFunc, o runOpts, emit func(piece) error) outcome {
	sh := reply.NewShaper(o.think, o.startInThink, o.json)
	end := reply.Consume(ch, cancel, sh, func(r, c string, lp *engine.Logprob) error {
		return emit(piece{thinking: r, content: c, lp: lp})
	})
	out := outcome{usage: end.Last.Usage, reason: end.Last.Finish, gone: end.Gone}
	switch {
	case out.gone:
	case end.JSONOver:
		out.reason = engine.FinishStop
	case end.Closed:
		// The engine ended it (the model unloaded, the app stopping) while the client
		// waits: it is told, not left with an empty reply or a cut stream.
		out.failed = &statusError{http.StatusServiceUnavailable, "the engine is shutting down"}
	case end.Failed:
		out.failed = &statusError{http.StatusInternalServerError, "generation failed: " + errString(end.Last.Err)}
	}
	if o.json && !out.gone && out.failed == nil && !sh.JSONValid() {
		out.failed = badRequest("format json: the model's reply did not complete a JSON object within num_predict")
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return "the stream ended early"
	}
	return err.Error()
}

// answer sends a reply: streamed, one object per piece (reply(p)) and a final one
// (reply of nothing, completed by final); or, not streamed, one object of the whole
// reply completed by final. A failure is an error status, or after the stream began a
// last {"error"} line.
func answer[T any](h *Handler, w http.ResponseWriter, stream bool, ch <-chan engine.Event, cancel context.CancelFunc,
	ro runOpts, hideThinking, logprobs bool, shape func(piece) T, final func(*T, []api.Logprob, outcome)) {
	if !stream {
		var content, thinking strings.Builder
		var lps []api.Logprob
		out := consume(ch, cancel, ro, func(p piece) error {
			content.WriteString(p.content)
			thinking.WriteString(p.thinking)
			if p.lp != nil && logprobs {
				lps = append(lps, h.logprob(p.lp))
			}
			return nil
		})
		if out.gone {
			return
		}
		if out.failed != nil {
			writeStatusError(w, out.failed)
			return
		}
		p := piece{content: content.String(), thinking: thinking.String()}
		if ro.tools != nil {
			p.content, p.calls = reply.ParseCalls(p.content, ro.tools)
		}
		resp := shape(p)
		final(&resp, lps, out)
		writeJSON(w, resp)
		return
	}
	var ts *reply.ToolStream // holds back what may be tool calls
	if ro.tools != nil {
		ts = reply.NewToolStream(ro.tools)
	}
	s := newNDJSON(w, h.opt.WriteTimeout)
	defer s.close()
	out := consume(ch, cancel, ro, func(p piece) error {
		if ts != nil {
			p.content = ts.Push(p.content)
		}
		if (hideThinking || p.thinking == "") && p.content == "" && (p.lp == nil || !logprobs) {
			return nil
		}
		return s.send(shape(p))
	})
	if out.gone {
		return
	}
	if out.failed != nil {
		s.send(map[string]string{"error": out.failed.msg})
		return
	}
	if ts != nil {
		if rest, calls := ts.Finish(); rest != "" || calls != nil {
			if s.send(shape(piece{content: rest, calls: calls})) != nil {
				return
			}
		}
	}
	resp := shape(piece{})
	final(&resp, nil, out)
	s.send(resp)
}

// metrics are Ollama's timing fields for a finished reply. The model is always loaded,
// so load_duration (which Ollama always sends) is the time from the request's start to
// its generation being accepted (loaded).
func metrics(start, loaded time.Time, u engine.Usage) api.Metrics {
	return api.Metrics{
		TotalDuration:      time.Since(start),
		LoadDuration:       max(loaded.Sub(start), time.Nanosecond),
		PromptEvalCount:    u.PromptTokens,
		PromptEvalDuration: u.PromptTime,
		EvalCount:          u.CompletionTokens,
		EvalDuration:       u.GenTime,
	}
}

// logprob is a token's logprob in Ollama's shape.
func (h *Handler) logprob(lp *engine.Logprob) api.Logprob {
	text := h.b.TokenText(lp.ID)
	out := api.Logprob{TokenLogprob: api.TokenLogprob{Token: validText(text), Logprob: float64(lp.Logprob), Bytes: byteList(text)}}
	for _, a := range lp.Top {
		at := h.b.TokenText(a.ID)
		out.TopLogprobs = append(out.TopLogprobs, api.TokenLogprob{Token: validText(at), Logprob: float64(a.Logprob), Bytes: byteList(at)})
	}
	return out
}

func validText(s string) string { return strings.ToValidUTF8(s, string(utf8.RuneError)) }

func byteList(s string) []int {
	b := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		b[i] = int(s[i])
	}
	return b
}

// ndjson writes a stream of JSON objects, one a line, each flushed at once.
type ndjson struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	err     error // the first write error: the client is gone
}

func newNDJSON(w http.ResponseWriter, timeout time.Duration) *ndjson {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &ndjson{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (s *ndjson) send(v any) error {
	if s.err != nil {
		return s.err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	// A client that stops reading must not hold the engine forever.
	if err := s.rc.SetWriteDeadline(time.Now().Add(s.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = err
		return err
	}
	if _, err := s.w.Write(append(b, '\n')); err != nil {
		s.err = err
		return err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = err
	}
	return s.err
}

// close clears the write deadline so it does not outlive the stream.
func (s *ndjson) close() { s.rc.SetWriteDeadline(time.Time{}) }
