//go:build !nogui

package ui

import (
	"context"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
)

// AppSettings are Ember's own settings, for every chat.
type AppSettings struct {
	ServerOn    bool   // serve the OpenAI- and Ollama-compatible API from the app
	ServerAddr  string // host:port; "" for the default
	APIKey      string // required by the API when set
	NoGPU       bool   // compute on the CPU even where a GPU is present
	Threads     int    // CPU threads; 0 for one per core
	ContextSize int    // positions per conversation; 0 for the model's (at most 4096)
	// Lookup turns on speculative decoding by prompt lookup: replies that repeat the
	// conversation (code being edited, quotes) come faster, the same tokens.
	Lookup bool
	// KVQ8 keeps the KV cache in Q8_0: half the memory for long conversations, where
	// the backend and model take one (the CPU backend; heads of whole 32-value blocks).
	KVQ8 bool
}

// AppSettingsService is what a ChatService with app-wide settings also
// implements; a Settings button then edits them.
type AppSettingsService interface {
	AppSettings() AppSettings
	// ApplyAppSettings saves and applies s (it may reload the model, restart
	// the server) and says how things stand, e.g. where the API listens. Slow:
	// the UI calls it on a goroutine of its own, with no reply streaming.
	ApplyAppSettings(ctx context.Context, s AppSettings) (string, error)
}

// showAppSettings edits the app's settings in a dialog and applies them.
func (v *chatView) showAppSettings(svc AppSettingsService) {
	if v.win == nil || v.cur != nil || v.loadingID != nil {
		return
	}
	cur := svc.AppSettings()
	on := widget.NewCheck("Serve the OpenAI and Ollama API from Ember", nil)
	on.SetChecked(cur.ServerOn)
	addr := widget.NewEntry()
	addr.SetPlaceHolder("127.0.0.1:11435")
	addr.SetText(cur.ServerAddr)
	key := widget.NewPasswordEntry()
	key.SetPlaceHolder("none")
	key.SetText(cur.APIKey)
	gpu := widget.NewCheck("Use the GPU when there is one", nil)
	gpu.SetChecked(!cur.NoGPU)
	threads := widget.NewEntry()
	threads.SetPlaceHolder("one per core")
	threads.SetText(fmtInt(nonZero(cur.Threads)))
	threads.Validator = func(t string) error { _, err := parseInt(t, "threads", 1, 1024); return err }
	ctxSize := widget.NewEntry()
	ctxSize.SetPlaceHolder("the model's, at most 4096")
	ctxSize.SetText(fmtInt(nonZero(cur.ContextSize)))
	ctxSize.Validator = func(t string) error { _, err := parseInt(t, "context size", 256, 1<<20); return err }
	lookup := widget.NewCheck("Draft from the conversation (prompt lookup)", nil)
	lookup.SetChecked(cur.Lookup)
	kvq8 := widget.NewCheck("Keep the context in 8 bits (Q8_0)", nil)
	kvq8.SetChecked(cur.KVQ8)
	items := []*widget.FormItem{
		widget.NewFormItem("Local server", on),
		{Text: "Address", Widget: addr, HintText: "loopback only unless you mean it"},
		{Text: "API key", Widget: key, HintText: "clients send it as a Bearer token"},
		{Text: "GPU", Widget: gpu, HintText: "the model reloads"},
		{Text: "Threads", Widget: threads},
		{Text: "Context size", Widget: ctxSize, HintText: "tokens per conversation; the model reloads"},
		{Text: "Speculative decoding", Widget: lookup, HintText: "faster where replies repeat the chat (code, quotes); the model reloads"},
		{Text: "Compact KV cache", Widget: kvq8, HintText: "half the memory for long chats, CPU only; the model reloads"},
	}
	d := dialog.NewForm("Ember settings", "Apply", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		t, _ := parseInt(threads.Text, "threads", 1, 1024)
		c, _ := parseInt(ctxSize.Text, "context size", 256, 1<<20)
		s := AppSettings{ServerOn: on.Checked, ServerAddr: strings.TrimSpace(addr.Text), APIKey: key.Text,
			NoGPU: !gpu.Checked, Threads: derefInt(t), ContextSize: derefInt(c), Lookup: lookup.Checked,
			KVQ8: kvq8.Checked}
		v.applyAppSettings(svc, s)
	}, v.win)
	d.Resize(fyne.NewSize(560, 0))
	d.Show()
}

// applyAppSettings applies s on another goroutine; sending waits meanwhile.
func (v *chatView) applyAppSettings(svc AppSettingsService, s AppSettings) {
	if v.cur != nil || v.loadingID != nil {
		return
	}
	id := "settings"
	v.loadingID = &id
	v.setBusy(false)
	if v.loading != nil {
		v.loading.Show()
		v.loading.Start()
	}
	v.stats.SetText("Applying the settings…")
	go func() {
		status, err := svc.ApplyAppSettings(context.Background(), s)
		v.post(func() {
			v.loadingID = nil
			if v.loading != nil {
				v.loading.Stop()
				v.loading.Hide()
			}
			v.setBusy(v.cur != nil)
			v.refreshModel()
			v.stats.SetText(status)
			if err != nil {
				v.showError("Cannot apply the settings", err)
			}
		})
	}()
}

func nonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
