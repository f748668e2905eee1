package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"ember/app/reply"
	"ember/inference/engine"
)

// piece is one step of a choice's output: the text decided by this token (either part
// may be empty while text is held back) and the token's logprob when asked for.
type piece struct {
	reasoning, content string
	lp                 *engine.Logprob
}

// outcome is how a choice ended.
type outcome struct {
	finish          string // "stop" or "length"
	usage           engine.Usage
	reasoningTokens int
	failed          *apiError // the engine failed, or the reply broke the JSON mode
	gone            bool      // the client went away; nothing more can be sent
}

// runOpts choose the post-processing of a reply.
type runOpts struct {
	think        bool // split <think> reasoning from content
	startInThink bool // the prompt already opened <think>
	json         bool // response_format json_object (or a call object: tool_choice required)
	tools        toolSetup
}

// start begins one completion. Its context is the request's, so a client that goes
// away cancels it; the returned cancel ends it early (JSON closed, write failed).
// promptParam names the request field of the prompt, for errors about it.
func (h *Handler) start(ctx context.Context, req engine.Request, promptParam string) (<-chan engine.Event, context.CancelFunc, *apiError) {
	ctx, cancel := context.WithCancel(ctx)
	ch, err := h.b.Generate(ctx, req)
	if err != nil {
		e := generateError(ctx, err, h.b.ContextSize(), promptParam)
		cancel()
		return nil, nil, e
	}
	return ch, cancel, nil
}

// started are the choices of one request, all begun at once so that the engine
// generates them together (one batch; their common prompt computed once).
type started struct {
	chs     []<-chan engine.Event
	cancels []context.CancelFunc
}

// startAll begins n choices, start(i) starting choice i. On an error the ones already
// begun are cancelled.
func startAll(n int, start func(i int) (<-chan engine.Event, context.CancelFunc, *apiError)) (*started, *apiError) {
	st := &started{}
	for i := range n {
		ch, cancel, e := start(i)
		if e != nil {
			st.cancel()
			return nil, e
		}
		st.chs, st.cancels = append(st.chs, ch), append(st.cancels, cancel)
	}
	return st, nil
}

// cancel ends every choice not finished yet (the client went away or an error ended
// the response).
func (st *started) cancel() {
	for _, c := range st.cancels {
		c()
	}
}

// consume reads a completion's events to the end, passing each piece to emit
// (reply.Consume), and says how it ended in OpenAI's terms.
func consume(ch <-chan engine.Event, cancel context.CancelFunc, o runOpts, emit func(piece) error) outcome {
	sh := reply.NewShaper(o.think, o.startInThink, o.json)
	end := reply.Consume(ch, cancel, sh, func(r, c string, lp *engine.Logprob) error {
		return emit(piece{reasoning: r, content: c, lp: lp})
	})
	out := outcome{usage: end.Last.Usage, finish: end.Last.Finish, reasoningTokens: sh.ReasoningTokens, gone: end.Gone}
	switch {
	case out.gone:
	case end.JSONOver:
		out.finish = engine.FinishStop
	case end.Closed:
		// The engine ended it, not the client: the client is still there and must be
		// told (an error response or event, not an empty 200 or a cut stream).
		out.failed = unavailable()
	case end.Failed:
		out.failed = serverError("Generation failed: %v", end.Last.Err)
	}
	if o.json && !out.gone && out.failed == nil && !sh.JSONValid() && o.tools.schema != nil {
		out.failed = invalid("tool_choice", "Failed to generate a tool call: the model's reply did not complete the call's JSON object (sampling kept it one, but it did not close within max_tokens). Please raise max_tokens or adjust your prompt.").withCode("tool_call_failed")
	} else if o.json && !out.gone && out.failed == nil && !sh.JSONValid() {
		out.failed = invalid("response_format", "Failed to generate JSON: the model's reply did not complete a JSON object (sampling kept it one, but it did not close within max_tokens). Please raise max_tokens or adjust your prompt.").withCode("json_validate_failed")
	}
	return out
}

// sseWriter writes server-sent events as OpenAI streams them: "data: {json}\n\n", each
// flushed at once, ending with "data: [DONE]\n\n".
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	err     error // the first write error: the client is gone
}

func newSSE(w http.ResponseWriter, timeout time.Duration) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

// data sends one event with v as JSON.
func (s *sseWriter) data(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.raw(b)
}

func (s *sseWriter) raw(b []byte) error {
	if s.err != nil {
		return s.err
	}
	// A client that stops reading must not hold the engine forever: a write that
	// blocks past the timeout fails, and the caller cancels the generation.
	if err := s.rc.SetWriteDeadline(time.Now().Add(s.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = err
		return err
	}
	buf := make([]byte, 0, len(b)+8)
	buf = append(append(append(buf, "data: "...), b...), "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		s.err = err
		return err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = err
	}
	return s.err
}

// done ends the stream with [DONE].
func (s *sseWriter) done() { s.raw([]byte("[DONE]")) }

// close clears the write deadline, so it does not outlive the stream on a kept-alive
// connection.
func (s *sseWriter) close() { s.rc.SetWriteDeadline(time.Time{}) }

// Logprobs in OpenAI's shapes.

func (h *Handler) chatLogprob(lp *engine.Logprob) tokenLogprob {
	text := h.b.TokenText(lp.ID)
	t := tokenLogprob{Token: tokenString(text), Logprob: float64(lp.Logprob), Bytes: byteList(text), TopLogprobs: []topLogprob{}}
	for _, a := range lp.Top {
		at := h.b.TokenText(a.ID)
		t.TopLogprobs = append(t.TopLogprobs, topLogprob{Token: tokenString(at), Logprob: float64(a.Logprob), Bytes: byteList(at)})
	}
	return t
}

// addTextLogprob appends a token to the legacy completions logprobs; offset is the
// token's byte offset in the choice's text.
func (h *Handler) addTextLogprob(tl *textLogprobs, lp *engine.Logprob, offset int, top bool) int {
	text := h.b.TokenText(lp.ID)
	tl.Tokens = append(tl.Tokens, tokenString(text))
	tl.TokenLogprobs = append(tl.TokenLogprobs, float64(lp.Logprob))
	tl.TextOffset = append(tl.TextOffset, offset)
	if top {
		m := make(map[string]float64, len(lp.Top))
		for _, a := range lp.Top {
			m[tokenString(h.b.TokenText(a.ID))] = float64(a.Logprob)
		}
		tl.TopLogprobs = append(tl.TopLogprobs, m)
	}
	return len(text)
}

// tokenString is a token's text, or OpenAI's "bytes:\xNN..." for a token that is not
// valid UTF-8 on its own (part of a character).
func tokenString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	sb.WriteString("bytes:")
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&sb, "\\x%02x", s[i])
	}
	return sb.String()
}

func byteList(s string) []int {
	b := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		b[i] = int(s[i])
	}
	return b
}

// addUsage adds a choice's usage to the request's. The n choices of one prompt count
// its tokens once (countPrompt on the first of them); completion tokens add up.
func addUsage(u *usage, o outcome, countPrompt bool) {
	if countPrompt {
		u.PromptTokens += o.usage.PromptTokens
		u.PromptTokensDetails.CachedTokens += o.usage.CachedTokens
	}
	u.CompletionTokens += o.usage.CompletionTokens
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	acc, rej := o.usage.PredictionAccepted, o.usage.PredictionRejected
	if o.reasoningTokens > 0 || acc+rej > 0 {
		if u.CompletionTokensDetails == nil {
			u.CompletionTokensDetails = &completionTokensDetails{}
		}
		d := u.CompletionTokensDetails
		d.ReasoningTokens += o.reasoningTokens
		d.AcceptedPredictionTokens += acc
		d.RejectedPredictionTokens += rej
	}
}

func newID(prefix string) string {
	return fmt.Sprintf("%s%016x%08x", prefix, rand.Uint64(), rand.Uint32())
}
