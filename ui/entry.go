//go:build !nogui

package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// promptEntry is the multi-line message entry. Enter and Ctrl+Enter (Cmd+Enter
// on macOS) call onSend; Shift+Enter inserts a newline. (A plain multi-line
// widget.Entry does the opposite: Enter is a newline, Shift+Enter submits.)
type promptEntry struct {
	widget.Entry
	onSend  func()
	shiftOn bool // a Shift key is down (desktop.Keyable events)
	// onWindowShortcut handles the window's own shortcuts (New chat, ...),
	// which the focused entry would otherwise swallow; it reports whether s
	// was one. May be nil.
	onWindowShortcut func(s fyne.Shortcut) bool
}

func newPromptEntry(onSend func()) *promptEntry {
	e := &promptEntry{onSend: onSend}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.ExtendBaseWidget(e)
	e.SetMinRowsVisible(3)
	return e
}

// KeyDown tracks Shift, then lets the entry track it for selections.
func (e *promptEntry) KeyDown(key *fyne.KeyEvent) {
	if key.Name == desktop.KeyShiftLeft || key.Name == desktop.KeyShiftRight {
		e.shiftOn = true
	}
	e.Entry.KeyDown(key)
}

// KeyUp is the release half of KeyDown.
func (e *promptEntry) KeyUp(key *fyne.KeyEvent) {
	if key.Name == desktop.KeyShiftLeft || key.Name == desktop.KeyShiftRight {
		e.shiftOn = false
	}
	e.Entry.KeyUp(key)
}

// TypedKey sends on Enter without Shift; all else is the entry's.
func (e *promptEntry) TypedKey(key *fyne.KeyEvent) {
	if isEnter(key.Name) && !e.shiftOn && !e.Disabled() {
		e.onSend()
		return
	}
	e.Entry.TypedKey(key) // Shift+Enter: OnSubmitted is nil, so a newline
}

// TypedShortcut sends on Ctrl+Enter (Cmd+Enter on macOS).
func (e *promptEntry) TypedShortcut(s fyne.Shortcut) {
	if isSendShortcut(s) {
		if !e.Disabled() {
			e.onSend()
		}
		return
	}
	if e.onWindowShortcut != nil && e.onWindowShortcut(s) {
		return
	}
	e.Entry.TypedShortcut(s)
}

func isEnter(k fyne.KeyName) bool { return k == fyne.KeyReturn || k == fyne.KeyEnter }

func isSendShortcut(s fyne.Shortcut) bool {
	cs, ok := s.(*desktop.CustomShortcut)
	return ok && isEnter(cs.KeyName) &&
		(cs.Modifier == fyne.KeyModifierControl || cs.Modifier == fyne.KeyModifierShortcutDefault)
}

// sendShortcuts are registered on the window canvas, so Ctrl+Enter sends
// while the focus is elsewhere too.
var sendShortcuts = []*desktop.CustomShortcut{
	{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierShortcutDefault},
	{KeyName: fyne.KeyEnter, Modifier: fyne.KeyModifierShortcutDefault},
}

// windowShortcut is a key combination of the window and what it does.
type windowShortcut struct {
	key *desktop.CustomShortcut
	do  func()
}

// windowShortcuts: Ctrl+N (Cmd+N) starts a new chat, Ctrl+F (Cmd+F) goes to
// the chat search.
func (v *chatView) windowShortcuts() []windowShortcut {
	out := []windowShortcut{{&desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault}, v.newChat}}
	if v.side != nil {
		out = append(out, windowShortcut{&desktop.CustomShortcut{KeyName: fyne.KeyF, Modifier: fyne.KeyModifierShortcutDefault}, func() {
			if c := fyne.CurrentApp().Driver().CanvasForObject(v.side.search); c != nil {
				c.Focus(v.side.search)
			}
		}})
	}
	return out
}
