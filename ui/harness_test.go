//go:build !nogui

package ui

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// fakeChat is a ChatService that does what the test sends on cmds, one
// command at a time, so a test decides when each delta arrives.
type fakeChat struct {
	cmds   chan cmd
	onCall func() // called first in Chat, on its goroutine

	mu        sync.Mutex
	histories [][]Message // the history of every Chat call; guarded by mu
	samplings []Sampling  // the sampling settings of every call; guarded by mu
	ctxErrs   []error     // ctx.Err() when each call returned; guarded by mu
}

// cmd is one step of a fake reply.
type cmd struct {
	d     Delta
	end   bool   // return st, err
	st    Stats  // with end
	err   error  // with end
	panic string // panic with this
}

func newFakeChat() *fakeChat { return &fakeChat{cmds: make(chan cmd, 64)} }

func (f *fakeChat) ModelName() string   { return "tiny-llama-1b-q4" }
func (f *fakeChat) BackendName() string { return "cpu" }

func (f *fakeChat) Chat(ctx context.Context, req ChatRequest, onDelta func(Delta)) (st Stats, err error) {
	if f.onCall != nil {
		f.onCall()
	}
	f.mu.Lock()
	f.histories = append(f.histories, slices.Clone(req.History))
	f.samplings = append(f.samplings, req.Sampling)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.ctxErrs = append(f.ctxErrs, ctx.Err())
		f.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return Stats{GenTokens: 1}, ctx.Err()
		case c := <-f.cmds:
			switch {
			case c.panic != "":
				panic(c.panic)
			case c.end:
				return c.st, c.err
			default:
				onDelta(c.d)
			}
		}
	}
}

// script queues a whole reply: the deltas, then the end.
func (f *fakeChat) script(st Stats, err error, deltas ...Delta) {
	for _, d := range deltas {
		f.cmds <- cmd{d: d}
	}
	f.cmds <- cmd{end: true, st: st, err: err}
}

func (f *fakeChat) calls() ([][]Message, []error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.histories), slices.Clone(f.ctxErrs)
}

// uiLoop stands in for the Fyne main loop: the view posts to it, and the
// test goroutine runs what was posted, so widgets are touched by one
// goroutine only, as in the app. (The test driver's fyne.Do would run the
// func on the streaming goroutine itself.)
type uiLoop struct{ q chan func() }

func (l *uiLoop) do(f func()) { l.q <- f }

// until runs posted funcs until cond holds.
func (l *uiLoop) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case f := <-l.q:
			f()
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

type harness struct {
	t      *testing.T
	svc    *fakeChat
	loop   *uiLoop
	v      *chatView
	w      fyne.Window
	clip   fyne.Clipboard
	last   *assistantMessage // the reply to the last send
	closed bool              // the window was closed
}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, nil) }

// newHarnessWith makes a window whose conversations go to hist (may be nil).
func newHarnessWith(t *testing.T, hist History) *harness {
	return newHarnessWrapped(t, hist, func(f *fakeChat) ChatService { return f })
}

// newHarnessWrapped makes a window for the service that wrap makes around the
// harness's fakeChat.
func newHarnessWrapped(t *testing.T, hist History, wrap func(*fakeChat) ChatService) *harness {
	a := test.NewTempApp(t)
	h := &harness{t: t, svc: newFakeChat(), loop: &uiLoop{q: make(chan func(), 1024)}, clip: a.Clipboard()}
	h.v = newChatView(wrap(h.svc), hist, h.loop.do, h.clip.SetContent)
	h.v.saveEvery = 0 // save every delta
	h.w = newWindow(a, h.v)
	h.w.Resize(fyne.NewSize(700, 600))
	t.Cleanup(func() {
		if !h.closed {
			h.w.Close()
		}
		if !h.v.wait(5 * time.Second) {
			t.Error("a reply goroutine did not return")
		}
	})
	return h
}

// send writes text into the entry and presses Enter.
func (h *harness) send(text string) {
	h.v.entry.SetText(text)
	h.v.entry.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if h.v.cur != nil {
		h.last = h.v.cur.msg
	}
}

func (h *harness) idle() bool { return h.v.cur == nil }

// waitIdle runs the loop until the reply is finished.
func (h *harness) waitIdle() {
	h.t.Helper()
	h.loop.until(h.t, "the reply to finish", h.idle)
}

// waitText runs the loop until the transcript shows s.
func (h *harness) waitText(s string) {
	h.t.Helper()
	h.loop.until(h.t, "transcript text "+s, func() bool { return strings.Contains(h.transcript(), s) })
}

// transcript is the visible text of the transcript, one line per text widget.
func (h *harness) transcript() string {
	return transcriptText(h.v.rows)
}

// drain runs what is posted now.
func (h *harness) drain() {
	for {
		select {
		case f := <-h.loop.q:
			f()
		default:
			return
		}
	}
}
