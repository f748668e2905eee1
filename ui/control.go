//go:build !nogui

package ui

import (
	"image"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// Control drives a window that RunScript shows, for end-to-end tests of the real
// app. Its methods run their work on the Fyne goroutine and must not be called
// from it.
type Control struct {
	v *chatView
	w fyne.Window
}

// Send types text into the entry and sends it.
func (c *Control) Send(text string) {
	fyne.DoAndWait(func() {
		c.v.entry.SetText(text)
		c.v.send()
	})
}

// WaitIdle waits up to d for the reply to finish; false if it did not.
func (c *Control) WaitIdle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		var idle bool
		fyne.DoAndWait(func() { idle = c.v.cur == nil })
		if idle {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Transcript is the visible text of the conversation, one line per text widget.
func (c *Control) Transcript() string {
	var s string
	fyne.DoAndWait(func() { s = transcriptText(c.v.rows) })
	return s
}

// Chats is the titles in the sidebar.
func (c *Control) Chats() []string {
	var out []string
	fyne.DoAndWait(func() {
		if c.v.side != nil {
			for _, it := range c.v.side.items {
				out = append(out, it.Title)
			}
		}
	})
	return out
}

// Capture is a picture of the window's content, read back from OpenGL. (Under
// Xvfb with Mesa's software GL it can come back empty.)
func (c *Control) Capture() image.Image {
	var img image.Image
	fyne.DoAndWait(func() { img = c.w.Canvas().Capture() })
	return img
}

// Do runs f with the window on the Fyne goroutine and waits for it.
func (c *Control) Do(f func(w fyne.Window)) { fyne.DoAndWait(func() { f(c.w) }) }

// Close closes the window, which ends RunScript.
func (c *Control) Close() { fyne.Do(c.w.Close) }

// transcriptText is the visible text under o, one line per text widget, buttons
// as [label].
func transcriptText(o fyne.CanvasObject) string {
	var b strings.Builder
	visibleText(o, &b)
	return b.String()
}

func visibleText(o fyne.CanvasObject, b *strings.Builder) {
	if o == nil || !o.Visible() {
		return
	}
	switch x := o.(type) {
	case *widget.Label:
		b.WriteString(x.Text + "\n")
	case *widget.RichText:
		b.WriteString(x.String() + "\n")
	case *widget.Button:
		b.WriteString("[" + x.Text + "]\n")
	case *fyne.Container:
		for _, c := range x.Objects {
			visibleText(c, b)
		}
	case *container.Scroll:
		visibleText(x.Content, b)
	}
}
