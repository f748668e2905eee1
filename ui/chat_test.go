//go:build !nogui

package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

func TestStreamsReplyWithThinking(t *testing.T) {
	h := newHarness(t)
	if h.w.Title() != "Ember" {
		t.Errorf("title = %q", h.w.Title())
	}
	h.send("Hi there")
	if got := h.v.entry.Text; got != "" {
		t.Errorf("entry after send = %q, want empty", got)
	}
	if !h.v.sendBtn.Disabled() || h.v.stopBtn.Disabled() {
		t.Error("while streaming: want Send disabled and Stop enabled")
	}

	// Reasoning streams into an open, dimmed Thinking section.
	h.svc.cmds <- cmd{d: Delta{Reasoning: "The user greets me. "}}
	h.svc.cmds <- cmd{d: Delta{Reasoning: "Greet back."}}
	h.waitText("The user greets me. Greet back.")
	if got := h.transcript(); !strings.Contains(got, "[Thinking…]") {
		t.Errorf("Thinking header missing while thinking:\n%s", got)
	}

	// The answer streams in; the Thinking section folds away.
	h.svc.cmds <- cmd{d: Delta{Content: "Hello"}}
	h.waitText("Hello")
	h.svc.script(Stats{PromptTokens: 12, GenTokens: 9, TokensPerSec: 31.25, TTFT: 140 * time.Millisecond}, nil,
		Delta{Content: ", how can"}, Delta{Content: " I help?"})
	h.waitIdle()

	got := h.transcript()
	for _, want := range []string{"Hi there\n", "Hello, how can I help?\n", "[Thinking"} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Greet back.") {
		t.Errorf("reasoning still shown after the answer started:\n%s", got)
	}
	if strings.Contains(got, "[Stop") || strings.Contains(got, waitingText+"\n") {
		t.Errorf("unexpected transcript:\n%s", got)
	}

	// The user can unfold it again.
	test.Tap(h.last.thinking.header)
	if !strings.Contains(h.transcript(), "The user greets me. Greet back.") {
		t.Errorf("reasoning not shown after unfolding:\n%s", h.transcript())
	}

	if h.v.sendBtn.Disabled() || !h.v.stopBtn.Disabled() {
		t.Error("when idle: want Send enabled and Stop disabled")
	}
	if got, want := h.v.stats.Text, "31.2 tok/s  ·  first token 140 ms  ·  9 tokens"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	wantHist := []Message{
		{Role: RoleUser, Content: "Hi there"},
		{Role: RoleAssistant, Content: "Hello, how can I help?", Reasoning: "The user greets me. Greet back."},
	}
	if !slices.Equal(h.v.history, wantHist) {
		t.Errorf("history = %+v, want %+v", h.v.history, wantHist)
	}

	// The copy button copies the answer.
	test.Tap(h.last.copyBtn)
	if got := h.clip.Content(); got != "Hello, how can I help?" {
		t.Errorf("clipboard = %q", got)
	}

	// A second turn sends the whole conversation.
	h.send("Tell me a joke")
	h.svc.script(Stats{}, nil, Delta{Content: "No."})
	h.waitIdle()
	hists, _ := h.svc.calls()
	if len(hists) != 2 || !slices.Equal(hists[1], append(wantHist, Message{Role: RoleUser, Content: "Tell me a joke"})) {
		t.Errorf("second call history = %+v", hists)
	}
	if h.v.stats.Text != "" {
		t.Errorf("status without stats = %q, want empty", h.v.stats.Text)
	}
}

func TestKeys(t *testing.T) {
	h := newHarness(t)
	e := h.v.entry
	test.Type(e, "line one")
	e.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	e.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(e, "line two")
	if e.Text != "line one\nline two" {
		t.Fatalf("Shift+Enter: entry = %q, want a newline", e.Text)
	}
	if h.v.cur != nil {
		t.Fatal("Shift+Enter sent the message")
	}

	e.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierControl})
	if h.v.cur == nil || e.Text != "" {
		t.Fatalf("Ctrl+Enter did not send (entry %q)", e.Text)
	}
	// Enter while a reply streams does nothing.
	test.Type(e, "next")
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEnter})
	if e.Text != "next" {
		t.Errorf("Enter while busy: entry = %q, want it kept", e.Text)
	}
	h.svc.script(Stats{}, nil, Delta{Content: "ok"})
	h.waitIdle()
	hists, _ := h.svc.calls()
	if len(hists) != 1 || hists[0][0].Content != "line one\nline two" {
		t.Errorf("sent %+v", hists)
	}

	// Blank messages are not sent.
	e.SetText("  \n ")
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if h.v.cur != nil {
		t.Error("a blank message was sent")
	}
}

func TestStopCancels(t *testing.T) {
	h := newHarness(t)
	h.send("Write a long story")
	h.svc.cmds <- cmd{d: Delta{Content: "Once upon a time"}}
	h.waitText("Once upon a time")

	test.Tap(h.v.stopBtn)
	if !h.v.stopBtn.Disabled() {
		t.Error("Stop still enabled after stopping")
	}
	h.waitIdle()
	_, errs := h.svc.calls()
	if len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("service ctx errors = %v, want context.Canceled", errs)
	}
	got := h.transcript()
	if !strings.Contains(got, "Once upon a time") || !strings.Contains(got, stoppedText) {
		t.Errorf("transcript after Stop:\n%s", got)
	}
	if strings.Contains(got, "Error") {
		t.Errorf("Stop shown as an error:\n%s", got)
	}
	if len(h.v.history) != 2 || h.v.history[1].Content != "Once upon a time" {
		t.Errorf("history keeps the partial reply: %+v", h.v.history)
	}
	if h.v.sendBtn.Disabled() {
		t.Error("Send disabled after Stop")
	}
}

func TestStopBeforeAnyTokenUndoesSend(t *testing.T) {
	h := newHarness(t)
	h.send("Never mind")
	test.Tap(h.v.stopBtn)
	h.waitIdle()
	if got := h.transcript(); got != "" {
		t.Errorf("transcript = %q, want empty", got)
	}
	if len(h.v.history) != 0 {
		t.Errorf("history = %+v, want empty", h.v.history)
	}
	if h.v.entry.Text != "Never mind" {
		t.Errorf("entry = %q, want the prompt back", h.v.entry.Text)
	}
	if h.v.hint.Hidden {
		t.Error("empty-chat hint hidden")
	}
}

func TestNewChatClears(t *testing.T) {
	h := newHarness(t)
	h.send("First")
	h.svc.script(Stats{GenTokens: 3, TokensPerSec: 10}, nil, Delta{Content: "Reply one"})
	h.waitIdle()
	if !h.v.hint.Hidden {
		t.Error("hint shown over a conversation")
	}

	// New chat in the middle of a reply cancels it and forgets it.
	h.send("Second")
	h.svc.cmds <- cmd{d: Delta{Content: "Reply two"}}
	h.waitText("Reply two")
	h.v.entry.SetText("draft")
	test.Tap(h.v.newBtn)

	if len(h.v.rows.Objects) != 0 || h.transcript() != "" {
		t.Errorf("transcript after New chat:\n%s", h.transcript())
	}
	if len(h.v.history) != 0 || h.v.cur != nil {
		t.Errorf("state after New chat: history %+v, cur %v", h.v.history, h.v.cur)
	}
	if h.v.hint.Hidden || h.v.stats.Text != "" || h.v.sendBtn.Disabled() || !h.v.stopBtn.Disabled() {
		t.Error("controls not reset by New chat")
	}
	if h.v.entry.Text != "draft" {
		t.Errorf("New chat dropped the draft: %q", h.v.entry.Text)
	}
	// The cancelled reply's last updates arrive late and must not show.
	h.loop.until(t, "the cancelled call to return", func() bool { _, errs := h.svc.calls(); return len(errs) == 2 })
	h.v.wait(time.Second)
	h.drain()
	if h.transcript() != "" || len(h.v.history) != 0 {
		t.Errorf("late updates leaked into the new chat:\n%s", h.transcript())
	}

	// And the new chat works.
	h.v.entry.SetText("Third")
	test.Tap(h.v.sendBtn)
	h.svc.script(Stats{}, nil, Delta{Content: "Reply three"})
	h.waitIdle()
	hists, _ := h.svc.calls()
	if last := hists[len(hists)-1]; len(last) != 1 || last[0].Content != "Third" {
		t.Errorf("history after New chat = %+v", last)
	}
}

func TestErrorsShowInTranscript(t *testing.T) {
	for _, tc := range []struct {
		name    string
		c       cmd
		partial bool
		want    string
	}{
		{name: "error", c: cmd{end: true, err: errors.New("engine: out of memory")}, want: "Error: engine: out of memory"},
		{name: "error after text", c: cmd{end: true, err: errors.New("engine: lost the GPU")}, partial: true, want: "Error: engine: lost the GPU"},
		{name: "panic", c: cmd{panic: "nil map"}, want: "Error: chat service panicked: nil map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.send("Hello?")
			if tc.partial {
				h.svc.cmds <- cmd{d: Delta{Content: "Hi! I am"}}
			}
			h.svc.cmds <- tc.c
			h.waitIdle()
			got := h.transcript()
			if !strings.Contains(got, "Hello?\n") || !strings.Contains(got, tc.want+"\n") {
				t.Errorf("transcript:\n%s\nwant the prompt and %q", got, tc.want)
			}
			if h.v.stats.Text != "Failed" {
				t.Errorf("status = %q", h.v.stats.Text)
			}
			if tc.partial {
				if !strings.Contains(got, "Hi! I am") || len(h.v.history) != 2 {
					t.Errorf("partial reply lost: %s, history %+v", got, h.v.history)
				}
				return
			}
			if strings.Contains(got, waitingText) || len(h.v.history) != 0 || h.v.entry.Text != "Hello?" {
				t.Errorf("after a failed send: transcript %q, history %+v, entry %q", got, h.v.history, h.v.entry.Text)
			}
			// Retrying works.
			h.v.entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
			h.svc.script(Stats{}, nil, Delta{Content: "Now it works"})
			h.waitIdle()
			if !strings.Contains(h.transcript(), "Now it works") || len(h.v.history) != 2 {
				t.Errorf("retry: %s, history %+v", h.transcript(), h.v.history)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{85 * time.Millisecond, "85 ms"}, {999400 * time.Microsecond, "999 ms"}, {1250 * time.Millisecond, "1.25 s"}} {
		if got := formatDuration(tc.d); got != tc.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
	for in, want := range map[string]string{"cpu": "CPU", "cuda": "CUDA", "metal": "Metal", "": "unknown backend", "npu": "npu", "cuda+cpu": "CUDA + CPU"} {
		if got := backendLabel(in); got != want {
			t.Errorf("backendLabel(%q) = %q, want %q", in, got, want)
		}
	}
	st := Stats{PromptTokens: 300, GenTokens: 12, TokensPerSec: 20, TTFT: 90 * time.Millisecond, CachedTokens: 288, ContextSize: 4096}
	if got, want := formatStats(st, false), "20.0 tok/s  ·  first token 90 ms  ·  12 tokens  ·  context 312/4096 (288 cached)"; got != want {
		t.Errorf("formatStats = %q, want %q", got, want)
	}
	if got := formatThinkTime(2400 * time.Millisecond); got != " · 2.4 s" {
		t.Errorf("formatThinkTime = %q", got)
	}
}

func TestScrollFollowsUnlessReaderScrolledUp(t *testing.T) {
	h := newHarness(t)
	s := h.v.scroll
	end := func() float32 { return s.Content.MinSize().Height - s.Size().Height }
	atEnd := func() bool { return s.Offset.Y >= end()-1 }
	h.send("Write a lot")
	h.svc.cmds <- cmd{d: Delta{Content: strings.Repeat("A line of a long answer.\n\n", 30)}}
	h.waitText("A line")
	if end() <= 0 {
		t.Fatal("the transcript does not overflow the window")
	}
	if !atEnd() {
		t.Errorf("not following the reply: offset %v, end %v", s.Offset.Y, end())
	}

	// The reader scrolls up: new text leaves the view alone.
	where := fyne.NewPos(300, 200)
	test.Scroll(h.w.Canvas(), where, 0, 100000)
	if s.Offset.Y != 0 {
		t.Fatalf("scrolling up: offset %v", s.Offset.Y)
	}
	h.svc.cmds <- cmd{d: Delta{Content: "More text."}}
	h.waitText("More text.")
	if s.Offset.Y != 0 {
		t.Errorf("the view moved under a reader who scrolled up: offset %v", s.Offset.Y)
	}

	// Back at the end, it follows again.
	test.Scroll(h.w.Canvas(), where, 0, -100000)
	h.svc.script(Stats{}, nil, Delta{Content: "\n\nThe end."})
	h.waitIdle()
	if !atEnd() {
		t.Errorf("not following after scrolling back down: offset %v, end %v", s.Offset.Y, end())
	}
}

func TestClosingTheWindowCancels(t *testing.T) {
	h := newHarness(t)
	h.send("Long task")
	h.svc.cmds <- cmd{d: Delta{Content: "Working"}}
	h.waitText("Working")
	h.w.Close()
	h.closed = true
	if !h.v.wait(5 * time.Second) {
		t.Fatal("Chat did not return after the window closed")
	}
	if _, errs := h.svc.calls(); len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("ctx errors = %v, want context.Canceled", errs)
	}
	if len(h.loop.q) != 0 {
		t.Errorf("%d updates posted after the window closed", len(h.loop.q))
	}
}

func TestStopWhileThinking(t *testing.T) {
	h := newHarness(t)
	h.send("Hard question")
	h.svc.cmds <- cmd{d: Delta{Reasoning: "Hmm, let me see."}}
	h.waitText("Hmm, let me see.")
	test.Tap(h.v.stopBtn)
	h.waitIdle()
	got := h.transcript()
	if !strings.Contains(got, "Hard question") || !strings.Contains(got, stoppedText) || !strings.Contains(got, "[Thinking") {
		t.Errorf("transcript:\n%s", got)
	}
	if h.last.copyBtn.Visible() {
		t.Error("copy button shown for an empty answer")
	}
	if len(h.v.history) != 0 || h.v.entry.Text != "Hard question" {
		t.Errorf("no answer: history %+v, entry %q; want none and the prompt back", h.v.history, h.v.entry.Text)
	}
}

// Code blocks get a box with a copy button; their widgets stay while code
// streams into them.
func TestCodeBlocks(t *testing.T) {
	h := newHarness(t)
	h.send("Hello world in Go?")
	h.svc.cmds <- cmd{d: Delta{Content: "Here:\n\n```go\npackage main\n"}}
	h.waitText("package main")
	if n := len(h.last.answer.blocks); n != 2 || !h.last.answer.blocks[1].code {
		t.Fatalf("%d blocks while the fence is open", n)
	}
	code := h.last.answer.blocks[1]
	h.svc.script(Stats{}, nil, Delta{Content: "\nfunc main() { println(\"hi\") }\n```\n\nRun it with `go run`."})
	h.waitIdle()
	b := h.last.answer.blocks
	if len(b) != 3 || b[1] != code || b[0].code || !b[1].code || b[2].code {
		t.Fatalf("blocks %+v", b)
	}
	if b[1].text != "package main\n\nfunc main() { println(\"hi\") }" {
		t.Errorf("code %q", b[1].text)
	}
	var copyBtn *widget.Button
	var find func(o fyne.CanvasObject)
	find = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Button:
			copyBtn = x
		case *fyne.Container:
			for _, c := range x.Objects {
				find(c)
			}
		case *container.Scroll:
			find(x.Content)
		}
	}
	find(b[1].obj)
	if copyBtn == nil {
		t.Fatal("no copy button on the code block")
	}
	test.Tap(copyBtn)
	if got := h.clip.Content(); got != b[1].text {
		t.Errorf("clipboard %q", got)
	}
	if got := h.transcript(); !strings.Contains(got, "Here:") || !strings.Contains(got, "Run it with go run.") {
		t.Errorf("transcript:\n%s", got)
	}
	// The whole answer is still what the reply's copy button copies.
	test.Tap(h.last.copyBtn)
	if got := h.clip.Content(); !strings.HasPrefix(got, "Here:\n\n```go") {
		t.Errorf("reply copy %q", got)
	}
}
