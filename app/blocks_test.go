//go:build !nogui

package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"ember/ui"
)

// TestLoadWithoutPrefixCache: a data folder where the persistent prefix cache cannot be
// opened (here "kvcache" is a file, as a full or read-only disk would refuse it too)
// still loads the model, and chats work without the cache.
func TestLoadWithoutPrefixCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := OpenHistory(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := os.WriteFile(filepath.Join(dir, "kvcache"), []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc := &chatService{bo: BackendOptions{Name: "ref"}, st: st, dataDir: dir, modelsDir: filepath.Join(dir, ModelsFolder), home: t.TempDir()}
	if err := svc.LoadModel(ctx, ""); err != nil {
		t.Fatalf("load with a prefix cache that cannot open: %v", err)
	}
	defer svc.close()
	maxTok := 4
	stats, err := svc.Chat(ctx, ui.ChatRequest{History: []ui.Message{{Role: ui.RoleUser, Content: "Hi"}},
		Sampling: ui.Sampling{MaxTokens: &maxTok}}, func(ui.Delta) {})
	if err != nil || stats.GenTokens == 0 {
		t.Fatalf("chat: %+v, %v", stats, err)
	}
}
