package store

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestExport(t *testing.T) {
	when := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	c := Conversation{ID: 3, Title: "Capital\nof France", SystemPrompt: "Answer in one sentence.\n\nBe kind.", Model: "qwen3-0.6b",
		Sampling: json.RawMessage(`{"temperature":0.6}`), Created: when, Updated: when.Add(time.Minute)}
	msgs := []Message{
		{Role: RoleUser, Content: "What is the capital of France?", State: StateComplete, Created: when},
		{Role: RoleAssistant, Content: "The capital of France is **Paris**.", Reasoning: "Easy: Paris.", Model: "qwen3-0.6b",
			PromptTokens: 20, GenTokens: 14, TTFT: 120 * time.Millisecond, GenTime: 700 * time.Millisecond,
			State: StateComplete, Created: when.Add(time.Second)},
		{Role: RoleUser, Content: "And of Italy?", State: StateComplete, Created: when.Add(2 * time.Second)},
		{Role: RoleAssistant, Content: "Rome, the", State: StateInterrupted, Created: when.Add(3 * time.Second)},
	}
	for _, tc := range []struct {
		golden string
		write  func(*bytes.Buffer) error
	}{
		{"export.md", func(b *bytes.Buffer) error { return WriteMarkdown(b, c, msgs) }},
		{"export.json", func(b *bytes.Buffer) error { return WriteJSON(b, c, msgs) }},
	} {
		var b bytes.Buffer
		if err := tc.write(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", tc.golden)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (make it with -update)", err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s differs:\n%s", tc.golden, b.String())
		}
	}
	var back exportJSON
	var b bytes.Buffer
	WriteJSON(&b, c, msgs)
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Messages) != 4 || back.Messages[1].Reasoning != "Easy: Paris." {
		t.Errorf("JSON export does not read back: %+v, %v", back, err)
	}
}

func TestExportFromStore(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	c, _ := s.CreateConversation(ctx, Conversation{Title: "Hi"})
	s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleUser, Content: "Hello"})
	var md, js bytes.Buffer
	if err := s.Export(ctx, c.ID, FormatMarkdown, &md); err != nil || !bytes.Contains(md.Bytes(), []byte("## User\n\nHello\n")) {
		t.Errorf("markdown: %q, %v", md.String(), err)
	}
	if err := s.Export(ctx, c.ID, FormatJSON, &js); err != nil || !json.Valid(js.Bytes()) {
		t.Errorf("json: %q, %v", js.String(), err)
	}
	if err := s.Export(ctx, c.ID, "pdf", &js); err == nil {
		t.Error("exported as pdf")
	}
	if err := s.Export(ctx, 99, FormatJSON, &js); err == nil {
		t.Error("exported a missing conversation")
	}
}
