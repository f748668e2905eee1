//go:build !nogui

package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ember/assets"
	"ember/ui"
)

// TestSwitchModels loads the bundled model, lists the models (one in the models
// folder, one added), switches to each and chats with it.
func TestSwitchModels(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := OpenHistory(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	src, err := os.ReadFile("../testdata/golden/llama-tiny-q8_0.gguf")
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Join(dir, ModelsFolder)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	inFolder := filepath.Join(folder, "tiny-in-folder.gguf")
	elsewhere := filepath.Join(t.TempDir(), "tiny-added.gguf")
	for _, p := range []string{inFolder, elsewhere} {
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	svc := &chatService{bo: BackendOptions{Name: "ref"}, st: st, dataDir: dir, modelsDir: folder, home: t.TempDir()}
	if err := svc.LoadModel(ctx, ""); err != nil {
		t.Fatal(err)
	}
	defer svc.close()
	if svc.ModelName() != assets.DefaultModelName || svc.CurrentModel() != "" {
		t.Fatalf("loaded %q %q", svc.ModelName(), svc.CurrentModel())
	}
	if _, err := svc.AddModel(ctx, filepath.Join(t.TempDir(), "missing.gguf")); err == nil {
		t.Error("added a missing file")
	}
	id, err := svc.AddModel(ctx, elsewhere)
	if err != nil || id != elsewhere {
		t.Fatalf("add = %q, %v", id, err)
	}
	models, err := svc.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range models {
		names = append(names, m.Name+" | "+m.Detail)
	}
	got := strings.Join(names, "\n")
	for _, want := range []string{assets.DefaultModelName + " | built in", "tiny-in-folder | llama · Q8_0 · ", "· models folder", "tiny-added | llama · Q8_0 · ", "· added"} {
		if !strings.Contains(got, want) {
			t.Errorf("models lack %q:\n%s", want, got)
		}
	}
	if len(models) != 3 {
		t.Errorf("%d models:\n%s", len(models), got)
	}

	for _, path := range []string{inFolder, elsewhere} {
		if err := svc.LoadModel(ctx, path); err != nil {
			t.Fatal(err)
		}
		if svc.CurrentModel() != path || svc.ModelName() != strings.TrimSuffix(filepath.Base(path), ".gguf") {
			t.Errorf("loaded %q as %q", svc.CurrentModel(), svc.ModelName())
		}
		maxTok := 4
		var text strings.Builder
		st, err := svc.Chat(ctx, ui.ChatRequest{History: []ui.Message{{Role: ui.RoleUser, Content: "Hi"}},
			Sampling: ui.Sampling{MaxTokens: &maxTok}}, func(d ui.Delta) { text.WriteString(d.Content + d.Reasoning) })
		if err != nil || st.GenTokens == 0 || st.GenTokens > maxTok || st.ContextSize == 0 {
			t.Errorf("chat with %s: %+v, %v", path, st, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "kvcache")); err != nil {
		t.Errorf("no prefix cache in the data folder: %v", err)
	}
	if err := svc.LoadModel(ctx, filepath.Join(dir, "nope.gguf")); err == nil || svc.CurrentModel() != elsewhere {
		t.Errorf("a failed load: %v; current %q", err, svc.CurrentModel())
	}
}
