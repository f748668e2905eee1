package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Conversation is one chat: its title and the settings its replies use.
type Conversation struct {
	ID           int64
	Title        string
	SystemPrompt string
	// Sampling is the chat's own sampling settings as a JSON object (the app
	// decides its fields); empty means the defaults.
	Sampling json.RawMessage
	Model    string // the model last used, by name
	Created  time.Time
	Updated  time.Time // the last change to the conversation or its messages
}

const convColumns = `id, title, system_prompt, sampling, model, created_ms, updated_ms`

func scanConversation(sc interface{ Scan(...any) error }) (Conversation, error) {
	var c Conversation
	var sampling string
	var created, updated int64
	if err := sc.Scan(&c.ID, &c.Title, &c.SystemPrompt, &sampling, &c.Model, &created, &updated); err != nil {
		return Conversation{}, err
	}
	if sampling != "{}" {
		c.Sampling = json.RawMessage(sampling)
	}
	c.Created, c.Updated = fromMillis(created), fromMillis(updated)
	return c, nil
}

func samplingText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "{}", nil
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("sampling settings must be a JSON object: %w", err)
	}
	return string(raw), nil
}

// CreateConversation saves a new conversation from c (its ID and times are set
// here) and returns it as saved.
func (s *Store) CreateConversation(ctx context.Context, c Conversation) (Conversation, error) {
	sampling, err := samplingText(c.Sampling)
	if err != nil {
		return Conversation{}, fmt.Errorf("store: create conversation: %w", err)
	}
	now := time.Now()
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO conversations (title, system_prompt, sampling, model, created_ms, updated_ms) VALUES (?, ?, ?, ?, ?, ?)`,
		c.Title, c.SystemPrompt, sampling, c.Model, millis(now), millis(now))
	if err != nil {
		return Conversation{}, wrapErr("create conversation", err)
	}
	if c.ID, err = res.LastInsertId(); err != nil {
		return Conversation{}, wrapErr("create conversation", err)
	}
	c.Created, c.Updated = fromMillis(millis(now)), fromMillis(millis(now))
	if sampling == "{}" {
		c.Sampling = nil
	}
	return c, nil
}

// Conversation returns the conversation id.
func (s *Store) Conversation(ctx context.Context, id int64) (Conversation, error) {
	c, err := scanConversation(s.db.QueryRowContext(ctx, `SELECT `+convColumns+` FROM conversations WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Conversation{}, wrapErr(fmt.Sprintf("conversation %d", id), err)
	}
	return c, nil
}

// UpdateConversation saves c's title, system prompt, sampling settings and model.
func (s *Store) UpdateConversation(ctx context.Context, c Conversation) error {
	op := fmt.Sprintf("update conversation %d", c.ID)
	sampling, err := samplingText(c.Sampling)
	if err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	res, err := s.db.ExecContext(ctx,
		`UPDATE conversations SET title = ?, system_prompt = ?, sampling = ?, model = ?, updated_ms = ? WHERE id = ?`,
		c.Title, c.SystemPrompt, sampling, c.Model, millis(time.Now()), c.ID)
	if err == nil {
		err = mustAffect(res, "conversation")
	}
	return wrapErr(op, err)
}

// RenameConversation sets the title of conversation id.
func (s *Store) RenameConversation(ctx context.Context, id int64, title string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE conversations SET title = ?, updated_ms = ? WHERE id = ?`,
		title, millis(time.Now()), id)
	if err == nil {
		err = mustAffect(res, "conversation")
	}
	return wrapErr(fmt.Sprintf("rename conversation %d", id), err)
}

// SetSystemPrompt sets the system prompt of conversation id.
func (s *Store) SetSystemPrompt(ctx context.Context, id int64, prompt string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE conversations SET system_prompt = ?, updated_ms = ? WHERE id = ?`,
		prompt, millis(time.Now()), id)
	if err == nil {
		err = mustAffect(res, "conversation")
	}
	return wrapErr(fmt.Sprintf("set system prompt of conversation %d", id), err)
}

// SetSettings sets the system prompt and sampling settings (a JSON object; empty
// for the defaults) of conversation id.
func (s *Store) SetSettings(ctx context.Context, id int64, prompt string, sampling json.RawMessage) error {
	op := fmt.Sprintf("save settings of conversation %d", id)
	text, err := samplingText(sampling)
	if err != nil {
		return fmt.Errorf("store: %s: %w", op, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE conversations SET system_prompt = ?, sampling = ?, updated_ms = ? WHERE id = ?`,
		prompt, text, millis(time.Now()), id)
	if err == nil {
		err = mustAffect(res, "conversation")
	}
	return wrapErr(op, err)
}

// DeleteConversation deletes conversation id and its messages.
func (s *Store) DeleteConversation(ctx context.Context, id int64) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM conversations WHERE id = ?`, id)
	if err == nil {
		err = mustAffect(res, "conversation")
	}
	return wrapErr(fmt.Sprintf("delete conversation %d", id), err)
}

// ListConversations returns every conversation, the most recently updated first.
func (s *Store) ListConversations(ctx context.Context) ([]Conversation, error) {
	return s.queryConversations(ctx, "list conversations",
		`SELECT `+convColumns+` FROM conversations ORDER BY updated_ms DESC, id DESC`)
}

// SearchConversations returns the conversations whose title contains query, or
// whose messages contain all of query's words (as word prefixes, in any case),
// the most recently updated first. A blank query lists them all.
func (s *Store) SearchConversations(ctx context.Context, query string) ([]Conversation, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return s.ListConversations(ctx)
	}
	like := "%" + escapeLike(query) + "%"
	if match := ftsQuery(query); match != "" {
		return s.queryConversations(ctx, "search conversations",
			`SELECT `+convColumns+` FROM conversations WHERE title LIKE ? ESCAPE '\'
			 OR id IN (SELECT m.conversation_id FROM messages_fts f JOIN messages m ON m.id = f.docid WHERE messages_fts MATCH ?)
			 ORDER BY updated_ms DESC, id DESC`, like, match)
	}
	// No words (only punctuation): a plain substring search.
	return s.queryConversations(ctx, "search conversations",
		`SELECT `+convColumns+` FROM conversations WHERE title LIKE ? ESCAPE '\'
		 OR id IN (SELECT conversation_id FROM messages WHERE content LIKE ? ESCAPE '\' OR reasoning LIKE ? ESCAPE '\')
		 ORDER BY updated_ms DESC, id DESC`, like, like, like)
}

func (s *Store) queryConversations(ctx context.Context, op, q string, args ...any) ([]Conversation, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	defer rows.Close()
	var out []Conversation
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, wrapErr(op, err)
		}
		out = append(out, c)
	}
	return out, wrapErr(op, rows.Err())
}

// escapeLike escapes LIKE's wildcards with a backslash.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ftsQuery turns what a user typed into an FTS4 MATCH expression: each run of
// letters and digits becomes a quoted prefix term, so no input is a syntax error.
func ftsQuery(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	terms := make([]string, 0, len(words))
	for _, w := range words {
		terms = append(terms, `"`+w+`*"`)
	}
	return strings.Join(terms, " ")
}
