package store

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Export formats.
const (
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Export writes conversation id to w as FormatMarkdown or FormatJSON.
func (s *Store) Export(ctx context.Context, id int64, format string, w io.Writer) error {
	c, err := s.Conversation(ctx, id)
	if err != nil {
		return err
	}
	msgs, err := s.Messages(ctx, id)
	if err != nil {
		return err
	}
	switch format {
	case FormatMarkdown:
		err = WriteMarkdown(w, c, msgs)
	case FormatJSON:
		err = WriteJSON(w, c, msgs)
	default:
		return fmt.Errorf("store: export conversation %d: unknown format %q", id, format)
	}
	if err != nil {
		return fmt.Errorf("store: export conversation %d: %w", id, err)
	}
	return nil
}

// WriteMarkdown writes a conversation as a Markdown document: a heading with the
// title, the system prompt as a quote, then each message under a heading naming
// its role, with reasoning in a collapsible <details> block.
func WriteMarkdown(w io.Writer, c Conversation, msgs []Message) error {
	var b strings.Builder
	title := c.Title
	if title == "" {
		title = "Conversation"
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLine(title))
	meta := []string{c.Created.UTC().Format(time.RFC3339)}
	if c.Model != "" {
		meta = append(meta, "model "+c.Model)
	}
	fmt.Fprintf(&b, "_%s_\n\n", strings.Join(meta, " · "))
	if c.SystemPrompt != "" {
		b.WriteString("**System prompt**\n\n")
		for line := range strings.SplitSeq(strings.TrimRight(c.SystemPrompt, "\n"), "\n") {
			b.WriteString(strings.TrimRight("> "+line, " ") + "\n")
		}
		b.WriteString("\n")
	}
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			b.WriteString("## User\n\n")
		case RoleAssistant:
			b.WriteString("## Assistant\n\n")
		default:
			fmt.Fprintf(&b, "## %s\n\n", m.Role)
		}
		if m.Reasoning != "" {
			b.WriteString("<details><summary>Thinking</summary>\n\n")
			b.WriteString(strings.TrimRight(m.Reasoning, "\n"))
			b.WriteString("\n\n</details>\n\n")
		}
		if m.Content != "" {
			b.WriteString(strings.TrimRight(m.Content, "\n"))
			b.WriteString("\n\n")
		}
		if m.State == StateInterrupted {
			b.WriteString("_(interrupted)_\n\n")
		}
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

// exportJSON is the JSON export's shape.
type exportJSON struct {
	Title        string          `json:"title"`
	SystemPrompt string          `json:"system_prompt,omitempty"`
	Sampling     json.RawMessage `json:"sampling,omitempty"`
	Model        string          `json:"model,omitempty"`
	Created      time.Time       `json:"created"`
	Updated      time.Time       `json:"updated"`
	Messages     []exportMessage `json:"messages"`
}

type exportMessage struct {
	Role         string    `json:"role"`
	Content      string    `json:"content"`
	Reasoning    string    `json:"reasoning_content,omitempty"`
	Model        string    `json:"model,omitempty"`
	PromptTokens int       `json:"prompt_tokens,omitempty"`
	GenTokens    int       `json:"completion_tokens,omitempty"`
	TTFTMillis   int64     `json:"ttft_ms,omitempty"`
	GenMillis    int64     `json:"gen_ms,omitempty"`
	State        State     `json:"state"`
	Created      time.Time `json:"created"`
}

// WriteJSON writes a conversation as an indented JSON object whose messages read
// like OpenAI chat messages (role, content, reasoning_content) plus their metadata.
func WriteJSON(w io.Writer, c Conversation, msgs []Message) error {
	out := exportJSON{
		Title: c.Title, SystemPrompt: c.SystemPrompt, Sampling: c.Sampling, Model: c.Model,
		Created: c.Created.UTC(), Updated: c.Updated.UTC(), Messages: []exportMessage{},
	}
	for _, m := range msgs {
		out.Messages = append(out.Messages, exportMessage{
			Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, Model: m.Model,
			PromptTokens: m.PromptTokens, GenTokens: m.GenTokens,
			TTFTMillis: m.TTFT.Milliseconds(), GenMillis: m.GenTime.Milliseconds(),
			State: m.State, Created: m.Created.UTC(),
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
