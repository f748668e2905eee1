//go:build !nogui

package ui

import (
	"context"
	"errors"
	"fmt"
	"log"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// turn is one request to ChatService.Chat and the reply it streams.
type turn struct {
	cancel  context.CancelFunc
	msg     *assistantMessage // Fyne goroutine
	user    fyne.CanvasObject // the user's row; Fyne goroutine
	prompt  string            // the user's text, given back if nothing came
	replyID int64             // the saved reply; 0 without History
	stop    bool              // Stop was pressed; Fyne goroutine
	stale   bool              // New chat (or another chat) dropped this turn; Fyne goroutine

	mu        sync.Mutex
	pending   Delta // arrived but not yet shown; guarded by mu
	scheduled bool  // a flush is posted; guarded by mu
	returned  bool  // Chat returned, later deltas are dropped; guarded by mu
}

// stream runs on its own goroutine: it calls the service, saves the reply as it
// grows and when it ends, and posts the end.
func (v *chatView) stream(ctx context.Context, t *turn, req ChatRequest, saver *replySaver) {
	defer v.streaming.Done()
	st, err := callChat(ctx, v.svc, req, func(d Delta) {
		if v.push(t, d) {
			saver.add(d)
		}
	})
	t.mu.Lock()
	t.returned = true
	t.mu.Unlock()
	saveErr := saver.end(st, err != nil)
	v.post(func() { v.finish(t, st, err, saveErr) })
}

// callChat turns a panic in the service into an error: a broken backend must
// not take the window with it.
func callChat(ctx context.Context, svc ChatService, req ChatRequest, onDelta func(Delta)) (st Stats, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Printf("ui: chat service panicked: %v\n%s", r, debug.Stack())
			err = fmt.Errorf("chat service panicked: %v", r)
		}
	}()
	return svc.Chat(ctx, req, onDelta)
}

// push is onDelta: it runs on the service's goroutine. Deltas pile up in the
// turn and one flush at a time is posted, so a fast model costs one UI update
// per frame, not one per token. It reports false for a delta that came after
// Chat returned, which is dropped.
func (v *chatView) push(t *turn, d Delta) bool {
	t.mu.Lock()
	if t.returned {
		t.mu.Unlock()
		return false
	}
	t.pending.Content += d.Content
	t.pending.Reasoning += d.Reasoning
	post := !t.scheduled
	t.scheduled = true
	t.mu.Unlock()
	if post {
		v.post(func() { v.flush(t) })
	}
	return true
}

// post runs f on the Fyne goroutine unless the window is gone.
func (v *chatView) post(f func()) {
	if v.closed.Load() {
		return
	}
	v.do(func() {
		if !v.closed.Load() {
			f()
		}
	})
}

// flush shows what arrived since the last flush.
func (v *chatView) flush(t *turn) {
	t.mu.Lock()
	d := t.pending
	t.pending, t.scheduled = Delta{}, false
	t.mu.Unlock()
	if t.stale || (d.Content == "" && d.Reasoning == "") {
		return
	}
	t.msg.add(d, v.now())
	if v.follow {
		v.scrollToEnd()
	}
}

// finish ends a turn after Chat returned and the reply was saved (saveErr).
func (v *chatView) finish(t *turn, st Stats, err, saveErr error) {
	v.flush(t)
	t.cancel()
	if t.stale {
		if saveErr != nil {
			log.Printf("ui: saving a dropped reply: %v", saveErr)
		}
		return
	}
	v.cur = nil
	stopped := t.stop || (err != nil && errors.Is(err, context.Canceled))
	failed := err != nil && !stopped
	t.msg.done(stopped, v.now())

	if t.msg.content.Len() > 0 {
		m := t.msg.message()
		m.ID, m.Interrupted = t.replyID, err != nil
		v.appendMessage(m, rowRef{row: t.msg.row, reply: t.msg})
	} else {
		// No answer: take the question out of the history, so roles keep
		// alternating, and give it back to the entry to retry or edit.
		q := v.history[len(v.history)-1]
		v.truncate(len(v.history) - 1)
		setEditable(t.user, false) // the question is in the entry now
		if v.hist != nil && q.ID != 0 {
			saveErr = errors.Join(saveErr, v.hist.TruncateFrom(context.Background(), q.ID))
		}
		if strings.TrimSpace(v.entry.Text) == "" {
			v.entry.SetText(t.prompt)
			lines := strings.Split(t.prompt, "\n")
			v.entry.CursorRow, v.entry.CursorColumn = len(lines)-1, len([]rune(lines[len(lines)-1]))
			v.entry.Refresh()
		}
		if t.msg.empty() {
			v.rows.Remove(t.msg.row)
			if stopped {
				v.rows.Remove(t.user) // stopped before anything came: as if never sent
			}
		}
	}
	if failed {
		v.addRow(newNoteRow(theme.ErrorIcon(), "Error: "+err.Error(), widget.DangerImportance))
	}
	if saveErr != nil {
		v.addRow(newNoteRow(theme.WarningIcon(), "Not saved: "+saveErr.Error(), widget.WarningImportance))
	}
	v.updateHint()
	v.setBusy(false)
	v.stats.SetText(formatStats(st, failed))
	if v.follow || failed || saveErr != nil {
		v.scrollToEnd()
	}
	v.reloadChats() // the conversation moves to the top
}

// setLastReply makes m (nil: none) the reply that Regenerate redoes.
func (v *chatView) setLastReply(m *assistantMessage) {
	if v.lastReply != nil {
		v.lastReply.setRegenerable(false)
	}
	v.lastReply = m
	if m != nil {
		m.setRegenerable(true)
	}
}

// regenerate replaces the last reply with a new one to the same question.
func (v *chatView) regenerate() {
	n := len(v.history)
	if v.cur != nil || n < 2 || v.history[n-1].Role != RoleAssistant || v.history[n-2].Role != RoleUser {
		return
	}
	user := v.refs[n-2].row
	var replyID int64
	if v.hist != nil {
		ctx := context.Background()
		var err error
		if id := v.history[n-1].ID; id != 0 {
			err = v.hist.TruncateFrom(ctx, id)
		}
		if err == nil {
			replyID, err = v.hist.StartReply(ctx, v.chat.ID)
		}
		if err != nil {
			v.addRow(newNoteRow(theme.ErrorIcon(), "Cannot regenerate: "+err.Error(), widget.DangerImportance))
			v.scrollToEnd()
			return
		}
	}
	v.truncate(n - 1)
	v.removeRowsAfter(user)
	v.startTurn(user, v.history[n-2].Content, replyID)
}

// confirmEdit is the edit button: it asks first when editing would drop more
// than the reply to this question.
func (v *chatView) confirmEdit(row fyne.CanvasObject) {
	i := slices.IndexFunc(v.refs, func(r rowRef) bool { return r.row == row })
	if v.cur != nil || i < 0 {
		return
	}
	later := len(v.history) - i - 2 // messages after this question's reply
	if later <= 0 || v.win == nil {
		v.edit(row)
		return
	}
	dialog.ShowConfirm("Edit this message?",
		fmt.Sprintf("The conversation continues from it: the %d later messages will be deleted.", later),
		func(ok bool) {
			if ok {
				v.edit(row)
			}
		}, v.win)
}

// edit takes the question in transcript row row back into the entry, and
// drops it and everything after it from the conversation.
func (v *chatView) edit(row fyne.CanvasObject) {
	i := slices.IndexFunc(v.refs, func(r rowRef) bool { return r.row == row })
	if v.cur != nil || i < 0 {
		return
	}
	q := v.history[i]
	if v.hist != nil && q.ID != 0 {
		if err := v.hist.TruncateFrom(context.Background(), q.ID); err != nil {
			v.addRow(newNoteRow(theme.ErrorIcon(), "Cannot edit: "+err.Error(), widget.DangerImportance))
			v.scrollToEnd()
			return
		}
	}
	v.truncate(i)
	v.removeRowsAfter(row)
	v.rows.Remove(row)
	v.updateHint()
	v.entry.SetText(q.Content)
	v.focusEntry()
	v.stats.SetText("")
}

// setEditable shows or hides the edit button of a user row.
func setEditable(row fyne.CanvasObject, on bool) {
	if c, ok := row.(*fyne.Container); ok {
		if l, ok := c.Layout.(*rowLayout); ok && l.lead != nil {
			l.lead.(*widget.Button).Hidden = !on
			c.Refresh()
		}
	}
}

// rowRef is the transcript row of a message in history.
type rowRef struct {
	row   fyne.CanvasObject
	reply *assistantMessage // for an assistant message
}

// appendMessage adds m, shown in ref, to the history.
func (v *chatView) appendMessage(m Message, ref rowRef) {
	v.history = append(v.history, m)
	v.refs = append(v.refs, ref)
	v.setLastReply(ref.reply)
}

// truncate cuts the history to its first n messages; the rows stay.
func (v *chatView) truncate(n int) {
	v.history, v.refs = v.history[:n], v.refs[:n]
	var last *assistantMessage
	if n > 0 {
		last = v.refs[n-1].reply
	}
	v.setLastReply(last)
}

// removeRowsAfter removes every transcript row below row.
func (v *chatView) removeRowsAfter(row fyne.CanvasObject) {
	if i := slices.Index(v.rows.Objects, row); i >= 0 {
		v.rows.Objects = v.rows.Objects[:i+1]
		v.rows.Refresh()
	}
}

// replySaver saves a streaming reply through History: every saveEvery, and at
// the end. Its methods run on the streaming goroutine.
type replySaver struct {
	hist  History // nil: saves nothing
	id    int64
	every time.Duration

	mu                 sync.Mutex
	last               time.Time       // the last save; guarded by mu
	content, reasoning strings.Builder // the reply so far; guarded by mu
	err                error           // the first failed save; guarded by mu
}

func (s *replySaver) add(d Delta) {
	if s.hist == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.content.WriteString(d.Content)
	s.reasoning.WriteString(d.Reasoning)
	if s.err != nil {
		return
	}
	if now := time.Now(); now.Sub(s.last) >= s.every {
		s.last = now
		s.err = s.hist.SaveReply(context.Background(), s.id, s.message())
	}
}

func (s *replySaver) message() Message {
	return Message{Role: RoleAssistant, Content: s.content.String(), Reasoning: s.reasoning.String(), ID: s.id}
}

// end saves the finished reply, even an empty one: the conversation keeps
// alternating between question and reply. (When nothing came and the chat is
// still shown, finish then deletes the question and the reply, and gives the
// question back to the entry.) The context is not the turn's: a stopped reply
// is saved too.
func (s *replySaver) end(st Stats, stopped bool) error {
	if s.hist == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.message()
	m.Interrupted = stopped
	err := s.hist.FinishReply(context.Background(), s.id, m, st, stopped)
	if err != nil {
		return errors.Join(s.err, err) // the last save that worked stays
	}
	return nil // the final save holds everything
}
