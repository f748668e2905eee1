package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestSecondOpenerKeepsStreaming: a database opened while another Store has it open
// leaves that Store's streaming reply alone (a second app instance, or `ember serve`
// beside the app); once every Store is closed, the next opener marks what is still
// streaming as interrupted (the crash recovery), and it can be opened again after.
func TestSecondOpenerKeepsStreaming(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ember.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.CreateConversation(ctx, Conversation{Title: "two"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleAssistant, State: StateStreaming})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := b.Message(ctx, r.ID); err != nil || m.State != StateStreaming {
		t.Fatalf("second opener: reply state %q %v, want streaming", m.State, err)
	}
	if err := a.UpdatePartial(ctx, r.ID, "still going", ""); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{a, b} {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := d.Message(ctx, r.ID); err != nil || m.State != StateInterrupted || m.Content != "still going" {
		t.Fatalf("reopened alone: reply %q state %q %v, want interrupted", m.Content, m.State, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
