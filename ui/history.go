//go:build !nogui

package ui

import (
	"context"
	"io"
	"time"
)

// ChatInfo is a saved conversation as the sidebar lists it.
type ChatInfo struct {
	ID           int64
	Title        string
	SystemPrompt string
	Sampling     Sampling
	Updated      time.Time
}

// Export formats for History.Export.
const (
	ExportMarkdown = "markdown"
	ExportJSON     = "json"
)

// History keeps conversations on disk. The UI calls it on the Fyne goroutine,
// except SaveReply, FinishReply and DeleteReply, which the goroutine streaming
// a reply calls; every call should return within milliseconds. Errors are
// shown to the user.
type History interface {
	// Chats lists the saved conversations, the most recent first; a non-blank
	// query keeps those whose title or messages match it.
	Chats(ctx context.Context, query string) ([]ChatInfo, error)
	// Load returns a conversation and its messages in order, with their IDs.
	Load(ctx context.Context, id int64) (ChatInfo, []Message, error)
	// NewChat saves a new, empty conversation with c's title and settings
	// and returns it with its ID.
	NewChat(ctx context.Context, c ChatInfo) (ChatInfo, error)
	Rename(ctx context.Context, id int64, title string) error
	// SetSettings saves a conversation's system prompt and sampling settings.
	SetSettings(ctx context.Context, id int64, systemPrompt string, s Sampling) error
	Delete(ctx context.Context, id int64) error
	// AddMessage saves a finished message (the user's) at the end of chat and
	// returns its ID once it is safely on disk.
	AddMessage(ctx context.Context, chat int64, m Message) (int64, error)
	// StartReply saves an empty assistant reply that is about to stream.
	StartReply(ctx context.Context, chat int64) (int64, error)
	// SaveReply saves the text a streaming reply has so far.
	SaveReply(ctx context.Context, id int64, m Message) error
	// FinishReply saves the reply's final text and stats; stopped says it was
	// cut short (Stop, an error, the window closed).
	FinishReply(ctx context.Context, id int64, m Message, st Stats, stopped bool) error
	// TruncateFrom deletes message id and all later messages of its chat.
	TruncateFrom(ctx context.Context, id int64) error
	// Export writes conversation id as ExportMarkdown or ExportJSON.
	Export(ctx context.Context, id int64, format string, w io.Writer) error
}
