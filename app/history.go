//go:build !nogui

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"ember/store"
	"ember/ui"
)

// OpenHistory opens (creating them if needed) the data folder dir and the
// conversation database in it.
func OpenHistory(ctx context.Context, dir string) (*store.Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	return store.Open(ctx, filepath.Join(dir, HistoryFile))
}

// history adapts the store to the UI's History; replies are recorded as written by
// model().
type history struct {
	st    *store.Store
	model func() string // the loaded model's name
}

var _ ui.History = (*history)(nil)

// chatInfo is c for the UI. Sampling settings that do not parse (written by
// another version) are dropped, not an error.
func chatInfo(c store.Conversation) ui.ChatInfo {
	info := ui.ChatInfo{ID: c.ID, Title: c.Title, SystemPrompt: c.SystemPrompt, Updated: c.Updated}
	if len(c.Sampling) > 0 {
		if err := json.Unmarshal(c.Sampling, &info.Sampling); err != nil {
			info.Sampling = ui.Sampling{}
		}
	}
	return info
}

// samplingJSON is s as the store keeps it: nil for the defaults.
func samplingJSON(s ui.Sampling) (json.RawMessage, error) {
	if s.IsDefault() {
		return nil, nil
	}
	return json.Marshal(s)
}

func (h *history) Chats(ctx context.Context, query string) ([]ui.ChatInfo, error) {
	cs, err := h.st.SearchConversations(ctx, query)
	if err != nil {
		return nil, err
	}
	out := make([]ui.ChatInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, chatInfo(c))
	}
	return out, nil
}

func (h *history) Load(ctx context.Context, id int64) (ui.ChatInfo, []ui.Message, error) {
	c, err := h.st.Conversation(ctx, id)
	if err != nil {
		return ui.ChatInfo{}, nil, err
	}
	msgs, err := h.st.Messages(ctx, id)
	if err != nil {
		return ui.ChatInfo{}, nil, err
	}
	out := make([]ui.Message, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, ui.Message{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, ID: m.ID,
			Interrupted: m.State != store.StateComplete})
	}
	return chatInfo(c), out, nil
}

func (h *history) NewChat(ctx context.Context, info ui.ChatInfo) (ui.ChatInfo, error) {
	sampling, err := samplingJSON(info.Sampling)
	if err != nil {
		return ui.ChatInfo{}, err
	}
	c, err := h.st.CreateConversation(ctx, store.Conversation{Title: info.Title, SystemPrompt: info.SystemPrompt,
		Sampling: sampling, Model: h.model()})
	return chatInfo(c), err
}

func (h *history) Rename(ctx context.Context, id int64, title string) error {
	return h.st.RenameConversation(ctx, id, title)
}

func (h *history) SetSettings(ctx context.Context, id int64, prompt string, s ui.Sampling) error {
	sampling, err := samplingJSON(s)
	if err != nil {
		return err
	}
	return h.st.SetSettings(ctx, id, prompt, sampling)
}

func (h *history) Delete(ctx context.Context, id int64) error {
	return h.st.DeleteConversation(ctx, id)
}

func (h *history) AddMessage(ctx context.Context, chat int64, m ui.Message) (int64, error) {
	sm, err := h.st.AppendMessage(ctx, store.Message{ConversationID: chat, Role: m.Role, Content: m.Content, Reasoning: m.Reasoning})
	return sm.ID, err
}

func (h *history) StartReply(ctx context.Context, chat int64) (int64, error) {
	sm, err := h.st.AppendMessage(ctx, store.Message{ConversationID: chat, Role: store.RoleAssistant,
		State: store.StateStreaming, Model: h.model()})
	return sm.ID, err
}

func (h *history) SaveReply(ctx context.Context, id int64, m ui.Message) error {
	return h.st.UpdatePartial(ctx, id, m.Content, m.Reasoning)
}

func (h *history) FinishReply(ctx context.Context, id int64, m ui.Message, st ui.Stats, stopped bool) error {
	state := store.StateComplete
	if stopped {
		state = store.StateInterrupted
	}
	return h.st.FinishMessage(ctx, store.Message{ID: id, Content: m.Content, Reasoning: m.Reasoning,
		PromptTokens: st.PromptTokens, GenTokens: st.GenTokens, Model: h.model(), TTFT: st.TTFT, GenTime: st.GenTime,
		State: state})
}

func (h *history) TruncateFrom(ctx context.Context, id int64) error {
	return h.st.TruncateFrom(ctx, id)
}

func (h *history) Export(ctx context.Context, id int64, format string, w io.Writer) error {
	switch format {
	case ui.ExportMarkdown:
		return h.st.Export(ctx, id, store.FormatMarkdown, w)
	case ui.ExportJSON:
		return h.st.Export(ctx, id, store.FormatJSON, w)
	}
	return fmt.Errorf("export: unknown format %q", format)
}
