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

// Run creates the Fyne app, shows the chat window for svc and blocks until
// the window is closed. It must be called from the main goroutine (the
// program's first), as GLFW requires. A reply still streaming when the window
// closes is cancelled, and Run waits a little for Chat to return.
func Run(svc ChatService) {
	a := app.NewWithID(AppID)
	v := newChatView(svc, fyne.Do, a.Clipboard().SetContent)
	w := newWindow(a, v)
	w.ShowAndRun()
	v.close() // also on OnClosed; here for a Quit that closes no window
	if !v.wait(3 * time.Second) {
		log.Printf("ui: chat service did not return within 3s of cancel")
	}
}

// newWindow makes the window for v on a, without showing it.
func newWindow(a fyne.App, v *chatView) fyne.Window {
	w := a.NewWindow("Ember")
	w.SetContent(v.root)
	w.Resize(fyne.NewSize(860, 720))
	for _, s := range sendShortcuts {
		w.Canvas().AddShortcut(s, func(fyne.Shortcut) { v.send() })
	}
	w.Canvas().Focus(v.entry)
	w.SetOnClosed(v.close)
	return w
}
