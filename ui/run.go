//go:build !nogui

package ui

import (
	"log"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
)

// AppID is Ember's application ID, as in FyneApp.toml; Fyne keys the
// preferences and storage folders by it.
const AppID = "app.ember.desktop"

// Run creates the Fyne app, shows the chat window for svc, with the saved
// conversations of hist in a sidebar (hist may be nil: nothing is saved), and
// blocks until the window is closed. It must be called from the main goroutine (the
// program's first), as GLFW requires. A reply still streaming when the window
// closes is cancelled, and Run waits a little for Chat to return.
func Run(svc ChatService, hist History) { RunScript(svc, hist, nil) }

// RunScript is Run, and once the app has started it runs script (if not nil)
// on a goroutine of its own with a Control of the window: a way for tests to
// drive the real app.
func RunScript(svc ChatService, hist History, script func(*Control)) {
	a := app.NewWithID(AppID)
	v := newChatView(svc, hist, fyne.Do, a.Clipboard().SetContent)
	w := newWindow(a, v)
	st, _ := svc.(Starter)
	if st != nil || script != nil {
		a.Lifecycle().SetOnStarted(func() { v.started(st, script, w) })
	}
	w.ShowAndRun()
	v.close() // also on OnClosed; here for a Quit that closes no window
	if !v.wait(3 * time.Second) {
		log.Printf("ui: chat service did not return within 3s of cancel")
	}
}

// newWindow makes the window for v on a, without showing it.
func newWindow(a fyne.App, v *chatView) fyne.Window {
	w := a.NewWindow("Ember")
	v.win = w
	w.SetContent(v.root)
	size := fyne.NewSize(860, 720)
	if v.side != nil {
		size.Width += 260
	}
	w.Resize(size)
	for _, s := range sendShortcuts {
		w.Canvas().AddShortcut(s, func(fyne.Shortcut) { v.send() })
	}
	for _, s := range v.windowShortcuts() {
		w.Canvas().AddShortcut(s.key, func(fyne.Shortcut) { s.do() })
	}
	v.entry.onWindowShortcut = func(sc fyne.Shortcut) bool {
		for _, s := range v.windowShortcuts() {
			if sc.ShortcutName() == s.key.ShortcutName() {
				s.do()
				return true
			}
		}
		return false
	}
	w.Canvas().Focus(v.entry)
	w.SetOnClosed(v.close)
	return w
}

// started begins the first model's load (st may be nil) as the app starts, and then
// runs script (if not nil) on a goroutine of its own, so that a script finds the model
// loaded.
func (v *chatView) started(st Starter, script func(*Control), w fyne.Window) {
	run := func() {
		if script != nil {
			go script(&Control{v: v, w: w})
		}
	}
	if st == nil {
		run()
		return
	}
	fyne.Do(func() { v.startLoad(st, run) })
}
