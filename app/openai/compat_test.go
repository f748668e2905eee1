package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ember/inference/engine"
)

// TestTopPZero: top_p 0 keeps only the most likely token (OpenAI's nucleus of
// probability 0), so whatever the temperature and seed the reply is the greedy one.
func TestTopPZero(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	var greedy chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"temperature":0,"max_tokens":20`), &greedy)
	want := greedy.Choices[0].Message.text()
	for seed := range 4 {
		var r chatCompletion
		postJSON(t, h, "/v1/chat/completions", chatBody(fmt.Sprintf(`,"top_p":0,"temperature":1.5,"seed":%d,"max_tokens":20`, seed)), &r)
		if got := r.Choices[0].Message.text(); got != want {
			t.Errorf("top_p 0, seed %d: %q, want the greedy %q", seed, got, want)
		}
	}
	var text textCompletion
	postJSON(t, h, "/v1/completions", `{"model":"stories260K","prompt":"Once upon a time","top_p":0,"temperature":2,"seed":9,"max_tokens":20}`, &text)
	var textGreedy textCompletion
	postJSON(t, h, "/v1/completions", `{"model":"stories260K","prompt":"Once upon a time","temperature":0,"max_tokens":20}`, &textGreedy)
	if text.Choices[0].Text != textGreedy.Choices[0].Text {
		t.Errorf("completions with top_p 0: %q, want the greedy %q", text.Choices[0].Text, textGreedy.Choices[0].Text)
	}
}

// TestContentParts: content given as text parts reads as their concatenation, and an
// earlier assistant turn given as a refusal part (as OpenAI allows) is accepted as its
// text.
func TestContentParts(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	reply := func(msgs string) string {
		t.Helper()
		var r chatCompletion
		postJSON(t, h, "/v1/chat/completions", `{"model":"stories260K","temperature":0,"max_tokens":12,"messages":`+msgs+`}`, &r)
		return r.Choices[0].Message.text()
	}
	if a, b := reply(`[{"role":"user","content":"Once upon a time"}]`),
		reply(`[{"role":"user","content":[{"type":"text","text":"Once upon"},{"type":"text","text":" a time"}]}]`); a != b {
		t.Errorf("text parts: %q, as a string: %q", b, a)
	}
	history := `[{"role":"user","content":"Tell me"},{"role":"assistant","content":%s},{"role":"user","content":"Once upon a time"}]`
	if a, b := reply(fmt.Sprintf(history, `"No."`)),
		reply(fmt.Sprintf(history, `[{"type":"refusal","refusal":"No."}]`)); a != b {
		t.Errorf("refusal part: %q, as a string: %q", b, a)
	}
}

// TestBodyFraming: a JSON body may be followed by white space only (Go's json.Encoder
// ends it with a newline), and is read whatever its Content-Type (curl -d sends
// application/x-www-form-urlencoded, as the README's example does).
func TestBodyFraming(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	for _, c := range []struct{ contentType, body string }{
		{"application/json", chatBody(`,"max_tokens":2`) + "\n\t \r\n"},
		{"application/x-www-form-urlencoded", chatBody(`,"max_tokens":2`)},
		{"text/plain", chatBody(`,"max_tokens":2`)},
		{"", chatBody(`,"max_tokens":2`)},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(c.body))
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Errorf("Content-Type %q, body %q: %d %s", c.contentType, c.body, rec.Code, rec.Body)
		}
	}
}

// TestEngineClosedMidGeneration: a generation the engine ends itself (closing) while
// the client still waits is answered with a 503 in OpenAI's shape, or, streamed, with
// an error event and no [DONE]; never an empty 200 or a stream cut without a word.
func TestEngineClosedMidGeneration(t *testing.T) {
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", chatBody(`,"max_tokens":800`)},
		{"/v1/chat/completions", chatBody(`,"max_tokens":800,"n":2`)},
		{"/v1/completions", `{"model":"stories260K","prompt":"Once upon a time","max_tokens":800}`},
	} {
		for _, stream := range []bool{false, true} {
			body := strings.TrimSuffix(c.body, "}") + fmt.Sprintf(`,"stream":%v}`, stream)
			b := newToolBackend(t)
			b.CloseOnFirst = true
			h := New(b, Options{})
			code, out := post(t, h, c.path, body)
			if !stream || code != 200 { // streamed: closed before the stream began (n>1)
				var e errorBody
				if code != http.StatusServiceUnavailable || json.Unmarshal(out, &e) != nil || e.Error.Code == nil || *e.Error.Code != "unavailable" || e.Error.Type != "server_error" {
					t.Errorf("%s %s: %d %q", c.path, body, code, out)
				}
				continue
			}
			evs := sseEvents(t, out)
			if code != 200 || len(evs) == 0 || !strings.Contains(evs[len(evs)-1], `"code":"unavailable"`) {
				t.Errorf("%s %s: %d, events %q", c.path, body, code, evs)
			}
		}
	}
}

// TestDisconnectCancelsEveryChoice: a client that goes away ends every generation of
// its request, streamed or not, on both endpoints (the choices generated in the
// background of a streamed n>1 too), and their KV blocks are freed.
func TestDisconnectCancelsEveryChoice(t *testing.T) {
	b := newToolBackend(t) // room for 800 tokens: seconds of work on the reference backend
	b.Ended = make(chan engine.Event, 16)
	srv := httptest.NewServer(New(b, Options{}))
	defer srv.Close()
	for _, c := range []struct {
		path, body string
		choices    int
	}{
		{"/v1/chat/completions", chatBody(`,"max_tokens":800,"seed":1`), 1},
		{"/v1/chat/completions", chatBody(`,"max_tokens":800,"seed":1,"stream":true`), 1},
		{"/v1/chat/completions", chatBody(`,"max_tokens":800,"seed":1,"n":3,"stream":true`), 3},
		{"/v1/completions", `{"model":"stories260K","prompt":["Once upon a time","The dog"],"max_tokens":800,"seed":1}`, 2},
		{"/v1/completions", `{"model":"stories260K","prompt":"Once upon a time","max_tokens":800,"seed":1,"stream":true}`, 1},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+c.path, strings.NewReader(c.body))
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := http.DefaultClient.Do(req); err == nil { // a stream's headers came
				io.Copy(io.Discard, resp.Body) // read on, until the cancel
				resp.Body.Close()
			}
		}()
		// Cancel once every choice is in the engine (running, or waiting on a prompt
		// it shares with another).
		deadline := time.Now().Add(5 * time.Second)
		for st := b.Eng.Stats(); st.Running+st.Waiting < c.choices || st.Running == 0; st = b.Eng.Stats() {
			if time.Now().After(deadline) {
				t.Fatalf("%s %s: the generations did not start: %+v", c.path, c.body, st)
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		<-done
		for i := range c.choices {
			select {
			case ev := <-b.Ended:
				if ev.Finish != engine.FinishCancelled || ev.Usage.CompletionTokens >= 800 {
					t.Errorf("%s %s: generation %d ended %q after %d tokens", c.path, c.body, i, ev.Finish, ev.Usage.CompletionTokens)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%s %s: generation %d did not end after the client left", c.path, c.body, i)
			}
		}
		deadline = time.Now().Add(5 * time.Second)
		for st := b.Eng.Stats(); st.Running+st.Waiting > 0 || st.KVBlocksUsed > 0; st = b.Eng.Stats() {
			if time.Now().After(deadline) {
				t.Fatalf("%s %s: after the client left, %+v", c.path, c.body, st)
			}
			time.Sleep(time.Millisecond)
		}
	}
}
