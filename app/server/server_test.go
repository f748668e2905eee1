package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"ember/app/ollama"
	"ember/app/openai"
	"ember/app/server"
	"ember/inference/backend/ref"
	"ember/inference/engine"
	"ember/inference/gguf"
	"ember/inference/model/archs"
	"ember/inference/tokenizer"
)

const storiesPath = "../../assets/stories260K.gguf"

// newModel wires the real engine on stories260K the way the composition root does.
func newModel(t *testing.T, m *server.Metrics) *server.Model {
	t.Helper()
	eng, f := newEngineFile(t)
	return server.NewModel(eng, "stories260K", f, nil, m)
}

func newEngine(t *testing.T) *engine.Engine {
	e, _ := newEngineFile(t)
	return e
}

func newEngineFile(t *testing.T) (*engine.Engine, *gguf.File) {
	t.Helper()
	f, err := gguf.Open(storiesPath)
	if err != nil {
		t.Fatal(err)
	}
	lm, err := archs.Load(f, ref.New())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(lm, tok, engine.Options{ContextSize: 256, BlockSize: 4, Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(); lm.Close(); f.Close() })
	return eng, f
}

func newServer(t *testing.T, cfg server.Config) (*server.Server, *httptest.Server) {
	t.Helper()
	m := server.NewMetrics()
	md := newModel(t, m)
	s := server.New(cfg, m, openai.New(md, openai.Options{}), ollama.New(md, ollama.Options{}))
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

const chatBody = `{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":8,"seed":1}`

func do(t *testing.T, method, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// openAIError checks OpenAI's error shape and returns its code.
func openAIError(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || len(e.Error) != 4 || e.Error["message"] == "" {
		t.Fatalf("not an OpenAI error: %s", body)
	}
	c, _ := e.Error["code"].(string)
	return c
}

func ollamaError(t *testing.T, body string) {
	t.Helper()
	var e map[string]string
	if err := json.Unmarshal([]byte(body), &e); err != nil || len(e) != 1 || e["error"] == "" {
		t.Fatalf("not an Ollama error: %s", body)
	}
}

// TestHostCheck: only loopback names (and configured hosts) may be the Host: a page
// that rebinds its DNS name to 127.0.0.1 is refused.
func TestHostCheck(t *testing.T) {
	_, ts := newServer(t, server.Config{AllowedHosts: []string{"ember.lan"}})
	for host, ok := range map[string]bool{
		"evil.example": false, "evil.example:11435": false, "localhost.evil.example": false, "127.0.0.2": false,
		"localhost": true, "localhost:11435": true, "LOCALHOST.:11435": true, "127.0.0.1:1": true, "[::1]:11435": true,
		"ember.lan:11435": true,
	} {
		resp, body := do(t, "POST", ts.URL+"/v1/chat/completions", chatBody, map[string]string{"Host": host})
		if ok != (resp.StatusCode == 200) {
			t.Errorf("Host %s: %d %s", host, resp.StatusCode, body)
		}
		if !ok {
			if resp.StatusCode != 403 || openAIError(t, body) != "forbidden_host" {
				t.Errorf("Host %s: %d %s", host, resp.StatusCode, body)
			}
			resp, body = do(t, "GET", ts.URL+"/api/tags", "", map[string]string{"Host": host})
			if resp.StatusCode != 403 {
				t.Errorf("Host %s on /api/tags: %d", host, resp.StatusCode)
			}
			ollamaError(t, body)
		}
	}
}

// TestCORS: a cross-origin request is refused unless its origin is configured; then
// preflights are answered for that origin only.
func TestCORS(t *testing.T) {
	_, closed := newServer(t, server.Config{})
	resp, body := do(t, "POST", closed.URL+"/v1/chat/completions", chatBody, map[string]string{"Origin": "http://localhost:3000", "Content-Type": "text/plain"})
	if resp.StatusCode != 403 || openAIError(t, body) != "forbidden_origin" || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("unconfigured: %d %s", resp.StatusCode, body)
	}
	resp, _ = do(t, "OPTIONS", closed.URL+"/v1/chat/completions", "", map[string]string{"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"})
	if resp.StatusCode != 403 {
		t.Fatalf("unconfigured preflight: %d", resp.StatusCode)
	}

	_, open := newServer(t, server.Config{AllowedOrigins: []string{"http://localhost:*", "https://app.example"}})
	for origin, ok := range map[string]bool{
		"http://localhost:3000": true, "https://app.example": true,
		"https://evil.example": false, "https://app.example.evil.example": false, "null": false,
	} {
		resp, body := do(t, "POST", open.URL+"/v1/chat/completions", chatBody, map[string]string{"Origin": origin})
		acao := resp.Header.Get("Access-Control-Allow-Origin")
		if ok != (resp.StatusCode == 200) || ok != (acao == origin) {
			t.Errorf("POST from %s: %d, ACAO %q: %s", origin, resp.StatusCode, acao, body)
		}
		resp, _ = do(t, "OPTIONS", open.URL+"/v1/chat/completions", "", map[string]string{
			"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"})
		if ok {
			h := resp.Header
			if resp.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != origin || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
				h.Get("Access-Control-Allow-Headers") != "authorization, content-type" {
				t.Errorf("preflight from %s: %d %v", origin, resp.StatusCode, h)
			}
		} else if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from %s: %d", origin, resp.StatusCode)
		}
	}
}

// TestAPIKey: with a key, requests need "Authorization: Bearer KEY"; /health does not.
func TestAPIKey(t *testing.T) {
	_, ts := newServer(t, server.Config{APIKey: "s3cret"})
	for _, auth := range []string{"", "Bearer wrong", "Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret"} {
		resp, body := do(t, "POST", ts.URL+"/v1/chat/completions", chatBody, map[string]string{"Authorization": auth})
		if resp.StatusCode != 401 || openAIError(t, body) != "invalid_api_key" || resp.Header.Get("WWW-Authenticate") == "" ||
			!strings.Contains(body, `"type":"invalid_request_error"`) {
			t.Errorf("Authorization %q: %d %s", auth, resp.StatusCode, body)
		}
	}
	resp, body := do(t, "GET", ts.URL+"/api/tags", "", nil)
	if resp.StatusCode != 401 {
		t.Errorf("/api/tags without key: %d", resp.StatusCode)
	}
	ollamaError(t, body)
	resp, _ = do(t, "GET", ts.URL+"/metrics", "", nil)
	if resp.StatusCode != 401 {
		t.Errorf("/metrics without key: %d", resp.StatusCode)
	}
	for _, auth := range []string{"Bearer s3cret", "bearer s3cret"} {
		resp, body = do(t, "POST", ts.URL+"/v1/chat/completions", chatBody, map[string]string{"Authorization": auth})
		if resp.StatusCode != 200 {
			t.Errorf("Authorization %q: %d %s", auth, resp.StatusCode, body)
		}
	}
	resp, body = do(t, "GET", ts.URL+"/health", "", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("/health: %d %s", resp.StatusCode, body)
	}
}

// TestRoutes: both APIs, /health and /metrics on one handler; unknown paths are 404s
// in the shape of their API.
func TestRoutes(t *testing.T) {
	_, ts := newServer(t, server.Config{})
	u, _ := url.Parse(ts.URL)
	c := api.NewClient(u, http.DefaultClient)
	var reply strings.Builder
	if err := c.Chat(context.Background(), &api.ChatRequest{Model: "stories260K", Messages: []api.Message{{Role: "user", Content: "Once upon a time"}},
		Options: map[string]any{"num_predict": 10}}, func(r api.ChatResponse) error { reply.WriteString(r.Message.Content); return nil }); err != nil || reply.Len() == 0 {
		t.Fatalf("ollama chat: %v %q", err, reply.String())
	}
	l, err := c.List(context.Background())
	if err != nil || len(l.Models) != 1 || l.Models[0].Details.QuantizationLevel != "F32" || !strings.HasPrefix(l.Models[0].Digest, "sha256:") {
		t.Fatalf("tags: %+v %v", l, err)
	}
	// Streaming passes through the middleware unbuffered.
	resp, body := do(t, "POST", ts.URL+"/v1/chat/completions", strings.Replace(chatBody, `"seed":1`, `"seed":1,"stream":true`, 1), nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("stream: %d %q", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", ts.URL+"/v1/nothing", "", nil)
	if resp.StatusCode != 404 || openAIError(t, body) != "unknown_url" {
		t.Errorf("/v1/nothing: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", ts.URL+"/nothing", "", nil)
	if resp.StatusCode != 404 {
		t.Errorf("/nothing: %d", resp.StatusCode)
	}
	ollamaError(t, body)
	resp, body = do(t, "GET", ts.URL+"/", "", nil)
	if resp.StatusCode != 200 || body != "Ollama is running" {
		t.Errorf("/: %d %q", resp.StatusCode, body)
	}
}

// TestMetrics: requests by route and status, token counts and latency histograms, and
// the gauges the engine feeds.
func TestMetrics(t *testing.T) {
	s, ts := newServer(t, server.Config{})
	do(t, "POST", ts.URL+"/v1/chat/completions", chatBody, nil)
	do(t, "POST", ts.URL+"/v1/chat/completions", chatBody, nil)
	do(t, "POST", ts.URL+"/v1/chat/completions", `{"model":"stories260K","n":9}`, nil)
	do(t, "GET", ts.URL+"/v1/chat/completions", ``, map[string]string{"Host": "evil.example"})
	do(t, "GET", ts.URL+"/some/random/path", ``, nil)
	_ = s
	// The engine publishes its state after the step that ended the last request, which
	// may come a moment after the client has its answer.
	var body string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, body = do(t, "GET", ts.URL+"/metrics", "", nil)
		if strings.Contains(body, "\nember_kv_cache_blocks_used 0\n") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{
		`ember_http_requests_total{code="200",route="POST /v1/chat/completions"} 2`,
		`ember_http_requests_total{code="400",route="POST /v1/chat/completions"} 1`,
		`ember_http_requests_total{code="403",route="/v1/chat/completions"} 1`,
		`ember_http_requests_total{code="404",route="unmatched"} 1`,
		`ember_completion_tokens_total 16`,
		`ember_generations_total{finish="length"} 2`,
		`ember_time_to_first_token_seconds_count 2`,
		`ember_inter_token_latency_seconds_count 14`,
		// Fed by the engine at each scrape: idle, so no block is used; the second
		// identical prompt found its full blocks (4 positions each) cached.
		`ember_kv_cache_blocks_used 0`,
		`ember_kv_cache_blocks_free 64`,
		`ember_prefix_cache_hit_ratio 0.`,
		`ember_draft_tokens_total 0`, // prompt lookup is off
		`ember_draft_accepted_tokens_total 0`,
		`ember_prompt_tokens_total `,
		`ember_prompt_cached_tokens_total `,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

// blocker is an API whose one route streams until its request's context ends.
type blocker struct{ cancelled chan struct{} }

func (b blocker) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /block", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("started\n"))
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
		close(b.cancelled)
	})
}

// TestGracefulShutdown: after its context ends, Serve closes the listener, lets running
// requests go on for the grace period, then cancels them (a generation would stop) and
// returns.
func TestGracefulShutdown(t *testing.T) {
	m := server.NewMetrics()
	md := newModel(t, m)
	b := blocker{cancelled: make(chan struct{})}
	s := server.New(server.Config{ShutdownGrace: 200 * time.Millisecond}, m, openai.New(md, openai.Options{}), b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	resp, _ := do(t, "POST", base+"/v1/chat/completions", chatBody, nil)
	if resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	sresp, err := http.Get(base + "/block")
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	if _, err := bufio.NewReader(sresp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cancel()
	select {
	case <-b.cancelled:
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Errorf("the running request was cancelled after %v, before the grace period", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the running request was not cancelled")
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts")
	}
}

func TestDefaultAddr(t *testing.T) {
	if server.DefaultAddr != "127.0.0.1:11435" {
		t.Errorf("DefaultAddr %s", server.DefaultAddr)
	}
}
