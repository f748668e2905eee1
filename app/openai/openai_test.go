package openai

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ember/inference/engine"
	"ember/inference/prompt"
	"ember/inference/tokenizer"
)

const story = `"messages":[{"role":"user","content":"Once upon a time"}]`

func chatBody(extra string) string {
	return `{"model":"stories260K",` + story + extra + `}`
}

// TestChatStreamEqualsComplete: for the same seed the streamed deltas concatenate to the
// non-streamed message, every chunk has OpenAI's shape, and the stream ends with [DONE].
func TestChatStreamEqualsComplete(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	for _, params := range []string{
		`,"seed":7,"temperature":0.9,"max_tokens":40`,
		`,"temperature":0,"max_tokens":30,"stop":["."]`,
		`,"seed":3,"temperature":1.2,"top_p":0.9,"presence_penalty":0.5,"frequency_penalty":0.5,"max_completion_tokens":25`,
	} {
		var full chatCompletion
		postJSON(t, h, "/v1/chat/completions", chatBody(params), &full)
		if len(full.Choices) != 1 || full.Object != "chat.completion" || full.Model != "stories260K" || !strings.HasPrefix(full.ID, "chatcmpl-") {
			t.Fatalf("%s: response %+v", params, full)
		}
		want := full.Choices[0]
		if want.Message.Role != "assistant" || want.Message.text() == "" {
			t.Fatalf("%s: message %+v", params, want.Message)
		}

		code, body := post(t, h, "/v1/chat/completions", chatBody(params+`,"stream":true`))
		if code != 200 {
			t.Fatalf("stream: %d %s", code, body)
		}
		cs := chunks[chatChunk](t, body)
		if len(cs) < 3 {
			t.Fatalf("%s: %d chunks", params, len(cs))
		}
		var got strings.Builder
		for i, c := range cs {
			if c.Object != "chat.completion.chunk" || c.ID != cs[0].ID || c.Model != "stories260K" || len(c.Choices) != 1 || c.Usage != nil {
				t.Fatalf("chunk %d: %+v", i, c)
			}
			d := c.Choices[0].Delta
			if i == 0 && (d.Role != "assistant" || d.Content == nil || *d.Content != "") {
				t.Fatalf("first chunk's delta %+v", d)
			}
			if i > 0 && d.Role != "" {
				t.Fatalf("chunk %d repeats the role", i)
			}
			if d.Content != nil {
				got.WriteString(*d.Content)
			}
			last := i == len(cs)-1
			if (c.Choices[0].FinishReason != nil) != last {
				t.Fatalf("chunk %d: finish_reason %v", i, c.Choices[0].FinishReason)
			}
		}
		if got.String() != want.Message.text() {
			t.Errorf("%s:\nstreamed %q\ncomplete %q", params, got.String(), want.Message.text())
		}
		if f := *cs[len(cs)-1].Choices[0].FinishReason; f != want.FinishReason {
			t.Errorf("%s: finish %q vs %q", params, f, want.FinishReason)
		}
	}
}

// TestUsage: prompt tokens are the tokenizer's count, completion tokens the generated
// ones, and a repeated prompt reports its reused prefix as cached.
func TestUsage(t *testing.T) {
	b := newTestBackend(t)
	h := New(b, Options{})
	nPrompt := len(b.Tok.Encode("Once upon a time", tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true}))
	var r1, r2 chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"seed":1,"max_tokens":12`), &r1)
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"seed":2,"max_tokens":12`), &r2)
	for _, r := range []chatCompletion{r1, r2} {
		u := r.Usage
		if u.PromptTokens != nPrompt || u.CompletionTokens != 12 || u.TotalTokens != nPrompt+12 || r.Choices[0].FinishReason != "length" {
			t.Errorf("usage %+v, finish %q; want %d prompt and 12 completion tokens", u, r.Choices[0].FinishReason, nPrompt)
		}
	}
	// The prefix cache holds whole blocks (4 positions here) and the last prompt token
	// is always recomputed for its logits.
	if c, want := r2.Usage.PromptTokensDetails.CachedTokens, (nPrompt-1)/4*4; c != want || c == 0 {
		t.Errorf("second request: %d cached tokens, want %d", c, want)
	}
	raw := post2(t, h, chatBody(`,"max_tokens":3`))
	if !strings.Contains(raw, `"prompt_tokens_details":{"cached_tokens":`) {
		t.Errorf("usage lacks prompt_tokens_details.cached_tokens: %s", raw)
	}
}

func post2(t *testing.T, h http.Handler, body string) string {
	code, b := post(t, h, "/v1/chat/completions", body)
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	return string(b)
}

// TestStop: the reply ends before the first stop string, with finish_reason "stop".
func TestStop(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	var free chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"temperature":0,"max_tokens":60`), &free)
	text := free.Choices[0].Message.text()
	words := strings.Fields(text)
	if len(words) < 6 {
		t.Fatalf("reply too short: %q", text)
	}
	stop := " " + words[4]
	want := text[:strings.Index(text, stop)]
	for _, s := range []string{fmt.Sprintf("%q", stop), fmt.Sprintf(`["zzzz",%q]`, stop)} {
		var r chatCompletion
		postJSON(t, h, "/v1/chat/completions", chatBody(`,"temperature":0,"max_tokens":60,"stop":`+s), &r)
		if c := r.Choices[0]; c.Message.text() != want || c.FinishReason != "stop" {
			t.Errorf("stop %s: %q (%s), want %q", s, c.Message.text(), c.FinishReason, want)
		}
	}
}

// TestLogprobs: one entry per generated token, in OpenAI's shape; greedy picks the most
// likely token, and the tokens spell the reply.
func TestLogprobs(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	var r chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"temperature":0,"max_tokens":15,"logprobs":true,"top_logprobs":3`), &r)
	lp := r.Choices[0].Logprobs
	if lp == nil || len(lp.Content) != r.Usage.CompletionTokens {
		t.Fatalf("logprobs %+v for %d tokens", lp, r.Usage.CompletionTokens)
	}
	var spelled strings.Builder
	for i, tl := range lp.Content {
		spelled.WriteString(tl.Token)
		if len(tl.TopLogprobs) != 3 || tl.Logprob > 0 || tl.Logprob != tl.TopLogprobs[0].Logprob || tl.Token != tl.TopLogprobs[0].Token {
			t.Fatalf("token %d: %+v", i, tl)
		}
		if string(intsToBytes(tl.Bytes)) != tl.Token {
			t.Fatalf("token %d: bytes %v for %q", i, tl.Bytes, tl.Token)
		}
		for j := 1; j < 3; j++ {
			if tl.TopLogprobs[j].Logprob > tl.TopLogprobs[j-1].Logprob {
				t.Fatalf("token %d: top_logprobs out of order", i)
			}
		}
	}
	if got := r.Choices[0].Message.text(); spelled.String() != got {
		t.Errorf("tokens spell %q, reply is %q", spelled.String(), got)
	}
	// Without logprobs the field is null.
	raw := post2(t, h, chatBody(`,"max_tokens":2`))
	if !strings.Contains(raw, `"logprobs":null`) {
		t.Errorf("logprobs not null: %s", raw)
	}
	// Streamed: each token's logprob rides on its chunk.
	code, body := post(t, h, "/v1/chat/completions", chatBody(`,"temperature":0,"max_tokens":15,"logprobs":true,"top_logprobs":3,"stream":true`))
	if code != 200 {
		t.Fatal(code)
	}
	n := 0
	for _, c := range chunks[chatChunk](t, body) {
		if l := c.Choices[0].Logprobs; l != nil {
			for _, tl := range l.Content {
				if tl.Token != lp.Content[n].Token || tl.Logprob != lp.Content[n].Logprob {
					t.Fatalf("streamed logprob %d: %+v vs %+v", n, tl, lp.Content[n])
				}
				n++
			}
		}
	}
	if n != len(lp.Content) {
		t.Errorf("streamed %d logprobs, want %d", n, len(lp.Content))
	}
}

func intsToBytes(v []int) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}

// TestIncludeUsage: every chunk carries "usage": null and a last chunk with no choices
// carries the usage.
func TestIncludeUsage(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	code, body := post(t, h, "/v1/chat/completions", chatBody(`,"seed":5,"max_tokens":10,"stream":true,"stream_options":{"include_usage":true}`))
	if code != 200 {
		t.Fatal(code)
	}
	evs := sseEvents(t, body)
	for _, e := range evs[:len(evs)-2] {
		if !strings.Contains(e, `"usage":null`) {
			t.Fatalf("chunk without usage null: %s", e)
		}
	}
	cs := chunks[chatChunk](t, body)
	last := cs[len(cs)-1]
	var u usage
	if err := json.Unmarshal(last.Usage, &u); err != nil || len(last.Choices) != 0 {
		t.Fatalf("last chunk %s: %v", evs[len(evs)-2], err)
	}
	if u.CompletionTokens != 10 || u.PromptTokens == 0 || u.TotalTokens != u.PromptTokens+10 {
		t.Errorf("usage %+v", u)
	}
	// Without include_usage there is no usage field at all.
	_, body = post(t, h, "/v1/chat/completions", chatBody(`,"max_tokens":3,"stream":true`))
	if strings.Contains(string(body), `"usage"`) {
		t.Errorf("usage without include_usage: %s", body)
	}
}

// TestN: n choices run with seeds seed, seed+1, ...; each equals a single request with
// that seed, streamed or not.
func TestN(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	var r chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"seed":10,"temperature":1,"max_tokens":12,"n":3`), &r)
	if len(r.Choices) != 3 {
		t.Fatalf("%d choices", len(r.Choices))
	}
	code, body := post(t, h, "/v1/chat/completions", chatBody(`,"seed":10,"temperature":1,"max_tokens":12,"n":3,"stream":true`))
	if code != 200 {
		t.Fatal(code)
	}
	streamed := map[int]string{}
	for _, c := range chunks[chatChunk](t, body) {
		if d := c.Choices[0].Delta.Content; d != nil {
			streamed[c.Choices[0].Index] += *d
		}
	}
	distinct := map[string]bool{}
	for i, c := range r.Choices {
		var one chatCompletion
		postJSON(t, h, "/v1/chat/completions", chatBody(fmt.Sprintf(`,"seed":%d,"temperature":1,"max_tokens":12`, 10+i)), &one)
		if c.Index != i || c.Message.text() != one.Choices[0].Message.text() || streamed[i] != c.Message.text() {
			t.Errorf("choice %d: %q; alone %q; streamed %q", i, c.Message.text(), one.Choices[0].Message.text(), streamed[i])
		}
		distinct[c.Message.text()] = true
	}
	if len(distinct) < 2 {
		t.Errorf("the choices are all the same: %+v", r.Choices)
	}
	if r.Usage.CompletionTokens != 36 {
		t.Errorf("usage %+v", r.Usage)
	}
}

// TestUnknownFieldsIgnored: fields OpenAI has and we do not use (or nobody has) are
// accepted, as OpenAI accepts them.
func TestUnknownFieldsIgnored(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	var r chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"max_tokens":3,"user":"me","metadata":{"a":1},"store":false,"tools":[],"tool_choice":"auto","parallel_tool_calls":true,"frobnicate":[1,{}],"model_extra":null`), &r)
	if r.Choices[0].Message.text() == "" {
		t.Error("empty reply")
	}
}

// TestCompletions: /v1/completions with a string, token ids and several prompts,
// streamed and not; echo and legacy logprobs.
func TestCompletions(t *testing.T) {
	b := newTestBackend(t)
	h := New(b, Options{})
	ids := b.Tok.Encode("Once upon a time", tokenizer.EncodeOptions{AddSpecial: true})
	idJSON, _ := json.Marshal(ids)
	var fromText, fromIDs textCompletion
	postJSON(t, h, "/v1/completions", `{"model":"stories260K","prompt":"Once upon a time","temperature":0,"max_tokens":20}`, &fromText)
	postJSON(t, h, "/v1/completions", `{"model":"stories260K","prompt":`+string(idJSON)+`,"temperature":0,"max_tokens":20}`, &fromIDs)
	if fromText.Object != "text_completion" || fromText.Choices[0].Text == "" || fromText.Choices[0].Text != fromIDs.Choices[0].Text {
		t.Fatalf("text prompt %+v, token prompt %+v", fromText, fromIDs)
	}
	code, body := post(t, h, "/v1/completions", `{"model":"stories260K","prompt":"Once upon a time","temperature":0,"max_tokens":20,"stream":true}`)
	if code != 200 {
		t.Fatal(code)
	}
	var got strings.Builder
	for _, c := range chunks[textCompletionChunk](t, body) {
		got.WriteString(c.Choices[0].Text)
	}
	if got.String() != fromText.Choices[0].Text {
		t.Errorf("streamed %q, complete %q", got.String(), fromText.Choices[0].Text)
	}

	var multi textCompletion
	postJSON(t, h, "/v1/completions", `{"model":"stories260K","prompt":["Once upon a time","The dog"],"n":2,"seed":4,"max_tokens":5}`, &multi)
	if len(multi.Choices) != 4 || multi.Usage.CompletionTokens != 20 {
		t.Fatalf("multi: %+v", multi)
	}
	for i, c := range multi.Choices {
		if c.Index != i {
			t.Errorf("choice %d has index %d", i, c.Index)
		}
	}

	var echo textCompletion
	postJSON(t, h, "/v1/completions", `{"model":"stories260K","prompt":"Once upon a time","temperature":0,"max_tokens":20,"echo":true}`, &echo)
	if echo.Choices[0].Text != "Once upon a time"+fromText.Choices[0].Text {
		t.Errorf("echo: %q", echo.Choices[0].Text)
	}

	var lp textCompletion
	postJSON(t, h, "/v1/completions", `{"model":"stories260K","prompt":"Once upon a time","temperature":0,"max_tokens":20,"logprobs":2}`, &lp)
	l := lp.Choices[0].Logprobs
	if l == nil || len(l.Tokens) != 20 || len(l.TokenLogprobs) != 20 || len(l.TopLogprobs) != 20 || len(l.TextOffset) != 20 {
		t.Fatalf("logprobs %+v", l)
	}
	if strings.Join(l.Tokens, "") != lp.Choices[0].Text || l.TextOffset[1] != len(l.Tokens[0]) || len(l.TopLogprobs[0]) == 0 {
		t.Errorf("logprobs %+v for %q", l, lp.Choices[0].Text)
	}
}

// TestModels: the loaded model is listed and can be fetched by name.
func TestModels(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/models", nil))
	var l modelList
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || l.Object != "list" || len(l.Data) != 1 || l.Data[0].ID != "stories260K" || l.Data[0].Object != "model" {
		t.Fatalf("%s: %v", rec.Body, err)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/models/stories260K", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"id":"stories260K"`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// TestReasoning: when the template opens <think>, the whole reply up to </think> is
// reasoning_content, streamed as such too.
func TestReasoning(t *testing.T) {
	b := newTestBackend(t)
	tmpl, err := prompt.Parse("{% for m in messages %}{{ m.content }}{% endfor %}{% if add_generation_prompt %}<think>\n{% endif %}")
	if err != nil {
		t.Fatal(err)
	}
	b.Tmpl = tmpl
	h := New(b, Options{})
	var r chatCompletion
	postJSON(t, h, "/v1/chat/completions", chatBody(`,"temperature":0,"max_tokens":20`), &r)
	m := r.Choices[0].Message
	if m.text() != "" || m.ReasoningContent == "" {
		t.Fatalf("message %+v", m)
	}
	if r.Usage.CompletionTokensDetails == nil || r.Usage.CompletionTokensDetails.ReasoningTokens != 20 {
		t.Errorf("usage %+v", r.Usage)
	}
	_, body := post(t, h, "/v1/chat/completions", chatBody(`,"temperature":0,"max_tokens":20,"stream":true`))
	var got strings.Builder
	for _, c := range chunks[chatChunk](t, body) {
		if d := c.Choices[0].Delta; d.ReasoningContent != nil {
			got.WriteString(*d.ReasoningContent)
		} else if d.Content != nil && *d.Content != "" {
			t.Fatalf("content in a reasoning-only reply: %q", *d.Content)
		}
	}
	if got.String() != m.ReasoningContent {
		t.Errorf("streamed %q, complete %q", got.String(), m.ReasoningContent)
	}
}

// TestJSONMode: a reply that is not JSON fails with Groq's json_validate_failed, as an
// error response or, streamed, as an error event without [DONE].
func TestJSONMode(t *testing.T) {
	h := New(newTestBackend(t), Options{})
	code, body := post(t, h, "/v1/chat/completions", chatBody(`,"max_tokens":20,"response_format":{"type":"json_object"}`))
	if code != 400 || !strings.Contains(string(body), `"code":"json_validate_failed"`) {
		t.Fatalf("%d %s", code, body)
	}
	code, body = post(t, h, "/v1/chat/completions", chatBody(`,"max_tokens":20,"stream":true,"response_format":{"type":"json_object"}`))
	evs := sseEvents(t, body)
	if code != 200 || len(evs) == 0 || !strings.Contains(evs[len(evs)-1], `"json_validate_failed"`) {
		t.Fatalf("%d %q", code, evs)
	}
}

// TestDisconnectCancels: a client that goes away mid-stream cancels its generation; the
// engine ends it as cancelled long before max_tokens, and serves the next request.
func TestDisconnectCancels(t *testing.T) {
	b := newTestBackend(t)
	b.Delay = 5 * time.Millisecond // 200 tokens would take a second
	b.Ended = make(chan engine.Event, 4)
	srv := httptest.NewServer(New(b, Options{}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions",
		strings.NewReader(chatBody(`,"max_tokens":200,"stream":true,"temperature":1,"seed":1`)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	for range 3 { // the role chunk and some content
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	resp.Body.Close()
	select {
	case ev := <-b.Ended:
		if ev.Finish != engine.FinishCancelled || ev.Usage.CompletionTokens >= 200 {
			t.Fatalf("generation ended %q after %d tokens", ev.Finish, ev.Usage.CompletionTokens)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("generation did not end after the client left")
	}
	b.Delay = 0
	var r chatCompletion
	postJSON(t, srv.Config.Handler, "/v1/chat/completions", chatBody(`,"max_tokens":3`), &r)
	if r.Choices[0].FinishReason != "length" {
		t.Errorf("next request: %+v", r)
	}
}

func TestTokenString(t *testing.T) {
	if got := tokenString("\xe2\x80"); got != `bytes:\xe2\x80` {
		t.Errorf("%q", got)
	}
	if got := tokenString(" héllo"); got != " héllo" {
		t.Errorf("%q", got)
	}
}
