//go:build !nogui

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ember/ui"
)

// fakeRemote is an OpenAI-compatible server with two models; its replies think
// (reasoning_content), answer in three pieces and report usage. It wants key.
func fakeRemote(t *testing.T, key string, hold chan struct{}) (*httptest.Server, *[]map[string]any) {
	var bodies []map[string]any
	mux := http.NewServeMux()
	auth := func(w http.ResponseWriter, r *http.Request) bool {
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return false
		}
		return true
	}
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		if auth(w, r) {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"Qwen/Qwen3-235B-A22B"},{"id":"deepseek-r1:671b"}]}`)
		}
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if !auth(w, r) {
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		bodies = append(bodies, body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, chunk := range []string{
			`{"choices":[{"delta":{"role":"assistant","reasoning_content":"Greet back."}}]}`,
			`{"choices":[{"delta":{"content":"Hel"}}]}`,
			`{"choices":[{"delta":{"content":"lo"}}]}`,
			`{"choices":[{"delta":{"content":"!"}}]}`,
			`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
			f.Flush()
			if hold != nil && strings.Contains(chunk, `"lo"`) {
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
			}
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &bodies
}

func TestRemoteModels(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := OpenHistory(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, bodies := fakeRemote(t, "k", nil)
	svc := &chatService{bo: BackendOptions{Name: "ref"}, st: st, modelsDir: filepath.Join(dir, ModelsFolder)}
	if err := svc.LoadModel(ctx, ""); err != nil {
		t.Fatal(err)
	}
	defer svc.close()

	for _, bad := range []struct{ url, key, want string }{
		{"ftp://x", "k", "want http"},
		{srv.URL, "wrong", "401"},
		{"http://127.0.0.1:1", "k", "127.0.0.1:1"},
	} {
		if err := svc.AddRemote(ctx, bad.url, bad.key); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("AddRemote(%q, %q) = %v, want an error with %q", bad.url, bad.key, err, bad.want)
		}
	}
	if err := svc.AddRemote(ctx, srv.URL+"/v1/", " k "); err != nil {
		t.Fatal(err)
	}
	models, err := svc.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, m := range models {
		if m.Name == "deepseek-r1:671b" {
			id = m.ID
			if m.Detail != "remote · "+srv.URL {
				t.Errorf("detail %q", m.Detail)
			}
		}
	}
	if id == "" || len(models) != 3 {
		t.Fatalf("models %+v", models)
	}

	if err := svc.LoadModel(ctx, id); err != nil {
		t.Fatal(err)
	}
	if svc.ModelName() != "deepseek-r1:671b" || svc.BackendName() != "remote" || svc.CurrentModel() != id {
		t.Errorf("now %q on %q (%q)", svc.ModelName(), svc.BackendName(), svc.CurrentModel())
	}
	temp := 0.6
	var reasoning, content strings.Builder
	stats, err := svc.Chat(ctx, ui.ChatRequest{
		History:  []ui.Message{{Role: ui.RoleSystem, Content: "Be brief."}, {Role: ui.RoleUser, Content: "Hi"}},
		Sampling: ui.Sampling{Temperature: &temp},
	}, func(d ui.Delta) { reasoning.WriteString(d.Reasoning); content.WriteString(d.Content) })
	if err != nil || content.String() != "Hello!" || reasoning.String() != "Greet back." {
		t.Fatalf("chat: %q / %q, %v", content.String(), reasoning.String(), err)
	}
	if stats.PromptTokens != 9 || stats.GenTokens != 3 {
		t.Errorf("stats %+v", stats)
	}
	b := (*bodies)[0]
	if b["model"] != "deepseek-r1:671b" || b["temperature"] != 0.6 || b["stream"] != true || len(b["messages"].([]any)) != 2 {
		t.Errorf("request %v", b)
	}

	// A new start lists the server from the store; local models come back.
	svc2 := &chatService{bo: BackendOptions{Name: "ref"}, st: st}
	if err := svc2.LoadModel(ctx, id); err != nil { // found without a Models call
		t.Errorf("a remote model after a restart: %v", err)
	}
	if err := svc.LoadModel(ctx, ""); err != nil || svc.BackendName() == "remote" {
		t.Errorf("back to the local model: %v, %q", err, svc.BackendName())
	}
}

func TestRemoteStop(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	srv, _ := fakeRemote(t, "", hold)
	r := remoteModel{server: remoteServer{URL: srv.URL}, model: "m"}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 8)
	done := make(chan error)
	go func() {
		_, err := chatRemote(ctx, r, ui.ChatRequest{History: []ui.Message{{Role: ui.RoleUser, Content: "Hi"}}},
			func(d ui.Delta) { got <- d.Content })
		done <- err
	}()
	for s := ""; !strings.Contains(s, "lo"); {
		select {
		case d := <-got:
			s += d
		case err := <-done:
			t.Fatalf("the reply ended before Stop: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("no reply")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a stopped reply returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not end the remote reply")
	}
}
