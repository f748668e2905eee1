package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "ember.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func titles(cs []Conversation) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Title)
	}
	return out
}

func TestConversations(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	a, err := s.CreateConversation(ctx, Conversation{Title: "Paris trip", SystemPrompt: "Be brief.", Sampling: []byte(`{"temperature":0.2}`)})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == 0 || a.Created.IsZero() {
		t.Fatalf("created %+v", a)
	}
	time.Sleep(2 * time.Millisecond) // distinct updated_ms
	b, err := s.CreateConversation(ctx, Conversation{Title: "Go generics"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.ListConversations(ctx)
	if err != nil || !slices.Equal(titles(list), []string{"Go generics", "Paris trip"}) {
		t.Fatalf("list = %v, %v", titles(list), err)
	}
	got, err := s.Conversation(ctx, a.ID)
	if err != nil || got.SystemPrompt != "Be brief." || string(got.Sampling) != `{"temperature":0.2}` {
		t.Fatalf("get = %+v, %v", got, err)
	}

	// A new message moves a conversation to the top.
	time.Sleep(2 * time.Millisecond)
	if _, err := s.AppendMessage(ctx, Message{ConversationID: a.ID, Role: RoleUser, Content: "Where to eat near the Louvre?"}); err != nil {
		t.Fatal(err)
	}
	list, _ = s.ListConversations(ctx)
	if !slices.Equal(titles(list), []string{"Paris trip", "Go generics"}) {
		t.Errorf("after a message: %v", titles(list))
	}

	if err := s.RenameConversation(ctx, b.ID, "Type parameters"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSystemPrompt(ctx, b.ID, "You are a Go expert."); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Conversation(ctx, b.ID)
	if got.Title != "Type parameters" || got.SystemPrompt != "You are a Go expert." || got.Sampling != nil {
		t.Errorf("after rename: %+v", got)
	}
	got.Sampling, got.Model = []byte(`{"top_k":20}`), "qwen2.5-0.5b"
	if err := s.UpdateConversation(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got2, _ := s.Conversation(ctx, b.ID); string(got2.Sampling) != `{"top_k":20}` || got2.Model != "qwen2.5-0.5b" {
		t.Errorf("after update: %+v", got2)
	}
	if err := s.SetSettings(ctx, b.ID, "Be terse.", []byte(`{"temperature":0}`)); err != nil {
		t.Fatal(err)
	}
	if got2, _ := s.Conversation(ctx, b.ID); string(got2.Sampling) != `{"temperature":0}` || got2.SystemPrompt != "Be terse." || got2.Title != "Type parameters" {
		t.Errorf("after SetSettings: %+v", got2)
	}
	if err := s.SetSettings(ctx, b.ID, "", nil); err != nil {
		t.Fatal(err)
	}
	if got2, _ := s.Conversation(ctx, b.ID); got2.Sampling != nil || got2.SystemPrompt != "" {
		t.Errorf("after SetSettings to defaults: %+v", got2)
	}
	if err := s.SetSettings(ctx, 999, "", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetSettings of a missing chat: %v", err)
	}
	got.Sampling = []byte(`[1,2]`)
	if err := s.UpdateConversation(ctx, got); err == nil {
		t.Error("sampling settings that are not an object were saved")
	}

	if err := s.DeleteConversation(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Conversation(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted conversation: err = %v", err)
	}
	if msgs, err := s.Messages(ctx, a.ID); err != nil || len(msgs) != 0 {
		t.Errorf("messages of a deleted conversation: %v, %v", msgs, err)
	}
	for name, err := range map[string]error{
		"rename":  s.RenameConversation(ctx, 999, "x"),
		"delete":  s.DeleteConversation(ctx, 999),
		"prompt":  s.SetSystemPrompt(ctx, 999, "x"),
		"partial": s.UpdatePartial(ctx, 999, "x", ""),
		"trunc":   s.TruncateFrom(ctx, 999),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s of a missing row: err = %v, want ErrNotFound", name, err)
		}
	}
	if _, err := s.AppendMessage(ctx, Message{ConversationID: 999, Role: RoleUser}); !errors.Is(err, ErrNotFound) {
		t.Errorf("append to a missing conversation: %v", err)
	}
}

func TestStreamingReply(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ember.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.CreateConversation(ctx, Conversation{Title: "t"})
	u, err := s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleUser, Content: "Count to three"})
	if err != nil || u.State != StateComplete {
		t.Fatal(u, err)
	}
	r, err := s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleAssistant, State: StateStreaming, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"One", "One, two", "One, two, three"} {
		if err := s.UpdatePartial(ctx, r.ID, text, "counting"); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := s.Message(ctx, r.ID)
	if got.Content != "One, two, three" || got.State != StateStreaming {
		t.Fatalf("partial = %+v", got)
	}
	r.Content, r.Reasoning, r.State = "One, two, three.", "counting", StateComplete
	r.PromptTokens, r.GenTokens, r.TTFT, r.GenTime = 12, 7, 150*time.Millisecond, 2*time.Second
	if err := s.FinishMessage(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.State = StateStreaming
	if err := s.FinishMessage(ctx, r); err == nil {
		t.Error("finished a reply as streaming")
	}

	// Another reply streams, and the app dies: at the next open it is interrupted.
	r2, _ := s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleAssistant, State: StateStreaming})
	s.UpdatePartial(ctx, r2.ID, "Half a", "")
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs, err := s.Messages(ctx, c.ID)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("messages = %+v, %v", msgs, err)
	}
	if m := msgs[1]; m.Content != "One, two, three." || m.State != StateComplete || m.GenTokens != 7 ||
		m.TTFT != 150*time.Millisecond || m.GenTime != 2*time.Second || m.Model != "m" {
		t.Errorf("finished reply = %+v", m)
	}
	if m := msgs[2]; m.Content != "Half a" || m.State != StateInterrupted {
		t.Errorf("reply of a dead app = %+v", m)
	}

	// Regenerate: drop the last reply; edit: drop from the question on.
	if err := s.TruncateFrom(ctx, msgs[2].ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Messages(ctx, c.ID); len(n) != 2 {
		t.Errorf("after truncating the last: %d messages", len(n))
	}
	if err := s.TruncateFrom(ctx, msgs[0].ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Messages(ctx, c.ID); len(n) != 0 {
		t.Errorf("after truncating from the first: %d messages", len(n))
	}
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	add := func(title string, texts ...string) Conversation {
		c, err := s.CreateConversation(ctx, Conversation{Title: title})
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range texts {
			role := RoleUser
			if i%2 == 1 {
				role = RoleAssistant
			}
			if _, err := s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: role, Content: text}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		return c
	}
	add("Paris trip", "Where should I eat?", "Try a bistro near the Louvre.")
	rust := add("Rust lifetimes", "Explain borrowing", "The borrow checker ensures references are valid.")
	add("Crème brûlée", "How long in the oven?", "About 40 minutes at 150 °C (100% sure? no).")
	reply, _ := s.AppendMessage(ctx, Message{ConversationID: rust.ID, Role: RoleAssistant, State: StateStreaming})
	s.UpdatePartial(ctx, reply.ID, "Ownership moves values; zebras aside.", "")

	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"", []string{"Rust lifetimes", "Crème brûlée", "Paris trip"}},
		{"paris", []string{"Paris trip"}},            // title, any case
		{"louvre", []string{"Paris trip"}},           // content
		{"BORROW", []string{"Rust lifetimes"}},       // word prefix: borrowing, borrow
		{"borrow valid", []string{"Rust lifetimes"}}, // all words
		{"borrow louvre", nil},                       // not in one message
		{"zebra", []string{"Rust lifetimes"}},        // a streaming reply is indexed too
		{"brûlée", []string{"Crème brûlée"}},         // unicode title
		{"minutes", []string{"Crème brûlée"}},        // content
		{"100%", []string{"Crème brûlée"}},           // words "100"
		{`"unclosed`, nil},                           // no FTS syntax error
		{"%", []string{"Crème brûlée"}},              // no words: substring, % escaped
		{"_", nil},                                   // _ is not a wildcard
		{"trip", []string{"Paris trip"}},
	} {
		got, err := s.SearchConversations(ctx, tc.q)
		if err != nil {
			t.Errorf("search %q: %v", tc.q, err)
			continue
		}
		if !slices.Equal(titles(got), tc.want) {
			t.Errorf("search %q = %q, want %q", tc.q, titles(got), tc.want)
		}
	}

	// The index follows updates and deletes (including cascades).
	if err := s.UpdatePartial(ctx, reply.ID, "Lions only.", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.SearchConversations(ctx, "zebras"); len(got) != 0 {
		t.Errorf("old text still found: %q", titles(got))
	}
	if err := s.DeleteConversation(ctx, rust.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'lions'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("index rows of a deleted conversation: %d, %v", n, err)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')`); err != nil {
		t.Errorf("full-text index integrity: %v", err)
	}
}

func TestSettingsAndModels(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if _, err := s.Setting(ctx, "threads"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing setting: %v", err)
	}
	for _, v := range []string{"4", "8"} {
		if err := s.SetSetting(ctx, "threads", v); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := s.Setting(ctx, "threads"); v != "8" || err != nil {
		t.Errorf("setting = %q, %v", v, err)
	}
	m := Model{Path: "/m/llama.gguf", Name: "llama3.2:1b", Arch: "llama", Size: 808e6, Quant: "Q4_K_M", CtxLength: 131072, Fingerprint: "abc", Source: "ollama"}
	if err := s.PutModel(ctx, m); err != nil {
		t.Fatal(err)
	}
	m.Name = "Llama 3.2 1B"
	if err := s.PutModel(ctx, m); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Models(ctx)
	if err != nil || len(ms) != 1 || ms[0].Name != "Llama 3.2 1B" || ms[0].CtxLength != 131072 || ms[0].Added.IsZero() {
		t.Fatalf("models = %+v, %v", ms, err)
	}
	if err := s.DeleteModel(ctx, m.Path); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteModel(ctx, m.Path); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

// TestDiskFull fills the database to a page limit (SQLITE_FULL, as a full disk
// gives): the error says so, and what was committed before is all there.
func TestDiskFull(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	c, _ := s.CreateConversation(ctx, Conversation{Title: "big"})
	var pages int
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "PRAGMA max_page_count = "+strconv.Itoa(pages+40)); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("All work and no play makes Jack a dull boy. ", 200) // ~9 KB
	var saved []int64
	var err error
	for range 1000 {
		var m Message
		m, err = s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleUser, Content: text})
		if err != nil {
			break
		}
		saved = append(saved, m.ID)
	}
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("err = %v, want ErrDiskFull", err)
	}
	if len(saved) < 2 {
		t.Fatalf("only %d messages fit", len(saved))
	}
	// A streaming reply that cannot grow keeps its last saved piece.
	var lastOK int64 = saved[len(saved)-1]
	if err := s.UpdatePartial(ctx, lastOK, "short", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdatePartial(ctx, lastOK, strings.Repeat(text, 20), ""); !errors.Is(err, ErrDiskFull) {
		t.Errorf("growing a reply past the limit: %v", err)
	}
	msgs, err := s.Messages(ctx, c.ID)
	if err != nil || len(msgs) != len(saved) {
		t.Fatalf("%d messages after the disk filled, want %d (%v)", len(msgs), len(saved), err)
	}
	if msgs[len(msgs)-1].Content != "short" || msgs[0].Content != text {
		t.Error("committed text changed")
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestOddPath opens a database whose path has characters that URIs treat
// specially.
func TestOddPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my chats?#%20&x=1")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ember.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateConversation(context.Background(), Conversation{Title: "x"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the database is not where asked: %v", err)
	}
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "missing", "ember.db")); err == nil {
		t.Error("opened a database in a missing folder")
	}
}
