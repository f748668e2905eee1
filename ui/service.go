//go:build !nogui

package ui

import (
	"context"
	"time"
)

// Message is one turn of a conversation.
type Message struct {
	Role      string // "system" | "user" | "assistant"
	Content   string // the visible text
	Reasoning string // the model's <think>...</think> text, without the tags; "" if none
	// ID is the message's History ID; 0 when it is not saved.
	ID int64
	// Interrupted: a reply that was cut short (stopped, failed, the app died).
	Interrupted bool
}

// Delta is a streamed piece of an assistant reply. Either field may be empty.
type Delta struct {
	Content   string // appended to Message.Content
	Reasoning string // appended to Message.Reasoning
}

// Stats describes one finished (or stopped) reply.
type Stats struct {
	PromptTokens int           // tokens in the rendered prompt
	GenTokens    int           // tokens generated
	TokensPerSec float64       // generation speed, generated tokens per second
	TTFT         time.Duration // time from the request to the first generated token
	GenTime      time.Duration // time from the first generated token to the last
}

// ChatService is what the UI needs from the rest of Ember.
type ChatService interface {
	// ModelName is the loaded model's display name.
	ModelName() string
	// BackendName is the compute backend: "cpu", "cuda", "metal", ...
	BackendName() string
	// Chat streams the assistant reply to the conversation history, whose
	// last message is the user's; the first is the chat's system prompt
	// (RoleSystem) when it has one. onDelta is called from another goroutine,
	// in order, and never after Chat returns. Chat returns when the reply is
	// done, when ctx is cancelled (Stop, New chat, window closed) or when it
	// fails. The UI owns history; Chat must not keep it.
	Chat(ctx context.Context, history []Message, onDelta func(Delta)) (Stats, error)
}

// Roles of Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)
