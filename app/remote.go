//go:build !nogui

package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"ember/inference/reasoning"
	"ember/store"
	"ember/ui"
)

// A remote model is served by an OpenAI-compatible server (vLLM, SGLang, llama.cpp's
// server, or Ollama's /v1) for models too large for this machine. Its ID in the
// model list is remotePrefix + the server's base URL + "#" + the model's name.
const remotePrefix = "remote+"

// settingRemotes keeps the remote servers, as JSON.
const settingRemotes = "remote.servers"

// remoteServer is a server the user added: its base URL (up to, without, /v1) and
// API key.
type remoteServer struct {
	URL string `json:"url"`
	Key string `json:"key,omitempty"`
}

// remoteModel is the remote model chats go to.
type remoteModel struct {
	server remoteServer
	model  string
}

func remoteID(s remoteServer, model string) string { return remotePrefix + s.URL + "#" + model }

// remoteClient is the HTTP client for remote servers; a reply may stream for long,
// so only connecting and the response headers are bounded.
var remoteClient = &http.Client{Transport: &http.Transport{
	Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 2 * time.Minute, TLSHandshakeTimeout: 10 * time.Second,
}}

// normalizeServerURL checks a server's address and trims a trailing "/" or "/v1".
func normalizeServerURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("server address %q: want http://host:port or https://host", raw)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
}

func remoteRequest(ctx context.Context, s remoteServer, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.Key != "" {
		req.Header.Set("Authorization", "Bearer "+s.Key)
	}
	resp, err := remoteClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return nil, fmt.Errorf("%s%s: %s: %s", s.URL, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return resp, nil
}

// remoteModels lists a server's models (GET /v1/models).
func remoteModels(ctx context.Context, s remoteServer) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := remoteRequest(ctx, s, "GET", "/v1/models", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&list); err != nil {
		return nil, fmt.Errorf("%s/v1/models: %w", s.URL, err)
	}
	var out []string
	for _, m := range list.Data {
		if m.ID != "" {
			out = append(out, m.ID)
		}
	}
	return out, nil
}

// loadRemotes reads the remote servers from the store.
func loadRemotes(ctx context.Context, st *store.Store) ([]remoteServer, error) {
	v, err := st.Setting(ctx, settingRemotes)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []remoteServer
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("setting %s: %w", settingRemotes, err)
	}
	return out, nil
}

// AddRemote checks that the server at rawURL answers with its models and keeps it;
// its models then show in Models.
func (c *chatService) AddRemote(ctx context.Context, rawURL, key string) error {
	u, err := normalizeServerURL(rawURL)
	if err != nil {
		return err
	}
	s := remoteServer{URL: u, Key: strings.TrimSpace(key)}
	models, err := remoteModels(ctx, s)
	if err != nil {
		return err
	}
	if len(models) == 0 {
		return fmt.Errorf("%s serves no models", u)
	}
	servers, err := loadRemotes(ctx, c.st)
	if err != nil {
		return err
	}
	kept := []remoteServer{s}
	for _, o := range servers {
		if o.URL != s.URL {
			kept = append(kept, o)
		}
	}
	b, _ := json.Marshal(kept)
	return c.st.SetSetting(ctx, settingRemotes, string(b))
}

// remoteInfos lists the models of every remote server that answers.
func (c *chatService) remoteInfos(ctx context.Context) ([]ui.ModelInfo, map[string]remoteModel, error) {
	servers, err := loadRemotes(ctx, c.st)
	if err != nil {
		return nil, nil, err
	}
	var out []ui.ModelInfo
	byID := map[string]remoteModel{}
	var errs []error
	for _, s := range servers {
		models, err := remoteModels(ctx, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, m := range models {
			id := remoteID(s, m)
			out = append(out, ui.ModelInfo{ID: id, Name: m, Detail: "remote · " + s.URL})
			byID[id] = remoteModel{server: s, model: m}
		}
	}
	return out, byID, errors.Join(errs...)
}

// chatRemote streams a reply from the remote model r (POST /v1/chat/completions).
func chatRemote(ctx context.Context, r remoteModel, req ui.ChatRequest, onDelta func(ui.Delta)) (ui.Stats, error) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	body := map[string]any{"model": r.model, "stream": true, "stream_options": map[string]bool{"include_usage": true}}
	msgs := make([]message, 0, len(req.History))
	for _, m := range req.History {
		msgs = append(msgs, message{Role: m.Role, Content: m.Content})
	}
	body["messages"] = msgs
	s := req.Sampling
	if s.Temperature != nil {
		body["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		body["top_p"] = *s.TopP
	}
	if s.TopK != nil {
		body["top_k"] = *s.TopK // vLLM, SGLang and llama.cpp take it
	}
	if s.MaxTokens != nil {
		body["max_tokens"] = *s.MaxTokens
	}
	start := time.Now()
	resp, err := remoteRequest(ctx, r.server, "POST", "/v1/chat/completions", body)
	if err != nil {
		return ui.Stats{}, err
	}
	defer resp.Body.Close()

	var st ui.Stats
	var first, last time.Time
	split := reasoning.NewParser(false) // servers that leave <think> in the content
	emit := func(rs, c string) {
		if rs == "" && c == "" {
			return
		}
		if first.IsZero() {
			first = time.Now()
		}
		last = time.Now()
		onDelta(ui.Delta{Reasoning: rs, Content: c})
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
					Reasoning        string `json:"reasoning"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return st, fmt.Errorf("%s: a stream chunk: %w", r.server.URL, err)
		}
		if chunk.Error != nil {
			return st, fmt.Errorf("%s: %s", r.server.URL, chunk.Error.Message)
		}
		for _, ch := range chunk.Choices {
			d := ch.Delta
			emit(d.ReasoningContent+d.Reasoning, "")
			emit(split.Push(d.Content))
		}
		if u := chunk.Usage; u != nil {
			st.PromptTokens, st.GenTokens = u.PromptTokens, u.CompletionTokens
		}
	}
	emit(split.Flush())
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		return st, fmt.Errorf("%s: %w", r.server.URL, err)
	}
	if ctx.Err() != nil {
		return st, ctx.Err()
	}
	if !first.IsZero() {
		st.TTFT, st.GenTime = first.Sub(start), last.Sub(first)
		if st.GenTokens > 1 && st.GenTime > 0 {
			st.TokensPerSec = float64(st.GenTokens-1) / st.GenTime.Seconds()
		}
	}
	return st, nil
}
