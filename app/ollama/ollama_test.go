package ollama

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"ember/inference/engine"
	"ember/inference/prompt"
)

// newClient serves h and returns Ollama's own Go client for it.
func newClient(t *testing.T, h http.Handler) (*api.Client, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return api.NewClient(u, http.DefaultClient), srv.URL
}

func ptr[T any](v T) *T { return &v }

var storyMsgs = []api.Message{{Role: "user", Content: "Once upon a time"}}

// TestClientChat: the official client streams /api/chat; the pieces concatenate to the
// non-streamed reply for the same seed, and the final object has the counts.
func TestClientChat(t *testing.T) {
	c, _ := newClient(t, New(newTestBackend(t), Options{}))
	ctx := context.Background()
	opts := map[string]any{"seed": 42, "temperature": 0.9, "num_predict": 30}

	var streamed strings.Builder
	var last api.ChatResponse
	n := 0
	err := c.Chat(ctx, &api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Options: opts}, func(r api.ChatResponse) error {
		if last.Done {
			t.Fatal("a response after done")
		}
		if r.Model != "stories260K" || r.Message.Role != "assistant" || r.CreatedAt.IsZero() {
			t.Fatalf("response %+v", r)
		}
		streamed.WriteString(r.Message.Content)
		last = r
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 || !last.Done || last.DoneReason != "length" || last.EvalCount != 30 || last.PromptEvalCount == 0 || last.TotalDuration <= 0 {
		t.Fatalf("%d responses, last %+v", n, last)
	}

	var whole api.ChatResponse
	calls := 0
	err = c.Chat(ctx, &api.ChatRequest{Model: "stories260K:latest", Messages: storyMsgs, Options: opts, Stream: ptr(false)}, func(r api.ChatResponse) error {
		whole = r
		calls++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || !whole.Done || whole.Message.Content != streamed.String() || whole.EvalCount != 30 {
		t.Fatalf("%d calls; whole %+v; streamed %q", calls, whole, streamed.String())
	}
}

// TestClientGenerate: /api/generate through the client, templated and raw, with stop
// and logprobs.
func TestClientGenerate(t *testing.T) {
	c, _ := newClient(t, New(newTestBackend(t), Options{}))
	ctx := context.Background()
	gen := func(req *api.GenerateRequest) (string, api.GenerateResponse) {
		t.Helper()
		var sb strings.Builder
		var last api.GenerateResponse
		if err := c.Generate(ctx, req, func(r api.GenerateResponse) error {
			sb.WriteString(r.Response)
			last = r
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return sb.String(), last
	}
	greedy := map[string]any{"temperature": 0, "num_predict": 40}
	text, last := gen(&api.GenerateRequest{Model: "stories260K", Prompt: "Once upon a time", Options: greedy})
	if text == "" || !last.Done || last.EvalCount != 40 {
		t.Fatalf("%q %+v", text, last)
	}
	raw, _ := gen(&api.GenerateRequest{Model: "stories260K", Prompt: "Once upon a time", Raw: true, Options: greedy, Stream: ptr(false)})
	if raw != text { // the test template joins contents: the same prompt
		t.Errorf("raw %q, templated %q", raw, text)
	}
	words := strings.Fields(text)
	stop := " " + words[3]
	cut, last := gen(&api.GenerateRequest{Model: "stories260K", Prompt: "Once upon a time", Options: map[string]any{"temperature": 0, "num_predict": 40, "stop": []any{stop}}})
	if want := text[:strings.Index(text, stop)]; cut != want || last.DoneReason != "stop" {
		t.Errorf("stop %q: %q (%s), want %q", stop, cut, last.DoneReason, want)
	}
	var lps []api.Logprob
	if err := c.Generate(ctx, &api.GenerateRequest{Model: "stories260K", Prompt: "Once upon a time", Options: greedy, Logprobs: true, TopLogprobs: 2}, func(r api.GenerateResponse) error {
		lps = append(lps, r.Logprobs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(lps) != 40 || len(lps[0].TopLogprobs) != 2 || lps[0].Token != lps[0].TopLogprobs[0].Token || lps[0].Logprob > 0 {
		t.Fatalf("logprobs %+v", lps)
	}
}

// TestClientModels: tags, show, ps, version and the heartbeat through the client.
func TestClientModels(t *testing.T) {
	c, _ := newClient(t, New(newTestBackend(t), Options{}))
	ctx := context.Background()
	if err := c.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := c.List(ctx)
	if err != nil || len(l.Models) != 1 || l.Models[0].Name != "stories260K:latest" || l.Models[0].Details.Family != "llama" || l.Models[0].Size == 0 {
		t.Fatalf("%+v %v", l, err)
	}
	s, err := c.Show(ctx, &api.ShowRequest{Model: "stories260K"})
	if err != nil || s.Details.Format != "gguf" || s.ModelInfo["general.architecture"] != "llama" || len(s.Capabilities) == 0 {
		t.Fatalf("%+v %v", s, err)
	}
	ps, err := c.ListRunning(ctx)
	if err != nil || len(ps.Models) != 1 || ps.Models[0].ContextLength != 256 {
		t.Fatalf("%+v %v", ps, err)
	}
	v, err := c.Version(ctx)
	if err != nil || v != Version {
		t.Fatalf("%q %v", v, err)
	}
	_, err = c.Show(ctx, &api.ShowRequest{Model: "llama3"})
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != 404 || !strings.Contains(se.ErrorMessage, "not found") {
		t.Fatalf("show unknown: %v", err)
	}
}

// TestClientErrors: the client sees Ollama's {"error"} errors with their statuses.
func TestClientErrors(t *testing.T) {
	c, base := newClient(t, New(newTestBackend(t), Options{MaxBodyBytes: 2048}))
	ctx := context.Background()
	nop := func(api.ChatResponse) error { return nil }
	long := strings.Repeat("Once upon a time there was a cat. ", 100)
	for _, tc := range []struct {
		name   string
		req    api.ChatRequest
		status int
	}{
		{"unknown model", api.ChatRequest{Model: "llama3", Messages: storyMsgs}, 404},
		{"no model", api.ChatRequest{Messages: storyMsgs}, 400},
		{"bad option type", api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Options: map[string]any{"temperature": "hot"}}, 400},
		{"negative temperature", api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Options: map[string]any{"temperature": -1}}, 400},
		{"top_p 3", api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Options: map[string]any{"top_p": 3}}, 400},
		{"tool without a name", api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Tools: api.Tools{{Type: "function"}}}, 400},
		{"tool of another type", api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Tools: api.Tools{{Type: "retrieval", Function: api.ToolFunction{Name: "a"}}}}, 400},
		{"images", api.ChatRequest{Model: "stories260K", Messages: []api.Message{{Role: "user", Content: "x", Images: []api.ImageData{{1}}}}}, 400},
		{"unsupported schema", api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Format: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/x"}}}`)}, 400},
		{"schema of no object", api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Format: json.RawMessage(`{"type":"string"}`)}, 400},
		{"context too long", api.ChatRequest{Model: "stories260K", Messages: []api.Message{{Role: "user", Content: long[:1500]}}}, 400},
		{"body too large", api.ChatRequest{Model: "stories260K", Messages: []api.Message{{Role: "user", Content: long}}}, 413},
	} {
		err := c.Chat(ctx, &tc.req, nop)
		var se api.StatusError
		if !errors.As(err, &se) || se.StatusCode != tc.status || se.ErrorMessage == "" {
			t.Errorf("%s: %v, want status %d", tc.name, err, tc.status)
		}
	}
	// A suffix (insert) on a model without fill-in-the-middle tokens.
	err := c.Generate(ctx, &api.GenerateRequest{Model: "stories260K", Prompt: "Once upon", Suffix: " time."},
		func(api.GenerateResponse) error { return nil })
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != 400 || !strings.Contains(se.ErrorMessage, "does not support insert") {
		t.Errorf("suffix: %v, want a 400 saying the model does not support insert", err)
	}
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/api/chat", `{"model":`},
		{"POST", "/api/generate", ``},
		{"GET", "/api/chat", ``},
		{"POST", "/api/nothing", `{}`},
		{"POST", "/api/pull", `{"model":"x"}`},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e map[string]string
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if err != nil || len(e) != 1 || e["error"] == "" || resp.StatusCode < 400 {
			t.Errorf("%s %s: %d %v %v", tc.method, tc.path, resp.StatusCode, e, err)
		}
	}
}

// TestLoad: an empty conversation or prompt is Ollama's "load the model" call.
func TestLoad(t *testing.T) {
	c, _ := newClient(t, New(newTestBackend(t), Options{}))
	var r api.ChatResponse
	if err := c.Chat(context.Background(), &api.ChatRequest{Model: "stories260K"}, func(x api.ChatResponse) error { r = x; return nil }); err != nil {
		t.Fatal(err)
	}
	if !r.Done || r.DoneReason != "load" {
		t.Errorf("%+v", r)
	}
}

// TestThinking: a template that opens <think> makes the reply thinking; think:false
// hides it.
func TestThinking(t *testing.T) {
	b := newTestBackend(t)
	tmpl, err := prompt.Parse("{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}<think>\n{% endif %}")
	if err != nil {
		t.Fatal(err)
	}
	b.Tmpl = tmpl
	c, _ := newClient(t, New(b, Options{}))
	opts := map[string]any{"temperature": 0, "num_predict": 20}
	var thinking, content strings.Builder
	if err := c.Chat(context.Background(), &api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Options: opts}, func(r api.ChatResponse) error {
		thinking.WriteString(r.Message.Thinking)
		content.WriteString(r.Message.Content)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if thinking.Len() == 0 || content.Len() != 0 {
		t.Fatalf("thinking %q content %q", thinking.String(), content.String())
	}
	var r api.GenerateResponse
	if err := c.Generate(context.Background(), &api.GenerateRequest{Model: "stories260K", Prompt: "Once upon a time", Options: opts, Stream: ptr(false)}, func(x api.GenerateResponse) error { r = x; return nil }); err != nil {
		t.Fatal(err)
	}
	if r.Thinking != thinking.String() || r.Response != "" {
		t.Errorf("generate: %+v", r)
	}
	if err := c.Generate(context.Background(), &api.GenerateRequest{Model: "stories260K", Prompt: "Once upon a time", Options: opts, Stream: ptr(false), Think: &api.ThinkValue{Value: false}}, func(x api.GenerateResponse) error { r = x; return nil }); err != nil {
		t.Fatal(err)
	}
	if r.Thinking != "" || !r.Done {
		t.Errorf("think false: %+v", r)
	}
}

// TestJSONFormat: format "json" fails a reply that is not JSON.
func TestJSONFormat(t *testing.T) {
	c, _ := newClient(t, New(newTestBackend(t), Options{}))
	err := c.Chat(context.Background(), &api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Format: json.RawMessage(`"json"`), Stream: ptr(false)},
		func(api.ChatResponse) error { return nil })
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != 400 || !strings.Contains(se.ErrorMessage, "JSON") {
		t.Fatalf("%v", err)
	}
	err = c.Chat(context.Background(), &api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Format: json.RawMessage(`"json"`)},
		func(api.ChatResponse) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "JSON") {
		t.Fatalf("streamed: %v", err)
	}
}

// TestDisconnectCancels: a client that goes away cancels its generation: mid-stream
// (after the first line) on /api/generate and /api/chat, or while it waits for a chat
// it did not stream.
func TestDisconnectCancels(t *testing.T) {
	b := newTestBackend(t)
	b.Delay = 5 * time.Millisecond
	b.Ended = make(chan engine.Event, 4)
	srv := httptest.NewServer(New(b, Options{}))
	defer srv.Close()
	const opts = `"options":{"num_predict":200,"seed":1}`
	chat := `{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],`
	for _, tc := range []struct {
		path, body string
		stream     bool
	}{
		{"/api/generate", `{"model":"stories260K","prompt":"Once upon a time",` + opts + `}`, true},
		{"/api/chat", chat + `"stream":true,` + opts + `}`, true},
		{"/api/chat", chat + `"stream":false,` + opts + `}`, false},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+tc.path, strings.NewReader(tc.body))
		if tc.stream {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
				t.Fatal(err)
			}
			cancel()
			resp.Body.Close()
		} else {
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			time.Sleep(100 * time.Millisecond)
			cancel()
			<-done
		}
		select {
		case ev := <-b.Ended:
			if ev.Finish != engine.FinishCancelled || ev.Usage.CompletionTokens >= 200 {
				t.Fatalf("%s stream %v: generation ended %q after %d tokens", tc.path, tc.stream, ev.Finish, ev.Usage.CompletionTokens)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s stream %v: generation did not end after the client left", tc.path, tc.stream)
		}
	}
}
