//go:build !nogui

package app

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"ember/inference/quant"
	"ember/ui"
)

func TestAppSettingsAndLocalServer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := OpenHistory(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := &chatService{bo: BackendOptions{Name: "ref"}, st: st, dataDir: dir, modelsDir: filepath.Join(dir, ModelsFolder)}
	if err := svc.LoadModel(ctx, ""); err != nil {
		t.Fatal(err)
	}
	defer svc.close()
	if s := svc.AppSettings(); s != (ui.AppSettings{}) {
		t.Errorf("defaults %+v", s)
	}

	// The server comes up on the loaded engine.
	status, err := svc.ApplyAppSettings(ctx, ui.AppSettings{ServerOn: true, ServerAddr: "127.0.0.1:0", APIKey: "k"})
	if err != nil || !strings.HasPrefix(status, "API at http://127.0.0.1:") {
		t.Fatalf("apply: %q, %v", status, err)
	}
	base := strings.TrimSuffix(strings.TrimPrefix(status, "API at "), "/v1")
	get := func(path, key string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/v1/models", "k"); code != 200 {
		t.Errorf("GET /v1/models = %d", code)
	}
	if code := get("/v1/models", ""); code != 401 {
		t.Errorf("GET /v1/models without the key = %d", code)
	}

	// A new context size reloads the model (and the server with it).
	status, err = svc.ApplyAppSettings(ctx, ui.AppSettings{ServerOn: true, ServerAddr: "127.0.0.1:0", ContextSize: 256})
	if err != nil || svc.eng.ContextSize() != 256 {
		t.Fatalf("apply a context size: %q, %v, context %d", status, err, svc.eng.ContextSize())
	}
	base = strings.TrimSuffix(strings.TrimPrefix(status, "API at "), "/v1")
	if code := get("/v1/models", ""); code != 200 {
		t.Errorf("after the reload: GET /v1/models = %d", code)
	}

	// Off: it stops. The settings are saved for the next start; prompt lookup reloads
	// the model with it.
	if status, err = svc.ApplyAppSettings(ctx, ui.AppSettings{ContextSize: 256, Threads: 2, NoGPU: true, Lookup: true}); err != nil || status != "Local server off" {
		t.Errorf("off: %q, %v", status, err)
	}
	if got := svc.eng.Options().Lookup; got != LookupTokens {
		t.Errorf("prompt lookup on: the engine drafts %d tokens, want %d", got, LookupTokens)
	}
	if _, err := http.Get(base + "/health"); err == nil {
		t.Error("the server still answers")
	}
	saved, err := loadAppSettings(ctx, st)
	if err != nil || saved != (ui.AppSettings{ContextSize: 256, Threads: 2, NoGPU: true, Lookup: true}) {
		t.Errorf("saved %+v, %v", saved, err)
	}

	// The compact KV cache: stories260K's 8-dim heads take no Q8_0 cache, so the model
	// loads on the F16 one; the setting is kept.
	if _, err = svc.ApplyAppSettings(ctx, ui.AppSettings{ContextSize: 256, Threads: 2, NoGPU: true, KVQ8: true}); err != nil {
		t.Fatalf("compact KV cache: %v", err)
	}
	if got := svc.eng.KVType(); got != quant.F16 {
		t.Errorf("stories260K on a %v cache", got)
	}
	if saved, err := loadAppSettings(ctx, st); err != nil || !saved.KVQ8 {
		t.Errorf("saved %+v, %v", saved, err)
	}

	// A port in use is an error, and the app goes on.
	ln, err := svc.ApplyAppSettings(ctx, ui.AppSettings{ServerOn: true, ServerAddr: "256.0.0.1:1"})
	if err == nil {
		t.Errorf("listening on a bad address: %q", ln)
	}
}

// A server that cannot start does not keep the model from loading.
func TestServerFailureDoesNotFailTheLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := OpenHistory(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := &chatService{bo: BackendOptions{Name: "ref"}, st: st, set: ui.AppSettings{ServerOn: true, ServerAddr: "256.0.0.1:1"}}
	if err := svc.LoadModel(ctx, ""); err != nil || svc.eng == nil {
		t.Fatalf("load with a bad server address: %v", err)
	}
	defer svc.close()
	if status, err := svc.ApplyAppSettings(ctx, svc.AppSettings()); err == nil || status != "Local server off" {
		t.Errorf("apply: %q, %v; want the server's error", status, err)
	}
}
