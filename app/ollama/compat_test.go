package ollama

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"

	"ember/app/enginetest"
	"ember/inference/engine"
	"ember/inference/prompt"
	"ember/inference/synth"
)

// statusOf is the status and message of an error from Ollama's client (0 if none).
func statusOf(err error) (int, string) {
	var se api.StatusError
	if errors.As(err, &se) {
		return se.StatusCode, se.ErrorMessage
	}
	return 0, ""
}

// TestLoadUnload: nothing to generate is Ollama's load call, whatever the system prompt;
// with keep_alive 0 its unload call, answered done_reason "unload".
func TestLoadUnload(t *testing.T) {
	c, _ := newClient(t, New(newTestBackend(t), Options{}))
	ctx := context.Background()
	zero, five := &api.Duration{Duration: 0}, &api.Duration{Duration: 5 * time.Minute}
	for _, tc := range []struct {
		name   string
		req    api.GenerateRequest
		reason string
	}{
		{"empty", api.GenerateRequest{Model: "stories260K"}, "load"},
		{"keep_alive 5m", api.GenerateRequest{Model: "stories260K", KeepAlive: five}, "load"},
		{"system only", api.GenerateRequest{Model: "stories260K", System: "You tell stories."}, "load"},
		{"keep_alive 0", api.GenerateRequest{Model: "stories260K", KeepAlive: zero}, "unload"},
	} {
		var got []api.GenerateResponse
		if err := c.Generate(ctx, &tc.req, func(r api.GenerateResponse) error { got = append(got, r); return nil }); err != nil {
			t.Fatalf("generate %s: %v", tc.name, err)
		}
		if len(got) != 1 || !got[0].Done || got[0].DoneReason != tc.reason || got[0].Response != "" || got[0].EvalCount != 0 {
			t.Errorf("generate %s: %+v, want one done %q", tc.name, got, tc.reason)
		}
	}
	for _, tc := range []struct {
		keepAlive *api.Duration
		reason    string
	}{{nil, "load"}, {zero, "unload"}} {
		var got []api.ChatResponse
		if err := c.Chat(ctx, &api.ChatRequest{Model: "stories260K", KeepAlive: tc.keepAlive}, func(r api.ChatResponse) error { got = append(got, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !got[0].Done || got[0].DoneReason != tc.reason || got[0].Message.Role != "assistant" {
			t.Errorf("chat, keep_alive %v: %+v, want one done %q", tc.keepAlive, got, tc.reason)
		}
	}
}

// TestOllamaRefusals: requests Ollama answers with a 400 (or its 404 wording) get the
// same here, on both routes where both take them.
func TestOllamaRefusals(t *testing.T) {
	c, _ := newClient(t, New(newTestBackend(t), Options{}))
	ctx := context.Background()
	opts := map[string]any{"num_predict": 2}
	high := &api.ThinkValue{Value: "high"}
	for _, tc := range []struct {
		name   string
		req    api.GenerateRequest
		status int
		msg    string
	}{
		{"raw with system", api.GenerateRequest{Model: "stories260K", Prompt: "Once", Raw: true, System: "x", Options: opts}, 400, "raw mode does not support"},
		{"raw with context", api.GenerateRequest{Model: "stories260K", Prompt: "Once", Raw: true, Context: []int{1, 2}, Options: opts}, 400, "raw mode does not support"},
		{"think level", api.GenerateRequest{Model: "stories260K", Prompt: "Once", Think: high, Options: opts}, 400, `think value "high" is not supported`},
		{"unknown model", api.GenerateRequest{Model: "llama3", Prompt: "Once"}, 404, "model 'llama3' not found"},
		{"other tag", api.GenerateRequest{Model: "stories260K:q4", Prompt: "Once"}, 404, "model 'stories260K:q4' not found"},
	} {
		err := c.Generate(ctx, &tc.req, func(api.GenerateResponse) error { return nil })
		if status, msg := statusOf(err); status != tc.status || !strings.HasPrefix(msg, tc.msg) {
			t.Errorf("generate, %s: %v, want %d %q...", tc.name, err, tc.status, tc.msg)
		}
	}
	err := c.Chat(ctx, &api.ChatRequest{Model: "stories260K", Messages: storyMsgs, Think: high, Options: opts}, func(api.ChatResponse) error { return nil })
	if status, msg := statusOf(err); status != 400 || !strings.Contains(msg, "think value") {
		t.Errorf("chat, think level: %v", err)
	}
	err = c.Chat(ctx, &api.ChatRequest{Model: "Llama3:latest", Messages: storyMsgs}, func(api.ChatResponse) error { return nil })
	if status, msg := statusOf(err); status != 404 || !strings.HasPrefix(msg, "model 'Llama3:latest' not found") {
		t.Errorf("chat, unknown model: %v", err)
	}
	_, err = c.Show(ctx, &api.ShowRequest{Model: "llama3"})
	if status, msg := statusOf(err); status != 404 || !strings.HasPrefix(msg, "model 'llama3' not found") {
		t.Errorf("show, unknown model: %v", err)
	}
	// think true and false are taken by every model
	for _, v := range []bool{true, false} {
		err := c.Generate(ctx, &api.GenerateRequest{Model: "stories260K", Prompt: "Once", Think: &api.ThinkValue{Value: v}, Options: opts},
			func(api.GenerateResponse) error { return nil })
		if err != nil {
			t.Errorf("think %v: %v", v, err)
		}
	}
}

// metricKeys are the fields Ollama's final object always has.
var metricKeys = []string{"model", "created_at", "done", "done_reason", "total_duration", "load_duration",
	"prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration"}

// TestWireFormat: as real Ollama sends them, on both routes: NDJSON (one object a line,
// flushed) by default, the last done with done_reason and every timing field; stream
// false one application/json object with the same fields; created_at RFC 3339 in UTC.
func TestWireFormat(t *testing.T) {
	_, base := newClient(t, New(newTestBackend(t), Options{}))
	for _, tc := range []struct{ path, body string }{
		{"/api/generate", `{"model":"stories260K","prompt":"Once upon a time","options":{"num_predict":5,"seed":3}%s}`},
		{"/api/chat", `{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],"options":{"num_predict":5,"seed":3}%s}`},
	} {
		for _, stream := range []string{"", `,"stream":true`, `,"stream":false`} {
			resp, err := http.Post(base+tc.path, "application/json", strings.NewReader(strings.Replace(tc.body, "%s", stream, 1)))
			if err != nil {
				t.Fatal(err)
			}
			var lines []map[string]any
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				var v map[string]any
				if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
					t.Fatalf("%s%s: a line that is not one JSON object: %q", tc.path, stream, sc.Text())
				}
				lines = append(lines, v)
			}
			resp.Body.Close()
			ct, streamed := resp.Header.Get("Content-Type"), stream != `,"stream":false`
			if resp.StatusCode != 200 || (streamed && ct != "application/x-ndjson") || (!streamed && !strings.HasPrefix(ct, "application/json")) {
				t.Fatalf("%s%s: %d %q", tc.path, stream, resp.StatusCode, ct)
			}
			if want := 1; !streamed && len(lines) != want || streamed && len(lines) < 3 {
				t.Fatalf("%s%s: %d lines", tc.path, stream, len(lines))
			}
			for i, v := range lines {
				ts, _ := v["created_at"].(string)
				if at, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") || time.Since(at) > time.Minute {
					t.Errorf("%s%s: created_at %q", tc.path, stream, ts)
				}
				if done := v["done"] == true; done != (i == len(lines)-1) {
					t.Errorf("%s%s: line %d of %d has done %v", tc.path, stream, i, len(lines), v["done"])
				}
			}
			last := lines[len(lines)-1]
			for _, k := range metricKeys {
				if _, ok := last[k]; !ok {
					t.Errorf("%s%s: the final object has no %q: %v", tc.path, stream, k, last)
				}
			}
			load, _ := last["load_duration"].(float64)
			total, _ := last["total_duration"].(float64)
			if last["done_reason"] != "length" || last["eval_count"] != 5.0 || load <= 0 || load > total {
				t.Errorf("%s%s: final %v", tc.path, stream, last)
			}
		}
	}
}

// TestShowCapabilities: /api/show lists "tools" (every model takes them; clients check
// before they send any) and "thinking" for a template that opens <think>.
func TestShowCapabilities(t *testing.T) {
	b := newTestBackend(t)
	c, _ := newClient(t, New(b, Options{}))
	has := func(caps []model.Capability, c model.Capability) bool {
		for _, x := range caps {
			if x == c {
				return true
			}
		}
		return false
	}
	s, err := c.Show(context.Background(), &api.ShowRequest{Model: "stories260K"})
	if err != nil || !has(s.Capabilities, model.CapabilityCompletion) || !has(s.Capabilities, model.CapabilityTools) || has(s.Capabilities, model.CapabilityThinking) {
		t.Fatalf("%v %v", s.Capabilities, err)
	}
	tmpl, err := prompt.Parse("{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}<think>\n{% endif %}")
	if err != nil {
		t.Fatal(err)
	}
	b.Tmpl = tmpl
	s, err = c.Show(context.Background(), &api.ShowRequest{Model: "stories260K"})
	if err != nil || !has(s.Capabilities, model.CapabilityThinking) || s.Template != tmpl.Source() || has(s.Capabilities, model.CapabilityInsert) {
		t.Fatalf("%v %v", s.Capabilities, err)
	}

	// A vocabulary with fill-in-the-middle tokens (a synthetic model's) adds "insert",
	// and its suffix requests are answered.
	p := synth.Presets["tiny"]()
	p.FIM = true
	path := filepath.Join(t.TempDir(), "fim.gguf")
	if _, err := synth.Write(context.Background(), path, p, synth.Options{FileType: "f32", Seed: "fim"}); err != nil {
		t.Fatal(err)
	}
	fim := &testBackend{enginetest.New(t, path, engine.Options{ContextSize: 128})}
	c, _ = newClient(t, New(fim, Options{}))
	s, err = c.Show(context.Background(), &api.ShowRequest{Model: "stories260K"})
	if err != nil || !has(s.Capabilities, model.CapabilityInsert) {
		t.Fatalf("FIM model: %v %v", s.Capabilities, err)
	}
	n := 0
	err = c.Generate(context.Background(), &api.GenerateRequest{Model: "stories260K", Prompt: "def f(", Suffix: ")\n",
		Options: map[string]any{"num_predict": 4}}, func(r api.GenerateResponse) error { n += r.EvalCount; return nil })
	if err != nil || n == 0 {
		t.Fatalf("FIM model's suffix request: %d tokens, %v", n, err)
	}
}

// TestPrefill: a chat whose last message is the assistant's continues it, as Ollama's
// templates leave that message open: the reply is what the raw prompt (the conversation
// before, the generation prompt, the message) gets, and a prefill that closes the
// reasoning section leaves the reply out of message.thinking.
func TestPrefill(t *testing.T) {
	b := newTestBackend(t)
	tmpl, err := prompt.Parse("{% for m in messages %}{{ m.content }} The end.\n{% endfor %}{% if add_generation_prompt %}Once{% endif %}")
	if err != nil {
		t.Fatal(err)
	}
	b.Tmpl = tmpl
	c, _ := newClient(t, New(b, Options{}))
	ctx := context.Background()
	greedy := map[string]any{"temperature": 0, "num_predict": 20}
	msgs := []api.Message{{Role: "user", Content: "Lily went to the park."}, {Role: "assistant", Content: " upon a time, Tom"}}
	var chat api.ChatResponse
	if err := c.Chat(ctx, &api.ChatRequest{Model: "stories260K", Messages: msgs, Options: greedy, Stream: ptr(false)},
		func(r api.ChatResponse) error { chat = r; return nil }); err != nil {
		t.Fatal(err)
	}
	var raw api.GenerateResponse
	if err := c.Generate(ctx, &api.GenerateRequest{Model: "stories260K", Prompt: "Lily went to the park. The end.\nOnce upon a time, Tom", Raw: true, Options: greedy, Stream: ptr(false)},
		func(r api.GenerateResponse) error { raw = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if chat.Message.Content == "" || chat.Message.Content != raw.Response || chat.PromptEvalCount != raw.PromptEvalCount {
		t.Errorf("prefilled chat %q (%d prompt tokens), raw prompt %q (%d)", chat.Message.Content, chat.PromptEvalCount, raw.Response, raw.PromptEvalCount)
	}

	think, err := prompt.Parse("{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}<think>\n{% endif %}")
	if err != nil {
		t.Fatal(err)
	}
	b.Tmpl = think
	var thinking, content strings.Builder
	msgs = []api.Message{storyMsgs[0], {Role: "assistant", Content: "A story.</think>"}}
	if err := c.Chat(ctx, &api.ChatRequest{Model: "stories260K", Messages: msgs, Options: greedy}, func(r api.ChatResponse) error {
		thinking.WriteString(r.Message.Thinking)
		content.WriteString(r.Message.Content)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if thinking.Len() != 0 || content.Len() == 0 {
		t.Errorf("after a prefill that closes the thinking: thinking %q, content %q", thinking.String(), content.String())
	}
}

// TestUnsupportedRoutes: Ollama's model management and embedding routes answer 501
// with an {"error"} that Ollama's client reports, never a 404 page.
func TestUnsupportedRoutes(t *testing.T) {
	c, base := newClient(t, New(newTestBackend(t), Options{}))
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"pull": func() error {
			return c.Pull(ctx, &api.PullRequest{Model: "llama3"}, func(api.ProgressResponse) error { return nil })
		},
		"push": func() error {
			return c.Push(ctx, &api.PushRequest{Model: "stories260K"}, func(api.ProgressResponse) error { return nil })
		},
		"create": func() error {
			return c.Create(ctx, &api.CreateRequest{Model: "x"}, func(api.ProgressResponse) error { return nil })
		},
		"copy":   func() error { return c.Copy(ctx, &api.CopyRequest{Source: "stories260K", Destination: "x"}) },
		"delete": func() error { return c.Delete(ctx, &api.DeleteRequest{Model: "stories260K"}) },
		"embed": func() error {
			_, err := c.Embed(ctx, &api.EmbedRequest{Model: "stories260K", Input: "Once"})
			return err
		},
		"embeddings": func() error {
			_, err := c.Embeddings(ctx, &api.EmbeddingRequest{Model: "stories260K", Prompt: "Once"})
			return err
		},
	} {
		status, msg := statusOf(call())
		if status != http.StatusNotImplemented || !strings.Contains(msg, "not supported by Ember") {
			t.Errorf("%s: %d %q", name, status, msg)
		}
		if strings.HasPrefix(name, "embed") && !strings.Contains(msg, "does not compute embeddings") {
			t.Errorf("%s: %q does not say why", name, msg)
		}
	}
	req, _ := http.NewRequest("HEAD", base+"/api/blobs/sha256:0123", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNotImplemented {
		t.Fatalf("HEAD blob: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestTopPZero: top_p 0 keeps the most likely token alone (llama.cpp's reading, so
// Ollama's), whatever the temperature and seed: the reply is the greedy one.
func TestTopPZero(t *testing.T) {
	c, _ := newClient(t, New(newTestBackend(t), Options{}))
	ctx := context.Background()
	gen := func(opts map[string]any) string {
		var sb strings.Builder
		req := &api.GenerateRequest{Model: "stories260K", Prompt: "Once upon a time", Raw: true, Options: opts}
		if err := c.Generate(ctx, req, func(r api.GenerateResponse) error { sb.WriteString(r.Response); return nil }); err != nil {
			t.Fatal(err)
		}
		return sb.String()
	}
	greedy := gen(map[string]any{"temperature": 0, "num_predict": 24})
	for seed := range 4 {
		if got := gen(map[string]any{"temperature": 1.5, "top_p": 0, "seed": seed, "num_predict": 24}); got != greedy {
			t.Errorf("seed %d: %q, want the greedy %q", seed, got, greedy)
		}
	}
}
