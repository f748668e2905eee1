package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestOpenDamaged: a database file that is not one, or is cut short, is refused with
// ErrCorrupt, an error naming the file once and saying what is wrong, and the file
// is left exactly as it was (the user's data is not overwritten).
func TestOpenDamaged(t *testing.T) {
	ctx := context.Background()
	garbage := filepath.Join(t.TempDir(), "ember.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("garbage!"), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "ember.db")
	s, err := Open(ctx, truncated)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.CreateConversation(ctx, Conversation{Title: "t"})
	for range 100 {
		if _, err := s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleUser, Content: strings.Repeat("z", 3000)}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	info, err := os.Stat(truncated)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(truncated, info.Size()/2); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{garbage, truncated} {
		before, _ := os.ReadFile(path)
		_, err := Open(ctx, path)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("open %s: %v, want ErrCorrupt", path, err)
			continue
		}
		msg := err.Error()
		if strings.Count(msg, "store:") != 1 || !strings.Contains(msg, path) || !strings.Contains(msg, "damaged") {
			t.Errorf("error %q: want one store: prefix, the path and what is wrong", msg)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Errorf("open changed the damaged file %s", path)
		}
	}
}

// TestTwoInstances: two Stores on one file (two app windows, or the app and the
// server) writing at once from several goroutines each: every write succeeds (the
// busy timeout waits out the other's lock) and nothing is lost.
func TestTwoInstances(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ember.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := a.CreateConversation(ctx, Conversation{Title: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		st := []*Store{a, b}[w%2]
		wg.Go(func() {
			for i := range each {
				m, err := st.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleAssistant, State: StateStreaming})
				if err == nil {
					err = st.UpdatePartial(ctx, m.ID, fmt.Sprintf("w%d i%d partial", w, i), "")
				}
				if err == nil {
					m.Content, m.State = fmt.Sprintf("w%d i%d", w, i), StateComplete
					err = st.FinishMessage(ctx, m)
				}
				if err == nil {
					_, err = st.SearchConversations(ctx, "partial")
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	msgs, err := b.Messages(ctx, c.ID)
	if err != nil || len(msgs) != writers*each {
		t.Fatalf("%d messages, want %d (%v)", len(msgs), writers*each, err)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.State != StateComplete || seen[m.Content] {
			t.Fatalf("message %+v", m)
		}
		seen[m.Content] = true
	}
	if err := a.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestOddText: text SQLite or Go might mangle (NUL bytes, invalid UTF-8, emoji,
// right-to-left marks, CJK) and a 16 MiB reply come back byte for byte; words in
// other scripts are found by search.
func TestOddText(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	c, err := s.CreateConversation(ctx, Conversation{Title: "ünïcødé \U0001F389", SystemPrompt: "a\x00b"})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"nul\x00inside", "bad utf-8 \xff\xfe\xc3", "party \U0001F389 time", "\u202eright to left\u202c",
		"日本語のテキスト 東京", "Привет мир", strings.Repeat("long reply é\U0001F600 ", 1<<20),
	}
	for _, text := range texts {
		m, err := s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleAssistant, Content: text, Reasoning: text})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Message(ctx, m.ID)
		if err != nil || got.Content != text || got.Reasoning != text {
			t.Errorf("%.40q came back as %.40q (%v)", text, got.Content, err)
		}
	}
	got, err := s.Conversation(ctx, c.ID)
	if err != nil || got.Title != "ünïcødé \U0001F389" || got.SystemPrompt != "a\x00b" {
		t.Errorf("conversation %+v, %v", got, err)
	}
	for _, q := range []string{"привет", "\U0001F389", "東京"} {
		if cs, err := s.SearchConversations(ctx, q); err != nil || len(cs) != 1 {
			t.Errorf("search %q: %d found, %v", q, len(cs), err)
		}
	}
}

// TestRetryAfterDiskFull: a save refused for a full disk (SQLITE_FULL) changes
// nothing, and the same call succeeds once there is room again.
func TestRetryAfterDiskFull(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	c, _ := s.CreateConversation(ctx, Conversation{Title: "full"})
	r, err := s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleAssistant, State: StateStreaming})
	if err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	setMax := func(n int) {
		if _, err := s.db.ExecContext(ctx, "PRAGMA max_page_count = "+strconv.Itoa(n)); err != nil {
			t.Fatal(err)
		}
	}
	setMax(pages + 2)
	big := strings.Repeat("a long streamed reply ", 4000)
	if err := s.UpdatePartial(ctx, r.ID, "saved part", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdatePartial(ctx, r.ID, big, ""); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("update past the limit: %v", err)
	}
	fin := r
	fin.Content, fin.State = big, StateComplete
	if err := s.FinishMessage(ctx, fin); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("finish past the limit: %v", err)
	}
	if m, _ := s.Message(ctx, r.ID); m.Content != "saved part" || m.State != StateStreaming {
		t.Fatalf("after the failures: %q %s", m.Content, m.State)
	}
	setMax(1 << 30) // room again
	if err := s.FinishMessage(ctx, fin); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if m, _ := s.Message(ctx, r.ID); m.Content != big || m.State != StateComplete {
		t.Fatalf("after the retry: %d bytes, %s", len(m.Content), m.State)
	}
	if err := s.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}
