//go:build !nogui

package ui

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// nopCloser makes a buffer an io.WriteCloser.
type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

func sidebarTitles(h *harness) []string {
	var out []string
	for _, c := range h.v.side.items {
		out = append(out, c.Title)
	}
	return out
}

func TestHistorySavesBeforeAndWhileStreaming(t *testing.T) {
	fh := newFakeHistory()
	h := newHarnessWith(t, fh)
	if h.v.title.Text != newChatTitle || !h.v.menuBtn.Disabled() {
		t.Errorf("new chat: title %q, menu enabled %v", h.v.title.Text, !h.v.menuBtn.Disabled())
	}
	// The question is on disk before the service is asked.
	var atCall []Message
	h.svc.onCall = func() { atCall = fh.messages(1) }
	h.send("What is the capital of France?\nAnswer briefly.")
	h.svc.cmds <- cmd{d: Delta{Reasoning: "Easy. "}}
	h.svc.cmds <- cmd{d: Delta{Content: "Paris"}}
	h.waitText("Paris")
	h.svc.script(Stats{GenTokens: 3}, nil, Delta{Content: "."})
	h.waitIdle()

	if len(atCall) != 2 || atCall[0].Content != "What is the capital of France?\nAnswer briefly." || atCall[1].Role != RoleAssistant {
		t.Fatalf("saved when Chat was called: %+v", atCall)
	}
	if got := fh.saved(); !slices.Contains(got, "Paris") {
		t.Errorf("partial saves = %q, want one with %q", got, "Paris")
	}
	msgs := fh.messages(1)
	if len(msgs) != 2 || msgs[1].Content != "Paris." || msgs[1].Reasoning != "Easy. " || msgs[1].Interrupted {
		t.Errorf("saved messages = %+v", msgs)
	}
	if !slices.Equal(sidebarTitles(h), []string{"What is the capital of France?"}) {
		t.Errorf("sidebar = %q", sidebarTitles(h))
	}
	if h.v.title.Text != "What is the capital of France?" || h.v.menuBtn.Disabled() {
		t.Errorf("title %q", h.v.title.Text)
	}
	if h.v.history[0].ID != msgs[0].ID || h.v.history[1].ID != msgs[1].ID {
		t.Errorf("history IDs %+v, saved %+v", h.v.history, msgs)
	}

	// A stopped reply is saved as interrupted.
	h.send("And Italy?")
	h.svc.cmds <- cmd{d: Delta{Content: "Rome"}}
	h.waitText("Rome")
	test.Tap(h.v.stopBtn)
	h.waitIdle()
	if msgs := fh.messages(1); len(msgs) != 4 || msgs[3].Content != "Rome" || !msgs[3].Interrupted {
		t.Errorf("after Stop: %+v", msgs)
	}

	// A reply that never started leaves no trace: the question goes back to the entry.
	h.send("And Spain?")
	h.svc.script(Stats{}, errors.New("engine: out of memory"))
	h.waitIdle()
	if msgs := fh.messages(1); len(msgs) != 4 {
		t.Errorf("after a failed reply: %+v", msgs)
	}
	if h.v.entry.Text != "And Spain?" || len(h.v.history) != 4 {
		t.Errorf("entry %q, history %d", h.v.entry.Text, len(h.v.history))
	}
}

func TestHistorySaveFailureKeepsTheQuestion(t *testing.T) {
	fh := newFakeHistory()
	h := newHarnessWith(t, fh)
	fh.setFail("AddMessage", errors.New("store: the disk is full"))
	h.send("Hello")
	if h.v.cur != nil {
		t.Fatal("sent although the question was not saved")
	}
	if h.v.entry.Text != "Hello" || !strings.Contains(h.transcript(), "Not sent: store: the disk is full") {
		t.Errorf("entry %q, transcript:\n%s", h.v.entry.Text, h.transcript())
	}
	if chats, _ := fh.Chats(t.Context(), ""); len(chats) != 0 || h.v.chat.ID != 0 {
		t.Errorf("an empty chat was left: %+v", chats)
	}
	if _, errs := h.svc.calls(); len(errs) != 0 {
		t.Error("the service was called")
	}

	// A failing partial save shows once the reply ends; the final save holds it all.
	fh.setFail("AddMessage", nil)
	fh.setFail("SaveReply", errors.New("io error"))
	h.send("Hello")
	h.svc.script(Stats{}, nil, Delta{Content: "Hi!"})
	h.waitIdle()
	if strings.Contains(h.transcript(), "Not saved") {
		t.Errorf("the final save worked, yet:\n%s", h.transcript())
	}
	if msgs := fh.messages(h.v.chat.ID); len(msgs) != 2 || msgs[1].Content != "Hi!" {
		t.Errorf("saved %+v", msgs)
	}
}

func TestSidebarOpenSearchRenameDelete(t *testing.T) {
	fh := newFakeHistory()
	h := newHarnessWith(t, fh)
	for _, q := range []string{"Paris trip", "Rust lifetimes", "Bread recipe"} {
		h.send(q)
		h.svc.script(Stats{}, nil, Delta{Reasoning: "hmm", Content: "About " + strings.ToLower(q) + "."})
		h.waitIdle()
		test.Tap(h.v.newBtn)
	}
	// Interrupt the second chat's reply, as a crash would have.
	fh.mu.Lock()
	fh.msgs[2+2][1].Interrupted = true // chat ids 1, 4, 7: messages take ids too
	fh.mu.Unlock()
	if got := sidebarTitles(h); !slices.Equal(got, []string{"Bread recipe", "Rust lifetimes", "Paris trip"}) {
		t.Fatalf("sidebar = %q", got)
	}
	if h.transcript() != "" || h.v.title.Text != newChatTitle {
		t.Fatalf("after New chat: %q", h.transcript())
	}

	// Open a chat from the list.
	h.v.side.list.Select(1)
	if h.v.chat.Title != "Rust lifetimes" || h.v.title.Text != "Rust lifetimes" {
		t.Fatalf("opened %+v", h.v.chat)
	}
	got := h.transcript()
	for _, want := range []string{"Rust lifetimes\n", "About rust lifetimes.\n", "[Thinking]", stoppedText} {
		if !strings.Contains(got, want) {
			t.Errorf("opened transcript lacks %q:\n%s", want, got)
		}
	}
	if len(h.v.history) != 2 || h.v.history[1].Content != "About rust lifetimes." {
		t.Errorf("history %+v", h.v.history)
	}
	// And continue it: the model gets the whole conversation.
	h.send("More?")
	h.svc.script(Stats{}, nil, Delta{Content: "Yes."})
	h.waitIdle()
	hists, _ := h.svc.calls()
	if last := hists[len(hists)-1]; len(last) != 3 || last[0].Content != "Rust lifetimes" {
		t.Errorf("continued with %+v", last)
	}
	if got := sidebarTitles(h); got[0] != "Rust lifetimes" || h.v.side.list.Length() != 3 {
		t.Errorf("sidebar after a reply = %q", got)
	}

	// Search titles and contents.
	h.v.side.search.SetText("bread")
	if got := sidebarTitles(h); !slices.Equal(got, []string{"Bread recipe"}) {
		t.Errorf("search = %q", got)
	}
	h.v.side.search.SetText("about paris")
	if got := sidebarTitles(h); !slices.Equal(got, []string{"Paris trip"}) {
		t.Errorf("search = %q", got)
	}
	h.v.side.search.SetText("zzz")
	if len(h.v.side.items) != 0 || !h.v.side.note.Visible() || h.v.side.note.Text != "No matches" {
		t.Errorf("no match: %q", sidebarTitles(h))
	}
	h.v.side.search.SetText("")

	// Rename and delete the chat shown.
	h.v.renameChat("  Borrowing  ")
	if h.v.title.Text != "Borrowing" || sidebarTitles(h)[0] != "Borrowing" {
		t.Errorf("after rename: %q, %q", h.v.title.Text, sidebarTitles(h))
	}
	h.v.deleteChat()
	if got := sidebarTitles(h); !slices.Equal(got, []string{"Bread recipe", "Paris trip"}) || h.v.chat.ID != 0 || h.transcript() != "" {
		t.Errorf("after delete: %q, chat %+v", got, h.v.chat)
	}
}

func TestSettingsAndExport(t *testing.T) {
	fh := newFakeHistory()
	h := newHarnessWith(t, fh)
	temp := 0.2
	h.v.setSettings("  Answer in French.  ", Sampling{Temperature: &temp})
	if h.v.sysBtn.Text != settingsLabel+" ✓" {
		t.Errorf("button = %q", h.v.sysBtn.Text)
	}
	h.send("Hello")
	h.svc.script(Stats{}, nil, Delta{Content: "Bonjour"})
	h.waitIdle()
	hists, _ := h.svc.calls()
	if want := (Message{Role: RoleSystem, Content: "Answer in French."}); hists[0][0] != want {
		t.Errorf("first message to the model = %+v", hists[0][0])
	}
	h.svc.mu.Lock()
	if s := h.svc.samplings[0]; s.Temperature == nil || *s.Temperature != 0.2 || s.TopP != nil {
		t.Errorf("sampling sent = %+v", s)
	}
	h.svc.mu.Unlock()
	if info, _, _ := fh.Load(t.Context(), h.v.chat.ID); info.SystemPrompt != "Answer in French." || *info.Sampling.Temperature != 0.2 {
		t.Errorf("saved chat %+v", info)
	}
	h.v.setSettings("Answer in German.", Sampling{})
	if info, _, _ := fh.Load(t.Context(), h.v.chat.ID); info.SystemPrompt != "Answer in German." || !info.Sampling.IsDefault() {
		t.Errorf("saved chat after a change %+v", info)
	}
	fh.setFail("SetSettings", errors.New("disk full"))
	h.v.setSettings("Answer in Latin.", Sampling{})
	if h.v.chat.SystemPrompt != "Answer in German." {
		t.Errorf("settings that were not saved took effect: %q", h.v.chat.SystemPrompt)
	}
	fh.setFail("SetSettings", nil)
	// A new chat starts without any.
	test.Tap(h.v.newBtn)
	if h.v.sysBtn.Text != settingsLabel || len(h.v.modelHistory()) != 0 {
		t.Errorf("new chat: %q", h.v.sysBtn.Text)
	}
	h.v.side.list.Select(0)

	var b bytes.Buffer
	if err := h.v.exportChat(ExportJSON, nopCloser{&b}); err != nil || !strings.Contains(b.String(), "Bonjour") {
		t.Errorf("export: %q, %v", b.String(), err)
	}
	if got := exportFileName(`a/b: "c"?`, ExportMarkdown); got != "a-b- -c--.md" {
		t.Errorf("file name %q", got)
	}
	if got := exportFileName("", ExportJSON); got != "Untitled.json" {
		t.Errorf("file name %q", got)
	}
}

func TestRegenerateAndEdit(t *testing.T) {
	for _, saved := range []bool{false, true} {
		t.Run(map[bool]string{false: "unsaved", true: "saved"}[saved], func(t *testing.T) {
			fh := newFakeHistory()
			var hist History
			if saved {
				hist = fh
			}
			h := newHarnessWith(t, hist)
			h.send("Tell me a joke")
			h.svc.script(Stats{}, nil, Delta{Content: "Joke one"})
			h.waitIdle()
			first := h.last
			h.send("Another")
			h.svc.script(Stats{}, nil, Delta{Content: "Joke two"})
			h.waitIdle()
			if first.regenBtn.Visible() || !h.last.regenBtn.Visible() {
				t.Fatal("Regenerate should show on the last reply only")
			}

			test.Tap(h.last.regenBtn)
			if h.v.cur == nil || strings.Contains(h.transcript(), "Joke two") {
				t.Fatalf("regenerate did not start over:\n%s", h.transcript())
			}
			h.last = h.v.cur.msg
			h.svc.script(Stats{}, nil, Delta{Content: "Joke three"})
			h.waitIdle()
			hists, _ := h.svc.calls()
			if len(hists) != 3 || !slices.EqualFunc(hists[2], hists[1], func(a, b Message) bool { return a.Content == b.Content }) {
				t.Errorf("regenerate asked with %+v, want %+v", hists[2], hists[1])
			}
			if got := h.transcript(); strings.Count(got, "Another") != 1 || !strings.Contains(got, "Joke three") {
				t.Errorf("transcript after regenerate:\n%s", got)
			}
			if saved {
				if msgs := fh.messages(h.v.chat.ID); len(msgs) != 4 || msgs[3].Content != "Joke three" {
					t.Errorf("saved after regenerate: %+v", msgs)
				}
			}

			// Edit the first question: after a confirmation, it goes back to the
			// entry, and the chat is cut there.
			h.v.confirmEdit(h.v.refs[0].row)
			if h.w.Canvas().Overlays().Top() == nil || len(h.v.history) != 4 {
				t.Fatal("editing the first of two turns did not ask first")
			}
			h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())
			h.v.edit(h.v.refs[0].row)
			if h.v.entry.Text != "Tell me a joke" || len(h.v.history) != 0 || h.transcript() != "" || h.v.hint.Hidden {
				t.Fatalf("after edit: entry %q, history %+v, transcript:\n%s", h.v.entry.Text, h.v.history, h.transcript())
			}
			h.v.entry.SetText("Tell me a pun")
			h.v.send()
			h.svc.script(Stats{}, nil, Delta{Content: "Pun"})
			h.waitIdle()
			if len(h.v.history) != 2 || h.v.history[0].Content != "Tell me a pun" {
				t.Errorf("history after edit and resend: %+v", h.v.history)
			}
			if saved {
				if msgs := fh.messages(h.v.chat.ID); len(msgs) != 2 || msgs[0].Content != "Tell me a pun" {
					t.Errorf("saved after edit: %+v", msgs)
				}
			}
			// Editing the last question (only its reply follows) needs no confirmation.
			test.Tap(h.v.refs[0].row.(*fyne.Container).Objects[1].(*widget.Button))
			if h.w.Canvas().Overlays().Top() != nil || h.v.entry.Text != "Tell me a pun" || len(h.v.history) != 0 {
				t.Errorf("editing the last question: entry %q, history %+v", h.v.entry.Text, h.v.history)
			}
		})
	}
}

func TestChatTitle(t *testing.T) {
	for in, want := range map[string]string{
		"  Hello  there \nsecond line": "Hello there",
		strings.Repeat("word ", 20):    "word word word word word word word word word wo…",
	} {
		if got := chatTitle(in); got != want {
			t.Errorf("chatTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

// The menu button opens a menu with the chat's actions; they open dialogs.
func TestChatMenuAndDialogs(t *testing.T) {
	fh := newFakeHistory()
	h := newHarnessWith(t, fh)
	h.send("Hi")
	h.svc.script(Stats{}, nil, Delta{Content: "Hello"})
	h.waitIdle()
	test.Tap(h.v.menuBtn)
	if h.w.Canvas().Overlays().Top() == nil {
		t.Fatal("no menu")
	}
	h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())
	var labels []string
	for _, it := range h.v.chatMenu().Items {
		labels = append(labels, it.Label)
	}
	if want := []string{"Rename…", "Export as Markdown…", "Export as JSON…", "", "Delete…"}; !slices.Equal(labels, want) {
		t.Errorf("menu = %q, want %q", labels, want)
	}
	for name, show := range map[string]func(){
		"rename": h.v.showRenameDialog, "delete": h.v.showDeleteDialog, "settings": h.v.showSettingsDialog,
		"export": func() { h.v.showExportDialog(ExportMarkdown) },
	} {
		show()
		if h.w.Canvas().Overlays().Top() == nil {
			t.Errorf("%s: no dialog", name)
		}
		for h.w.Canvas().Overlays().Top() != nil {
			h.w.Canvas().Overlays().Remove(h.w.Canvas().Overlays().Top())
		}
	}
}

func TestSettingsForm(t *testing.T) {
	temp, k := 0.7, 40
	f := newSettingsForm(ChatInfo{SystemPrompt: "Be brief.", Sampling: Sampling{Temperature: &temp, TopK: &k}})
	if f.prompt.Text != "Be brief." || f.temp.Text != "0.7" || f.topK.Text != "40" || f.topP.Text != "" || f.maxTokens.Text != "" {
		t.Errorf("form shows %q %q %q %q %q", f.prompt.Text, f.temp.Text, f.topP.Text, f.topK.Text, f.maxTokens.Text)
	}
	f.topP.SetText(" 0.9 ")
	f.temp.SetText("")
	s, err := f.sampling()
	if err != nil || s.Temperature != nil || *s.TopP != 0.9 || *s.TopK != 40 || s.MaxTokens != nil {
		t.Errorf("sampling = %+v, %v", s, err)
	}
	for _, bad := range [][4]string{{"hot", "", "", ""}, {"-1", "", "", ""}, {"", "0", "", ""}, {"", "1.5", "", ""}, {"", "", "2.5", ""}, {"", "", "", "0"}} {
		if _, err := parseSampling(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("parseSampling(%q) accepted", bad)
		}
	}
	if f.temp.SetText("9"); f.temp.Validate() == nil {
		t.Error("the temperature field accepts 9")
	}
	if got := len(f.items()); got != 5 {
		t.Errorf("%d form items", got)
	}
}

// A reply that had not started when the user left its chat is kept empty and
// interrupted, so the chat keeps alternating, and Regenerate retries it.
func TestLeftBeforeTheFirstToken(t *testing.T) {
	fh := newFakeHistory()
	h := newHarnessWith(t, fh)
	h.send("Slow question")
	id := h.v.chat.ID
	test.Tap(h.v.newBtn) // leave while the model thinks
	h.loop.until(t, "the cancelled call to return", func() bool { _, errs := h.svc.calls(); return len(errs) == 1 })
	h.v.wait(time.Second)
	h.drain()
	msgs := fh.messages(id)
	if len(msgs) != 2 || msgs[0].Content != "Slow question" || msgs[1].Content != "" || !msgs[1].Interrupted {
		t.Fatalf("saved %+v", msgs)
	}

	h.v.side.list.Select(0)
	if len(h.v.history) != 2 || !strings.Contains(h.transcript(), stoppedText) || !h.v.lastReply.regenBtn.Visible() {
		t.Fatalf("reopened: history %+v, transcript:\n%s", h.v.history, h.transcript())
	}
	test.Tap(h.v.lastReply.regenBtn)
	h.svc.script(Stats{}, nil, Delta{Content: "Fast answer"})
	h.waitIdle()
	hists, _ := h.svc.calls()
	if last := hists[len(hists)-1]; len(last) != 1 || last[0].Content != "Slow question" {
		t.Errorf("regenerated with %+v", last)
	}
	if msgs := fh.messages(id); len(msgs) != 2 || msgs[1].Content != "Fast answer" || msgs[1].Interrupted {
		t.Errorf("saved after regenerate %+v", msgs)
	}
}

func TestOpenFailureKeepsTheChatShown(t *testing.T) {
	fh := newFakeHistory()
	h := newHarnessWith(t, fh)
	for _, q := range []string{"First", "Second"} {
		test.Tap(h.v.newBtn)
		h.send(q)
		h.svc.script(Stats{}, nil, Delta{Content: "Reply to " + q})
		h.waitIdle()
	}
	fh.setFail("Load", errors.New("database is locked"))
	h.v.side.list.Select(1) // "First"
	if h.v.chat.Title != "Second" || !strings.Contains(h.transcript(), "Reply to Second") {
		t.Errorf("after a failed open: chat %+v", h.v.chat)
	}
	if h.w.Canvas().Overlays().Top() == nil {
		t.Error("no error dialog")
	}
	if sidebarTitles(h)[0] != "Second" {
		t.Errorf("sidebar %q", sidebarTitles(h))
	}
}

func TestWindowShortcuts(t *testing.T) {
	h := newHarnessWith(t, newFakeHistory())
	h.send("Hi")
	h.svc.script(Stats{}, nil, Delta{Content: "Hello"})
	h.waitIdle()
	ctrl := func(k fyne.KeyName) *desktop.CustomShortcut {
		return &desktop.CustomShortcut{KeyName: k, Modifier: fyne.KeyModifierShortcutDefault}
	}
	h.v.entry.TypedShortcut(ctrl(fyne.KeyF)) // from the focused entry
	if h.w.Canvas().Focused() != h.v.side.search {
		t.Errorf("Ctrl+F focused %T", h.w.Canvas().Focused())
	}
	h.v.entry.TypedShortcut(ctrl(fyne.KeyN))
	if h.v.chat.ID != 0 || h.transcript() != "" {
		t.Errorf("Ctrl+N left chat %+v", h.v.chat)
	}
}
