//go:build !nogui

package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// The transcript is a VBox of rows: user bubbles on the right, assistant
// bubbles on the left, and note rows (errors) across. All of it is touched on
// the Fyne goroutine only.

const (
	thinkingTitle = "Thinking"
	waitingText   = "…"
	stoppedText   = "Stopped"
)

// newUserRow is a right-aligned bubble with the user's text, selectable, and
// an edit button left of it that takes the text back into the entry.
func (v *chatView) newUserRow(text string) *fyne.Container {
	lbl := widget.NewLabel(text)
	lbl.Wrapping = fyne.TextWrapWord
	lbl.Selectable = true
	l := &rowLayout{right: true, maxFrac: userMaxFraction}
	l.pref = func() float32 { return textWidth(lbl.Theme(), lbl.Text, fyne.TextStyle{}) + 2*bubblePadX }
	editBtn := widget.NewButtonWithIcon("", theme.DocumentCreateIcon(), nil)
	editBtn.Importance = widget.LowImportance
	l.lead = editBtn
	row := container.New(l, newBubble(userFill, lbl), editBtn)
	editBtn.OnTapped = func() { v.confirmEdit(row) }
	return row
}

// newNoteRow is a line across the transcript with an icon, for errors.
func newNoteRow(icon fyne.Resource, text string, imp widget.Importance) *fyne.Container {
	lbl := widget.NewLabel(text)
	lbl.Wrapping = fyne.TextWrapWord
	lbl.Importance = imp
	lbl.Selectable = true
	return container.NewBorder(nil, nil, container.NewCenter(widget.NewIcon(icon)), nil, lbl)
}

// assistantMessage is one assistant reply as it streams in: an optional
// Thinking section, the answer rendered as Markdown, and a footer (copy,
// "Stopped") once it is done.
type assistantMessage struct {
	row      *fyne.Container
	thinking *thinkingSection
	waiting  *widget.RichText // shown until the first delta
	answer   *answerView      // content, rendered from Markdown
	footer   *fyne.Container  // hidden until done
	copyBtn  *widget.Button   // in the footer, when there is an answer
	regenBtn *widget.Button   // in the footer of the newest reply, when idle
	stopped  *widget.RichText // in the footer

	content, reasoning strings.Builder
}

func newAssistantMessage(copyText func(string)) *assistantMessage {
	m := &assistantMessage{
		thinking: newThinkingSection(),
		waiting:  dimText(waitingText),
		answer:   newAnswerView(copyText),
		stopped:  dimText(stoppedText),
	}
	m.answer.box.Hide()
	m.copyBtn = widget.NewButtonWithIcon("", theme.ContentCopyIcon(), func() {
		copyText(m.content.String())
	})
	m.copyBtn.Importance = widget.LowImportance
	m.regenBtn = widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), nil)
	m.regenBtn.Importance = widget.LowImportance
	m.regenBtn.Hide()
	m.stopped.Hide()
	m.footer = container.NewHBox(m.copyBtn, m.regenBtn, m.stopped)
	m.footer.Hide()
	body := container.NewVBox(m.thinking.box, m.waiting, m.answer.box, m.footer)
	m.row = container.New(&rowLayout{maxFrac: 1}, newBubble(assistantFill, body))
	return m
}

// add appends a streamed piece; now is when it arrived.
func (m *assistantMessage) add(d Delta, now time.Time) {
	if d.Reasoning == "" && d.Content == "" {
		return
	}
	m.waiting.Hide()
	if d.Reasoning != "" {
		m.reasoning.WriteString(d.Reasoning)
		m.thinking.set(m.reasoning.String(), now)
	}
	if d.Content != "" {
		first := m.content.Len() == 0
		m.content.WriteString(d.Content)
		if first {
			m.thinking.answerStarted(now)
			m.answer.box.Show()
		}
		m.answer.set(m.content.String())
	}
}

// empty reports whether nothing arrived at all.
func (m *assistantMessage) empty() bool {
	return m.content.Len() == 0 && m.reasoning.Len() == 0
}

// done ends the stream: stopped says the user cut it short.
func (m *assistantMessage) done(stopped bool, now time.Time) {
	m.waiting.Hide()
	m.thinking.answerStarted(now)
	m.stopped.Hidden = !stopped
	m.copyBtn.Hidden = m.content.Len() == 0
	m.updateFooter()
}

// setRegenerable shows or hides the Regenerate button.
func (m *assistantMessage) setRegenerable(on bool) {
	m.regenBtn.Hidden = !on
	m.updateFooter()
}

func (m *assistantMessage) updateFooter() {
	m.footer.Hidden = m.copyBtn.Hidden && m.stopped.Hidden && m.regenBtn.Hidden
	m.row.Refresh()
}

// message is the reply as a history entry.
func (m *assistantMessage) message() Message {
	return Message{Role: RoleAssistant, Content: m.content.String(), Reasoning: m.reasoning.String()}
}

// thinkingSection shows reasoning dimmed below a header that folds it away.
// It opens while the model thinks and closes itself when the answer starts,
// unless the user has toggled it.
type thinkingSection struct {
	box    *fyne.Container // header and body; hidden until reasoning arrives
	header *widget.Button
	body   *fyne.Container // a thin rule and the text; hidden when folded
	text   *widget.RichText

	open, toggled, ended bool
	start, end           time.Time // first reasoning, first answer (or the end)
}

func newThinkingSection() *thinkingSection {
	s := &thinkingSection{text: dimText("")}
	s.header = widget.NewButtonWithIcon(thinkingTitle+waitingText, theme.MenuDropDownIcon(), func() {
		s.toggled = true
		s.setOpen(!s.open)
	})
	s.header.Importance = widget.LowImportance
	s.header.Alignment = widget.ButtonAlignLeading
	rule := newThemedRect(ruleFill, 1)
	rule.min = fyne.NewSize(2, 0)
	s.body = container.NewBorder(nil, nil, rule, nil, s.text)
	s.box = container.NewVBox(s.header, s.body)
	s.box.Hide()
	s.open = true
	return s
}

func (s *thinkingSection) set(reasoning string, now time.Time) {
	if s.box.Hidden {
		s.start = now
		s.box.Show()
	}
	setDimText(s.text, reasoning)
}

// answerStarted closes the thinking phase (idempotent).
func (s *thinkingSection) answerStarted(now time.Time) {
	if s.ended || s.box.Hidden {
		return
	}
	s.ended, s.end = true, now
	s.header.SetText(thinkingTitle + formatThinkTime(s.end.Sub(s.start)))
	if !s.toggled {
		s.setOpen(false)
	}
}

func (s *thinkingSection) setOpen(open bool) {
	s.open = open
	if open {
		s.header.SetIcon(theme.MenuDropDownIcon())
		s.body.Show()
	} else {
		s.header.SetIcon(theme.MenuExpandIcon())
		s.body.Hide()
	}
	s.box.Refresh()
}

// formatThinkTime is the header suffix: " · 2.4 s", or "" under a tenth.
func formatThinkTime(d time.Duration) string {
	if d < 100*time.Millisecond {
		return ""
	}
	return fmt.Sprintf(" · %.1f s", d.Seconds())
}
