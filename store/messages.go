package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// State is where a message stands.
type State string

const (
	StateComplete    State = "complete"    // finished (every user message; a reply that ended)
	StateStreaming   State = "streaming"   // a reply being generated now
	StateInterrupted State = "interrupted" // a reply cut short: stopped, failed, or the app died
)

// Roles of Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	ID             int64
	ConversationID int64
	Role           string // RoleUser, RoleAssistant or RoleSystem
	Content        string
	Reasoning      string // the model's thinking, without <think> tags
	PromptTokens   int    // tokens of the rendered prompt the reply answered
	GenTokens      int    // tokens generated
	Model          string
	TTFT           time.Duration // from the request to the first token (ms precision)
	GenTime        time.Duration // from the first token to the last (ms precision)
	State          State
	Created        time.Time
}

const msgColumns = `id, conversation_id, role, content, reasoning, prompt_tokens, gen_tokens, model, ttft_ms, gen_ms, state, created_ms`

func scanMessage(sc interface{ Scan(...any) error }) (Message, error) {
	var m Message
	var ttft, gen, created int64
	if err := sc.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.Reasoning, &m.PromptTokens,
		&m.GenTokens, &m.Model, &ttft, &gen, &m.State, &created); err != nil {
		return Message{}, err
	}
	m.TTFT, m.GenTime = time.Duration(ttft)*time.Millisecond, time.Duration(gen)*time.Millisecond
	m.Created = fromMillis(created)
	return m, nil
}

// AppendMessage adds m to the end of conversation m.ConversationID and returns it
// with its ID and creation time. An empty State means StateComplete; a reply
// about to stream is appended with StateStreaming, then saved with UpdatePartial
// and ended with FinishMessage. The call returns once m is committed to disk.
func (s *Store) AppendMessage(ctx context.Context, m Message) (Message, error) {
	op := fmt.Sprintf("append message to conversation %d", m.ConversationID)
	if m.State == "" {
		m.State = StateComplete
	}
	now := time.Now()
	err := s.tx(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE conversations SET updated_ms = ? WHERE id = ?`, millis(now), m.ConversationID)
		if err != nil {
			return err
		}
		if err := mustAffect(res, "conversation"); err != nil {
			return err
		}
		res, err = tx.ExecContext(ctx, `INSERT INTO messages (conversation_id, role, content, reasoning, prompt_tokens,
			gen_tokens, model, ttft_ms, gen_ms, state, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ConversationID, m.Role, m.Content, m.Reasoning, m.PromptTokens, m.GenTokens, m.Model,
			m.TTFT.Milliseconds(), m.GenTime.Milliseconds(), m.State, millis(now))
		if err != nil {
			return err
		}
		m.ID, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return Message{}, err
	}
	m.Created = fromMillis(millis(now))
	return m, nil
}

// UpdatePartial saves the text a streaming reply has so far (the whole of it, not
// the newest piece, so a repeated call does no harm). It returns once the text is
// committed to disk.
func (s *Store) UpdatePartial(ctx context.Context, id int64, content, reasoning string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE messages SET content = ?, reasoning = ? WHERE id = ?`, content, reasoning, id)
	if err == nil {
		err = mustAffect(res, "message")
	}
	return wrapErr(fmt.Sprintf("save partial reply %d", id), err)
}

// FinishMessage saves the final text, token counts and timings of reply m.ID and
// sets its state: StateComplete, or StateInterrupted for a reply that was stopped
// or failed. The conversation counts as updated.
func (s *Store) FinishMessage(ctx context.Context, m Message) error {
	op := fmt.Sprintf("finish reply %d", m.ID)
	if m.State != StateComplete && m.State != StateInterrupted {
		return fmt.Errorf("store: %s: state %q is not an end state", op, m.State)
	}
	return s.tx(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE messages SET content = ?, reasoning = ?, prompt_tokens = ?, gen_tokens = ?,
			model = ?, ttft_ms = ?, gen_ms = ?, state = ? WHERE id = ?`,
			m.Content, m.Reasoning, m.PromptTokens, m.GenTokens, m.Model, m.TTFT.Milliseconds(),
			m.GenTime.Milliseconds(), m.State, m.ID)
		if err != nil {
			return err
		}
		if err := mustAffect(res, "message"); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE conversations SET updated_ms = ?
			WHERE id = (SELECT conversation_id FROM messages WHERE id = ?)`, millis(time.Now()), m.ID)
		return err
	})
}

// Messages returns the messages of conversation id in order.
func (s *Store) Messages(ctx context.Context, conversationID int64) ([]Message, error) {
	op := fmt.Sprintf("messages of conversation %d", conversationID)
	rows, err := s.db.QueryContext(ctx, `SELECT `+msgColumns+` FROM messages WHERE conversation_id = ? ORDER BY id`, conversationID)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, wrapErr(op, err)
		}
		out = append(out, m)
	}
	return out, wrapErr(op, rows.Err())
}

// Message returns message id.
func (s *Store) Message(ctx context.Context, id int64) (Message, error) {
	m, err := scanMessage(s.db.QueryRowContext(ctx, `SELECT `+msgColumns+` FROM messages WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Message{}, wrapErr(fmt.Sprintf("message %d", id), err)
	}
	return m, nil
}

// TruncateFrom deletes message id and every later message of its conversation,
// for regenerating a reply or editing a question.
func (s *Store) TruncateFrom(ctx context.Context, id int64) error {
	return s.tx(ctx, fmt.Sprintf("delete messages from %d", id), func(tx *sql.Tx) error {
		var conv int64
		err := tx.QueryRowContext(ctx, `SELECT conversation_id FROM messages WHERE id = ?`, id).Scan(&conv)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("message: %w", ErrNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE conversation_id = ? AND id >= ?`, conv, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE conversations SET updated_ms = ? WHERE id = ?`, millis(time.Now()), conv)
		return err
	})
}
