//go:build !nogui

package app

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"ember/ui"
)

func TestHistoryRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data", "ember") // made by OpenHistory
	st, err := OpenHistory(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &history{st: st, model: func() string { return "stories260K" }}
	temp := 0.3
	c, err := h.NewChat(ctx, ui.ChatInfo{Title: "Once upon a time", SystemPrompt: "Write for children.", Sampling: ui.Sampling{Temperature: &temp}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := h.AddMessage(ctx, c.ID, ui.Message{Role: ui.RoleUser, Content: "Once upon a time"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := h.StartReply(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.SaveReply(ctx, r, ui.Message{Content: "there was a", Reasoning: "a story"}); err != nil {
		t.Fatal(err)
	}

	// The app dies here: the next start shows the reply interrupted.
	st.Close()
	if st, err = OpenHistory(ctx, dir); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h.st = st
	info, msgs, err := h.Load(ctx, c.ID)
	if err != nil || info.SystemPrompt != "Write for children." || *info.Sampling.Temperature != 0.3 || len(msgs) != 2 {
		t.Fatalf("load = %+v, %+v, %v", info, msgs, err)
	}
	want := ui.Message{Role: ui.RoleAssistant, Content: "there was a", Reasoning: "a story", ID: r, Interrupted: true}
	if msgs[0].ID != q || msgs[1] != want {
		t.Errorf("messages = %+v", msgs)
	}

	// Regenerate: a new reply, finished.
	if err := h.TruncateFrom(ctx, r); err != nil {
		t.Fatal(err)
	}
	r, _ = h.StartReply(ctx, c.ID)
	st2 := ui.Stats{PromptTokens: 5, GenTokens: 9, TTFT: 30 * time.Millisecond, GenTime: time.Second}
	if err := h.FinishReply(ctx, r, ui.Message{Content: "there was a cat."}, st2, false); err != nil {
		t.Fatal(err)
	}
	sm, err := st.Message(ctx, r)
	if err != nil || sm.Model != "stories260K" || sm.GenTokens != 9 || sm.GenTime != time.Second || sm.State != "complete" {
		t.Errorf("saved reply = %+v, %v", sm, err)
	}

	if err := h.Rename(ctx, c.ID, "Cat story"); err != nil {
		t.Fatal(err)
	}
	if err := h.SetSettings(ctx, c.ID, "", ui.Sampling{}); err != nil {
		t.Fatal(err)
	}
	chats, err := h.Chats(ctx, "cat")
	if err != nil || len(chats) != 1 || chats[0].Title != "Cat story" || chats[0].SystemPrompt != "" || !chats[0].Sampling.IsDefault() {
		t.Errorf("search = %+v, %v", chats, err)
	}
	for _, f := range []string{ui.ExportMarkdown, ui.ExportJSON} {
		var b bytes.Buffer
		if err := h.Export(ctx, c.ID, f, &b); err != nil || !strings.Contains(b.String(), "there was a cat.") {
			t.Errorf("export %s: %q, %v", f, b.String(), err)
		}
	}
	if err := h.Export(ctx, c.ID, "pdf", &bytes.Buffer{}); err == nil {
		t.Error("exported pdf")
	}
	if err := h.Delete(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if chats, _ := h.Chats(ctx, ""); len(chats) != 0 {
		t.Errorf("after delete: %+v", chats)
	}
}

func TestDefaultDataDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("XDG layout")
	}
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg")
	if d, err := DefaultDataDir(); err != nil || d != "/tmp/xdg/ember" {
		t.Errorf("with XDG_DATA_HOME: %q, %v", d, err)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	if d, err := DefaultDataDir(); err != nil || d != "/home/u/.local/share/ember" {
		t.Errorf("without: %q, %v", d, err)
	}
}

func TestSamplingParams(t *testing.T) {
	p, n := samplingParams(ui.Sampling{})
	if p.Temperature != defaultTemperature || p.TopK != defaultTopK || p.TopP != defaultTopP || p.MinP != defaultMinP || n != defaultMaxTokens {
		t.Errorf("defaults: %+v, %d", p, n)
	}
	temp, topP, topK, maxTok := 0.0, 0.5, 0, 64
	p, n = samplingParams(ui.Sampling{Temperature: &temp, TopP: &topP, TopK: &topK, MaxTokens: &maxTok})
	if p.Temperature != 0 || p.TopP != 0.5 || p.TopK != 0 || n != 64 {
		t.Errorf("overrides: %+v, %d", p, n)
	}
}
