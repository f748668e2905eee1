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
	CachedTokens int           // prompt tokens whose computation was reused (prefix cache)
	ContextSize  int           // positions a prompt and its reply may take; 0 if unknown
}

// ChatRequest is what ChatService.Chat answers.
type ChatRequest struct {
	// History is the conversation: the chat's system prompt first (RoleSystem)
	// when it has one, the user's message last.
	History  []Message
	Sampling Sampling // the chat's own sampling settings
}

// Sampling is a chat's own sampling settings; a nil field means the app's
// default. The JSON form is how a History may keep them.
type Sampling struct {
	Temperature *float64 `json:"temperature,omitempty"` // 0 is greedy
	TopP        *float64 `json:"top_p,omitempty"`       // 0 < top-p <= 1
	TopK        *int     `json:"top_k,omitempty"`       // 0 keeps all tokens
	MaxTokens   *int     `json:"max_tokens,omitempty"`  // the longest reply, in tokens
}

// IsDefault reports whether s sets nothing.
func (s Sampling) IsDefault() bool {
	return s.Temperature == nil && s.TopP == nil && s.TopK == nil && s.MaxTokens == nil
}

// ChatService is what the UI needs from the rest of Ember.
type ChatService interface {
	// ModelName is the loaded model's display name.
	ModelName() string
	// BackendName is the compute backend: "cpu", "cuda", "metal", ...
	BackendName() string
	// Chat streams the assistant reply to req.History. onDelta is called from
	// another goroutine, in order, and never after Chat returns. Chat returns
	// when the reply is done, when ctx is cancelled (Stop, New chat, window
	// closed) or when it fails. The UI owns req.History; Chat must not keep it.
	Chat(ctx context.Context, req ChatRequest, onDelta func(Delta)) (Stats, error)
}

// BackendNoter is a ChatService that can say why its model runs on the CPU though a GPU
// is present (its compute capability, the driver's age); the UI shows it under the
// empty chat's hint.
type BackendNoter interface {
	BackendNote() string // "" when there is nothing to say
}

// Roles of Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)
