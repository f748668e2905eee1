//go:build !nogui

package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"ember/assets"
	"ember/ui"
)

// TestStartModel: the desktop app's first model loads once its window is open
// (ui.Starter): a missing or broken file is refused before any window, a good one is
// named for the window and loaded by Start, and a chat with no model loaded (a first
// load that failed) is an error, not a crash.
func TestStartModel(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := startName(filepath.Join(dir, "missing.gguf")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing file: %v", err)
	}
	broken := filepath.Join(dir, "broken.gguf")
	if err := os.WriteFile(broken, []byte("GGUF\x03\x00\x00\x00 not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := startName(broken); err == nil {
		t.Error("a broken file was taken")
	}
	if name, err := startName(""); err != nil || name != assets.DefaultModelName {
		t.Errorf("bundled: %q, %v", name, err)
	}
	src, err := os.ReadFile("../testdata/golden/llama-tiny-q8_0.gguf")
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "tiny-start.gguf")
	if err := os.WriteFile(good, src, 0o644); err != nil {
		t.Fatal(err)
	}
	name, err := startName(good)
	if err != nil || name != "tiny-start" {
		t.Fatalf("good file: %q, %v", name, err)
	}

	st, err := OpenHistory(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := &chatService{bo: BackendOptions{Name: "ref"}, st: st, dataDir: dir, startID: good, startName: name}
	defer svc.close()
	var starter ui.Starter = svc
	if starter.Starting() != "tiny-start" || svc.ModelName() != "" {
		t.Fatalf("before Start: starting %q, model %q", starter.Starting(), svc.ModelName())
	}
	req := ui.ChatRequest{History: []ui.Message{{Role: "user", Content: "Hi"}}}
	if _, err := svc.Chat(ctx, req, func(ui.Delta) {}); err == nil || !strings.Contains(err.Error(), "no model is loaded") {
		t.Errorf("chat before the load: %v", err)
	}
	if err := starter.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if starter.Starting() != "" || svc.ModelName() != "tiny-start" || svc.CurrentModel() != good || svc.LoadStage() != "" {
		t.Errorf("after Start: starting %q, model %q, id %q", starter.Starting(), svc.ModelName(), svc.CurrentModel())
	}
	var text strings.Builder
	if _, err := svc.Chat(ctx, req, func(d ui.Delta) { text.WriteString(d.Content) }); err != nil || text.Len() == 0 {
		t.Errorf("chat after the load: %q, %v", text.String(), err)
	}
}

// TestLoadStages: a load tells BackendOptions.Stage how far its weights are, in whole
// percent rising to 100, then "" (the end), and nothing once it is done.
func TestLoadStages(t *testing.T) {
	var mu sync.Mutex
	var stages []string
	bo := BackendOptions{Name: "ref", Stage: func(s string) {
		mu.Lock()
		defer mu.Unlock()
		stages = append(stages, s)
	}}
	l, err := OpenModel("../testdata/golden/llama-tiny-q8_0.gguf", bo)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(stages) < 3 || stages[len(stages)-2] != "loading the weights, 100%" || stages[len(stages)-1] != "" {
		t.Fatalf("stages %q", stages)
	}
	last := -1
	for _, s := range stages[:len(stages)-1] {
		var pct int
		if _, err := fmt.Sscanf(s, "loading the weights, %d%%", &pct); err != nil || pct <= last || pct > 100 {
			t.Errorf("stage %q after %d%%", s, last)
		}
		last = pct
	}
	n := len(stages)
	mu.Unlock()
	l.File.TensorData(&l.File.Tensors[0]) // the server's reads after the load: no stage
	mu.Lock()
	if len(stages) != n {
		t.Errorf("a stage after the load: %q", stages[n:])
	}
}
