//go:build !nogui

package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

const (
	newChatTitle    = "New chat"
	untitled        = "Untitled"
	sidebarFraction = 0.27 // of the window's width, at start
	titleMaxRunes   = 48   // a new chat is titled with its first question, cut to this
)

// sidebar lists the saved conversations, with a search field above them.
// Fyne goroutine only.
type sidebar struct {
	v      *chatView
	search *widget.Entry
	list   *widget.List
	note   *widget.Label // an error, or "No matches"; hidden when empty
	items  []ChatInfo    // what list shows
	root   fyne.CanvasObject
}

func newSidebar(v *chatView) *sidebar {
	s := &sidebar{v: v}
	s.search = widget.NewEntry()
	s.search.SetPlaceHolder("Search chats")
	s.search.ActionItem = widget.NewIcon(theme.SearchIcon())
	s.search.OnChanged = func(string) { v.reloadChats() }
	s.note = widget.NewLabel("")
	s.note.Wrapping = fyne.TextWrapWord
	s.note.SizeName = theme.SizeNameCaptionText
	s.note.Hide()
	s.list = widget.NewList(
		func() int { return len(s.items) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(s.items) {
				o.(*widget.Label).SetText(displayTitle(s.items[i].Title))
			}
		})
	s.list.OnSelected = func(i widget.ListItemID) {
		if i < len(s.items) {
			v.openChat(s.items[i].ID)
		}
	}
	bar := container.NewHBox(v.newBtn)
	if as, ok := v.svc.(AppSettingsService); ok {
		v.appBtn = widget.NewButtonWithIcon("", theme.MenuIcon(), func() { v.showAppSettings(as) })
		v.appBtn.Importance = widget.LowImportance
		bar = container.NewBorder(nil, nil, v.newBtn, v.appBtn)
	}
	top := container.NewVBox(bar, s.search, s.note)
	s.root = container.NewBorder(top, nil, nil, nil, s.list)
	return s
}

// reloadChats lists the conversations again (after a change, or as the search
// text changes) and selects the one shown.
func (v *chatView) reloadChats() {
	s := v.side
	if s == nil {
		return
	}
	items, err := v.hist.Chats(context.Background(), s.search.Text)
	s.note.Hide()
	if err != nil {
		s.note.SetText("Cannot list chats: " + err.Error())
		s.note.Show()
		items = nil
	} else if len(items) == 0 && strings.TrimSpace(s.search.Text) != "" {
		s.note.SetText("No matches")
		s.note.Show()
	}
	s.items = items
	s.list.Refresh()
	for i, c := range items {
		if c.ID == v.chat.ID && v.chat.ID != 0 {
			s.list.Select(i) // openChat ignores the chat already shown
			return
		}
	}
	s.list.UnselectAll()
}

// openChat shows saved conversation id. A streaming reply is stopped (and
// saved as interrupted).
func (v *chatView) openChat(id int64) {
	if id == v.chat.ID || v.hist == nil {
		return
	}
	info, msgs, err := v.hist.Load(context.Background(), id)
	if err != nil {
		v.showError("Cannot open the chat", err)
		v.reloadChats() // select the chat shown again
		return
	}
	v.clearChat()
	v.chat = info
	now := v.now()
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			row := v.newUserRow(m.Content)
			v.addRow(row)
			v.appendMessage(m, rowRef{row: row})
		case RoleAssistant:
			r := newAssistantMessage(v.copyText)
			r.regenBtn.OnTapped = v.regenerate
			r.add(Delta{Content: m.Content, Reasoning: m.Reasoning}, now)
			r.done(m.Interrupted, now)
			v.addRow(r.row)
			// Even an empty reply (the app died before the first token):
			// roles keep alternating, and Regenerate retries it.
			v.appendMessage(m, rowRef{row: r.row, reply: r})
		}
	}
	v.updateChatControls()
	v.updateHint()
	v.scrollToEnd()
	v.focusEntry()
}

// saveQuestion saves the user's question, first creating the conversation if
// it is new, and an empty reply to stream into.
func (v *chatView) saveQuestion(text string) (msgID, replyID int64, err error) {
	ctx := context.Background()
	created := false
	if v.chat.ID == 0 {
		info, err := v.hist.NewChat(ctx, ChatInfo{Title: chatTitle(text), SystemPrompt: v.chat.SystemPrompt, Sampling: v.chat.Sampling})
		if err != nil {
			return 0, 0, err
		}
		v.chat, created = info, true
	}
	undo := func(err error) error {
		if created {
			err = errors.Join(err, v.hist.Delete(ctx, v.chat.ID))
			v.chat = ChatInfo{SystemPrompt: v.chat.SystemPrompt, Sampling: v.chat.Sampling}
		}
		return err
	}
	if msgID, err = v.hist.AddMessage(ctx, v.chat.ID, Message{Role: RoleUser, Content: text}); err != nil {
		return 0, 0, undo(err)
	}
	if replyID, err = v.hist.StartReply(ctx, v.chat.ID); err != nil {
		return 0, 0, undo(errors.Join(err, v.hist.TruncateFrom(ctx, msgID)))
	}
	if created {
		v.updateChatControls()
		v.reloadChats()
	}
	return msgID, replyID, nil
}

// chatTitle is a new conversation's title: its first line, shortened.
func chatTitle(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(line), " ")
	if r := []rune(line); len(r) > titleMaxRunes {
		line = strings.TrimSpace(string(r[:titleMaxRunes-1])) + "…"
	}
	return line
}

func displayTitle(t string) string {
	if strings.TrimSpace(t) == "" {
		return untitled
	}
	return t
}

// updateChatControls shows the conversation's title and enables what applies.
func (v *chatView) updateChatControls() {
	if v.title != nil {
		t := newChatTitle
		if v.chat.ID != 0 {
			t = displayTitle(v.chat.Title)
		}
		v.title.SetText(t)
	}
	if v.menuBtn != nil {
		if v.chat.ID == 0 {
			v.menuBtn.Disable()
		} else {
			v.menuBtn.Enable()
		}
	}
	if v.chat.SystemPrompt != "" || !v.chat.Sampling.IsDefault() {
		v.sysBtn.SetText(settingsLabel + " ✓")
	} else {
		v.sysBtn.SetText(settingsLabel)
	}
}

// showError tells the user what failed: in a dialog, or in the log before
// there is a window.
func (v *chatView) showError(what string, err error) {
	err = fmt.Errorf("%s: %w", what, err)
	if v.win == nil {
		log.Printf("ui: %v", err)
		return
	}
	dialog.ShowError(err, v.win)
}

// renameChat sets the title of the conversation shown.
func (v *chatView) renameChat(title string) {
	title = strings.TrimSpace(title)
	if v.chat.ID == 0 || title == "" {
		return
	}
	if err := v.hist.Rename(context.Background(), v.chat.ID, title); err != nil {
		v.showError("Cannot rename the chat", err)
		return
	}
	v.chat.Title = title
	v.updateChatControls()
	v.reloadChats()
}

// deleteChat deletes the conversation shown and starts a new one.
func (v *chatView) deleteChat() {
	id := v.chat.ID
	if id == 0 {
		return
	}
	v.newChat() // stops a reply first, so nothing writes to it after
	if err := v.hist.Delete(context.Background(), id); err != nil {
		v.showError("Cannot delete the chat", err)
	}
	v.reloadChats()
}

// exportChat writes the conversation shown to w as ExportMarkdown or
// ExportJSON, and closes w.
func (v *chatView) exportChat(format string, w io.WriteCloser) error {
	err := v.hist.Export(context.Background(), v.chat.ID, format, w)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		v.showError("Cannot export the chat", err)
	}
	return err
}

// exportFileName is the suggested file name for an export.
func exportFileName(title, format string) string {
	name := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) || r < ' ' {
			return '-'
		}
		return r
	}, strings.TrimSpace(displayTitle(title)))
	if format == ExportJSON {
		return name + ".json"
	}
	return name + ".md"
}

// The dialogs, on v.win.

func (v *chatView) showChatMenu() {
	if v.win == nil || v.chat.ID == 0 {
		return
	}
	c := v.win.Canvas()
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.menuBtn).Add(fyne.NewPos(0, v.menuBtn.Size().Height))
	widget.ShowPopUpMenuAtPosition(v.chatMenu(), c, pos)
}

// chatMenu is what the menu button offers for the chat shown.
func (v *chatView) chatMenu() *fyne.Menu {
	return fyne.NewMenu("",
		fyne.NewMenuItem("Rename…", v.showRenameDialog),
		fyne.NewMenuItem("Export as Markdown…", func() { v.showExportDialog(ExportMarkdown) }),
		fyne.NewMenuItem("Export as JSON…", func() { v.showExportDialog(ExportJSON) }),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Delete…", v.showDeleteDialog),
	)
}

func (v *chatView) showRenameDialog() {
	e := widget.NewEntry()
	e.SetText(v.chat.Title)
	d := dialog.NewForm("Rename chat", "Rename", "Cancel", []*widget.FormItem{widget.NewFormItem("Title", e)}, func(ok bool) {
		if ok {
			v.renameChat(e.Text)
		}
	}, v.win)
	d.Resize(fyne.NewSize(420, 0))
	d.Show()
	v.win.Canvas().Focus(e)
}

func (v *chatView) showDeleteDialog() {
	dialog.ShowConfirm("Delete chat?", fmt.Sprintf("“%s” and all its messages will be deleted.", displayTitle(v.chat.Title)),
		func(ok bool) {
			if ok {
				v.deleteChat()
			}
		}, v.win)
}

func (v *chatView) showExportDialog(format string) {
	id := v.chat.ID
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			v.showError("Cannot export the chat", err)
			return
		}
		if w == nil || v.chat.ID != id { // cancelled, or another chat by now
			if w != nil {
				w.Close()
			}
			return
		}
		v.exportChat(format, w)
	}, v.win)
	d.SetFileName(exportFileName(v.chat.Title, format))
	d.Show()
}
