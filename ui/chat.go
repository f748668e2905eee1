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
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// chatView is the chat window's content and its conversation state.
//
// Threads: every field not marked otherwise belongs to the Fyne goroutine.
// A reply streams on its own goroutine (stream), which never touches a widget:
// it gathers deltas in its turn and posts flush and finish through do.
type chatView struct {
	svc       ChatService
	do        func(func())      // runs a func on the Fyne goroutine: fyne.Do (tests: their own loop)
	now       func() time.Time  // the clock, for the Thinking time
	copyText  func(string)      // puts text on the clipboard
	closed    atomic.Bool       // the window is gone: drop updates (any goroutine)
	streaming sync.WaitGroup    // reply goroutines still running (any goroutine)
	history   []Message         // the conversation the model sees; ends with a user message while cur != nil
	cur       *turn             // the reply streaming now; nil when idle
	rows      *fyne.Container   // VBox of transcript rows
	scroll    *container.Scroll // around rows
	follow    bool              // keep the transcript scrolled to its end as text arrives
	autoScrl  bool              // scrollToEnd is scrolling, not the reader
	hint      *fyne.Container   // shown while the transcript is empty
	entry     *promptEntry      // the message being written
	sendBtn   *widget.Button    // enabled when idle
	stopBtn   *widget.Button    // enabled while a reply streams
	newBtn    *widget.Button    // always enabled
	stats     *widget.Label     // right of the status bar
	root      fyne.CanvasObject // the whole window content
}

// turn is one request to ChatService.Chat and the reply it streams.
type turn struct {
	cancel context.CancelFunc
	msg    *assistantMessage // Fyne goroutine
	user   fyne.CanvasObject // the user's row; Fyne goroutine
	prompt string            // the user's text, given back if nothing came
	stop   bool              // Stop was pressed; Fyne goroutine
	stale  bool              // New chat dropped this turn; Fyne goroutine

	mu        sync.Mutex
	pending   Delta // arrived but not yet shown; guarded by mu
	scheduled bool  // a flush is posted; guarded by mu
	returned  bool  // Chat returned, later deltas are dropped; guarded by mu
}

func newChatView(svc ChatService, do func(func()), copyText func(string)) *chatView {
	v := &chatView{svc: svc, do: do, now: time.Now, copyText: copyText}

	v.rows = container.New(layout.NewCustomPaddedVBoxLayout(rowGap))
	column := container.New(&columnLayout{maxWidth: columnMaxWidth},
		container.NewPadded(v.rows))
	v.scroll = container.NewVScroll(column)
	v.scroll.OnScrolled = func(fyne.Position) {
		if !v.autoScrl { // the reader scrolled: follow again once back at the end
			v.follow = v.atEnd()
		}
	}
	hint := dimText(fmt.Sprintf("Ask %s anything.\nEnter sends, Shift+Enter starts a new line.", svc.ModelName()))
	hint.Segments[0].(*widget.TextSegment).Style.Alignment = fyne.TextAlignCenter
	hint.Wrapping = fyne.TextWrapOff
	v.hint = container.NewCenter(hint)

	v.entry = newPromptEntry(v.send)
	v.entry.SetPlaceHolder("Message " + svc.ModelName())
	v.sendBtn = widget.NewButtonWithIcon("Send", theme.MailSendIcon(), v.send)
	v.sendBtn.Importance = widget.HighImportance
	v.stopBtn = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), v.stop)
	v.stopBtn.Disable()
	v.newBtn = widget.NewButtonWithIcon("New chat", theme.ContentAddIcon(), v.newChat)
	v.newBtn.Importance = widget.LowImportance

	model := widget.NewLabel(svc.ModelName() + "  ·  " + backendLabel(svc.BackendName()))
	model.SizeName = theme.SizeNameCaptionText
	model.Truncation = fyne.TextTruncateEllipsis
	v.stats = widget.NewLabel("")
	v.stats.SizeName = theme.SizeNameCaptionText
	v.stats.Alignment = fyne.TextAlignTrailing

	top := container.NewVBox(container.NewHBox(v.newBtn, layout.NewSpacer()), widget.NewSeparator())
	buttons := container.NewVBox(v.sendBtn, v.stopBtn)
	input := container.New(&columnLayout{maxWidth: columnMaxWidth},
		container.NewPadded(container.NewBorder(nil, nil, nil, buttons, v.entry)))
	status := container.NewBorder(nil, nil, nil, v.stats, model)
	bottom := container.NewVBox(widget.NewSeparator(), input, widget.NewSeparator(), status)
	v.root = container.NewBorder(top, bottom, nil, nil, container.NewStack(v.scroll, v.hint))
	return v
}

// send starts a reply to the entry's text; it does nothing while a reply
// streams or when the text is blank.
func (v *chatView) send() {
	text := strings.TrimSpace(v.entry.Text)
	if v.cur != nil || text == "" {
		return
	}
	v.entry.SetText("")
	v.history = append(v.history, Message{Role: RoleUser, Content: text})
	t := &turn{msg: newAssistantMessage(v.copyText), user: newUserRow(text), prompt: text}
	var ctx context.Context
	ctx, t.cancel = context.WithCancel(context.Background())
	v.cur = t
	v.addRow(t.user)
	v.addRow(t.msg.row)
	v.setBusy(true)
	v.stats.SetText("Generating…")
	v.follow = true
	v.scrollToEnd()
	v.focusEntry() // after a click on Send, typing goes on in the entry

	v.streaming.Add(1)
	go v.stream(ctx, t, slices.Clone(v.history))
}

// stream runs on its own goroutine: it calls the service and posts the end.
func (v *chatView) stream(ctx context.Context, t *turn, history []Message) {
	defer v.streaming.Done()
	st, err := callChat(ctx, v.svc, history, func(d Delta) { v.push(t, d) })
	t.mu.Lock()
	t.returned = true
	t.mu.Unlock()
	v.post(func() { v.finish(t, st, err) })
}

// callChat turns a panic in the service into an error: a broken backend must
// not take the window with it.
func callChat(ctx context.Context, svc ChatService, history []Message, onDelta func(Delta)) (st Stats, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Printf("ui: chat service panicked: %v\n%s", r, debug.Stack())
			err = fmt.Errorf("chat service panicked: %v", r)
		}
	}()
	return svc.Chat(ctx, history, onDelta)
}

// push is onDelta: it runs on the service's goroutine. Deltas pile up in the
// turn and one flush at a time is posted, so a fast model costs one UI update
// per frame, not one per token.
func (v *chatView) push(t *turn, d Delta) {
	t.mu.Lock()
	if t.returned {
		t.mu.Unlock()
		return
	}
	t.pending.Content += d.Content
	t.pending.Reasoning += d.Reasoning
	post := !t.scheduled
	t.scheduled = true
	t.mu.Unlock()
	if post {
		v.post(func() { v.flush(t) })
	}
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

// finish ends a turn after Chat returned.
func (v *chatView) finish(t *turn, st Stats, err error) {
	v.flush(t)
	t.cancel()
	if t.stale {
		return
	}
	v.cur = nil
	stopped := t.stop || (err != nil && errors.Is(err, context.Canceled))
	failed := err != nil && !stopped
	t.msg.done(stopped, v.now())

	if t.msg.content.Len() > 0 {
		v.history = append(v.history, t.msg.message())
	} else {
		// No answer: take the question out of the history, so roles keep
		// alternating, and give it back to the entry to retry or edit.
		v.history = v.history[:len(v.history)-1]
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
	v.updateHint()
	v.setBusy(false)
	v.stats.SetText(formatStats(st, failed))
	if v.follow || failed {
		v.scrollToEnd()
	}
}

// stop cancels the streaming reply; finish tidies up when Chat returns.
func (v *chatView) stop() {
	if v.cur == nil || v.cur.stop {
		return
	}
	v.cur.stop = true
	v.cur.cancel()
	v.stopBtn.Disable()
	v.stats.SetText("Stopping…")
}

// newChat cancels any reply and empties the conversation. The entry keeps
// what is being written.
func (v *chatView) newChat() {
	if t := v.cur; t != nil {
		t.stale = true
		t.cancel()
		v.cur = nil
	}
	v.history = nil
	v.rows.RemoveAll()
	v.updateHint()
	v.setBusy(false)
	v.stats.SetText("")
	v.follow = true
	v.scroll.ScrollToTop()
	v.focusEntry()
}

// close is the window's OnClosed: cancel the reply, drop later updates.
func (v *chatView) close() {
	v.closed.Store(true)
	if v.cur != nil {
		v.cur.cancel()
	}
}

// wait waits up to d for reply goroutines to return; false if one did not.
func (v *chatView) wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() { v.streaming.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

func (v *chatView) addRow(row fyne.CanvasObject) {
	v.rows.Add(row)
	v.updateHint()
}

func (v *chatView) updateHint() {
	v.hint.Hidden = len(v.rows.Objects) > 0
	v.hint.Refresh()
}

func (v *chatView) setBusy(busy bool) {
	if busy {
		v.sendBtn.Disable()
		v.stopBtn.Enable()
	} else {
		v.sendBtn.Enable()
		v.stopBtn.Disable()
	}
}

func (v *chatView) focusEntry() {
	if c := fyne.CurrentApp().Driver().CanvasForObject(v.entry); c != nil {
		c.Focus(v.entry)
	}
}

// scrollToEnd shows the end of the transcript.
func (v *chatView) scrollToEnd() {
	// Lay the rows out first: a new row learns its width, so its wrapped text
	// reports its true height and the end is where it will be drawn.
	v.rows.Layout.Layout(v.rows.Objects, v.rows.Size())
	// Grow the content now, not at the next frame, or there is no room to scroll.
	c := v.scroll.Content
	c.Resize(c.MinSize().Max(v.scroll.Size()))
	v.autoScrl = true
	v.scroll.ScrollToBottom()
	v.autoScrl = false
}

// atEnd reports whether the transcript is scrolled to (near) its end, so
// new text should keep it there; a reader who scrolled up is left alone.
func (v *chatView) atEnd() bool {
	slack := theme.Size(theme.SizeNameText) * 3
	return v.scroll.Offset.Y >= v.scroll.Content.MinSize().Height-v.scroll.Size().Height-slack
}

// backendLabel is how a backend name reads in the status bar.
func backendLabel(name string) string {
	switch strings.ToLower(name) {
	case "cpu", "cuda", "rocm":
		return strings.ToUpper(name)
	case "metal":
		return "Metal"
	case "vulkan":
		return "Vulkan"
	case "":
		return "unknown backend"
	}
	return name
}

// formatStats is the right of the status bar after a reply.
func formatStats(st Stats, failed bool) string {
	if failed {
		return "Failed"
	}
	if st.GenTokens == 0 && st.TTFT == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f tok/s  ·  first token %s  ·  %d tokens", st.TokensPerSec, formatDuration(st.TTFT), st.GenTokens)
}

// formatDuration: "85 ms" under a second, "1.25 s" above.
func formatDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}
