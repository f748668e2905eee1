//go:build !nogui

package ui

import (
	"context"
	"fmt"
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
	hist      History                     // nil: nothing is saved, and there is no sidebar
	do        func(func())                // runs a func on the Fyne goroutine: fyne.Do (tests: their own loop)
	now       func() time.Time            // the clock, for the Thinking time
	copyText  func(string)                // puts text on the clipboard
	saveEvery time.Duration               // how often a streaming reply is saved
	closed    atomic.Bool                 // the window is gone: drop updates (any goroutine)
	streaming sync.WaitGroup              // reply goroutines still running (any goroutine)
	win       fyne.Window                 // for dialogs; nil until newWindow
	chat      ChatInfo                    // the conversation shown; ID 0 until its first message is saved
	history   []Message                   // the conversation the model sees; ends with a user message while cur != nil
	refs      []rowRef                    // the transcript row of each message in history
	cur       *turn                       // the reply streaming now; nil when idle
	lastReply *assistantMessage           // the newest reply in history, which can be regenerated
	rows      *fyne.Container             // VBox of transcript rows
	scroll    *container.Scroll           // around rows
	follow    bool                        // keep the transcript scrolled to its end as text arrives
	autoScrl  bool                        // scrollToEnd is scrolling, not the reader
	hint      *fyne.Container             // shown while the transcript is empty
	hintText  *widget.RichText            // in hint; names the model
	model     *widget.Label               // left of the status bar: the model and backend
	modelBtn  *widget.Button              // picks the model, when svc is a ModelSwitcher; nil otherwise
	loading   *widget.ProgressBarInfinite // shown while a model loads
	loadingID *string                     // the model being loaded; nil when none
	entry     *promptEntry                // the message being written
	sendBtn   *widget.Button              // enabled when idle
	stopBtn   *widget.Button              // enabled while a reply streams
	newBtn    *widget.Button              // always enabled
	appBtn    *widget.Button              // the app's settings, when svc is an AppSettingsService; nil otherwise
	sysBtn    *widget.Button              // edits the chat's settings: system prompt, sampling
	menuBtn   *widget.Button              // rename, export, delete; nil without History
	title     *widget.Label               // the conversation's title; nil without History
	side      *sidebar                    // nil without History
	stats     *widget.Label               // right of the status bar
	root      fyne.CanvasObject           // the whole window content
}

// saveEvery is how often a streaming reply is saved: a crash loses at most this
// much of it.
const saveEvery = 500 * time.Millisecond

// newChatView makes the window content for svc; hist may be nil.
func newChatView(svc ChatService, hist History, do func(func()), copyText func(string)) *chatView {
	v := &chatView{svc: svc, hist: hist, do: do, now: time.Now, copyText: copyText, saveEvery: saveEvery}

	v.rows = container.New(layout.NewCustomPaddedVBoxLayout(rowGap))
	column := container.New(&columnLayout{maxWidth: columnMaxWidth},
		container.NewPadded(v.rows))
	v.scroll = container.NewVScroll(column)
	v.scroll.OnScrolled = func(fyne.Position) {
		if !v.autoScrl { // the reader scrolled: follow again once back at the end
			v.follow = v.atEnd()
		}
	}
	v.hintText = dimText("")
	v.hintText.Segments[0].(*widget.TextSegment).Style.Alignment = fyne.TextAlignCenter
	v.hintText.Wrapping = fyne.TextWrapOff
	v.hint = container.NewCenter(v.hintText)

	v.entry = newPromptEntry(v.send)
	v.sendBtn = widget.NewButtonWithIcon("Send", theme.MailSendIcon(), v.send)
	v.sendBtn.Importance = widget.HighImportance
	v.stopBtn = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), v.stop)
	v.stopBtn.Disable()
	v.newBtn = widget.NewButtonWithIcon("New chat", theme.ContentAddIcon(), v.newChat)
	v.newBtn.Importance = widget.LowImportance
	v.sysBtn = widget.NewButtonWithIcon(settingsLabel, theme.SettingsIcon(), v.showSettingsDialog)
	v.sysBtn.Importance = widget.LowImportance

	v.model = widget.NewLabel("")
	v.model.SizeName = theme.SizeNameCaptionText
	v.model.Truncation = fyne.TextTruncateEllipsis
	var model fyne.CanvasObject = v.model
	if sw, ok := svc.(ModelSwitcher); ok {
		model = v.newModelPicker(sw)
	}
	v.refreshModel()
	v.stats = widget.NewLabel("")
	v.stats.SizeName = theme.SizeNameCaptionText
	v.stats.Alignment = fyne.TextAlignTrailing

	var bar fyne.CanvasObject = container.NewHBox(v.newBtn, layout.NewSpacer(), v.sysBtn)
	if hist != nil {
		v.title = widget.NewLabelWithStyle(newChatTitle, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		v.title.Truncation = fyne.TextTruncateEllipsis
		v.menuBtn = widget.NewButtonWithIcon("", theme.MoreVerticalIcon(), v.showChatMenu)
		v.menuBtn.Importance = widget.LowImportance
		bar = container.NewBorder(nil, nil, nil, container.NewHBox(v.sysBtn, v.menuBtn), v.title)
	}
	top := container.NewVBox(bar, widget.NewSeparator())
	buttons := container.NewVBox(v.sendBtn, v.stopBtn)
	input := container.New(&columnLayout{maxWidth: columnMaxWidth},
		container.NewPadded(container.NewBorder(nil, nil, nil, buttons, v.entry)))
	status := container.NewBorder(nil, nil, nil, v.stats, model)
	bottom := container.NewVBox(widget.NewSeparator(), input, widget.NewSeparator(), status)
	chatArea := container.NewBorder(top, bottom, nil, nil, container.NewStack(v.scroll, v.hint))
	v.root = chatArea
	if hist != nil {
		v.side = newSidebar(v)
		split := container.NewHSplit(v.side.root, chatArea)
		split.Offset = sidebarFraction
		v.root = split
		v.reloadChats()
	}
	v.updateChatControls()
	return v
}

// send starts a reply to the entry's text; it does nothing while a reply
// streams or when the text is blank. With a History, the question is saved
// (and a new conversation created) before generation starts; if that fails,
// nothing is sent and the text stays in the entry.
func (v *chatView) send() {
	text := strings.TrimSpace(v.entry.Text)
	if v.cur != nil || v.loadingID != nil || text == "" {
		return
	}
	msg := Message{Role: RoleUser, Content: text}
	var replyID int64
	if v.hist != nil {
		var err error
		if msg.ID, replyID, err = v.saveQuestion(text); err != nil {
			v.addRow(newNoteRow(theme.ErrorIcon(), "Not sent: "+err.Error(), widget.DangerImportance))
			v.scrollToEnd()
			return
		}
	}
	v.entry.SetText("")
	user := v.newUserRow(text)
	v.appendMessage(msg, rowRef{row: user})
	v.addRow(user)
	v.startTurn(user, text, replyID)
}

// startTurn streams a reply to history, which ends with the user's message
// shown in row user; replyID is the saved reply's ID (0 without History).
func (v *chatView) startTurn(user fyne.CanvasObject, prompt string, replyID int64) {
	t := &turn{msg: newAssistantMessage(v.copyText), user: user, prompt: prompt, replyID: replyID}
	t.msg.regenBtn.OnTapped = v.regenerate
	var ctx context.Context
	ctx, t.cancel = context.WithCancel(context.Background())
	v.cur = t
	v.setLastReply(nil) // no regenerating while a reply streams
	v.addRow(t.msg.row)
	v.setBusy(true)
	v.stats.SetText("Generating…")
	v.follow = true
	v.scrollToEnd()
	v.focusEntry() // after a click on Send, typing goes on in the entry

	saver := &replySaver{hist: v.hist, id: replyID, every: v.saveEvery}
	v.streaming.Add(1)
	go v.stream(ctx, t, ChatRequest{History: v.modelHistory(), Sampling: v.chat.Sampling}, saver)
}

// modelHistory is what the model sees: the system prompt, then the conversation.
func (v *chatView) modelHistory() []Message {
	h := make([]Message, 0, len(v.history)+1)
	if p := strings.TrimSpace(v.chat.SystemPrompt); p != "" {
		h = append(h, Message{Role: RoleSystem, Content: p})
	}
	return append(h, v.history...)
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
// what is being written. A new conversation is saved with its first message.
func (v *chatView) newChat() {
	v.clearChat()
	v.chat = ChatInfo{}
	v.updateChatControls()
	if v.side != nil {
		v.side.list.UnselectAll()
	}
	v.focusEntry()
}

// clearChat cancels any reply and empties the transcript.
func (v *chatView) clearChat() {
	if t := v.cur; t != nil {
		t.stale = true
		t.cancel()
		v.cur = nil
	}
	v.history, v.refs = nil, nil
	v.lastReply = nil
	v.rows.RemoveAll()
	v.updateHint()
	v.setBusy(false)
	v.stats.SetText("")
	v.follow = true
	v.scroll.ScrollToTop()
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

// setBusy enables the buttons for a reply streaming (busy) or not. While a
// model loads, nothing can be sent.
func (v *chatView) setBusy(busy bool) {
	enable := func(b *widget.Button, on bool) {
		if b == nil {
			return
		}
		if on {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	enable(v.sendBtn, !busy && v.loadingID == nil)
	enable(v.stopBtn, busy)
	enable(v.modelBtn, !busy && v.loadingID == nil)
	enable(v.appBtn, !busy && v.loadingID == nil)
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
	if parts := strings.Split(name, "+"); len(parts) > 1 { // a model split over backends
		for i, p := range parts {
			parts[i] = backendLabel(p)
		}
		return strings.Join(parts, " + ")
	}
	switch strings.ToLower(name) {
	case "cpu", "cuda", "rocm":
		return strings.ToUpper(name)
	case "metal":
		return "Metal"
	case "vulkan":
		return "Vulkan"
	case "remote":
		return "Remote"
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
	s := fmt.Sprintf("%.1f tok/s  ·  first token %s  ·  %d tokens", st.TokensPerSec, formatDuration(st.TTFT), st.GenTokens)
	if st.ContextSize > 0 {
		s += fmt.Sprintf("  ·  context %d/%d", st.PromptTokens+st.GenTokens, st.ContextSize)
	}
	if st.CachedTokens > 0 {
		s += fmt.Sprintf(" (%d cached)", st.CachedTokens)
	}
	return s
}

// formatDuration: "85 ms" under a second, "1.25 s" above.
func formatDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}
