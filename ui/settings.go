//go:build !nogui

package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
)

// settingsLabel is the chat settings button's label.
const settingsLabel = "Chat settings"

// setSettings sets the system prompt and sampling settings of the conversation
// shown: saved at once for a saved conversation, with its first message for a
// new one.
func (v *chatView) setSettings(prompt string, s Sampling) {
	prompt = strings.TrimSpace(prompt)
	if v.hist != nil && v.chat.ID != 0 {
		if err := v.hist.SetSettings(context.Background(), v.chat.ID, prompt, s); err != nil {
			v.showError("Cannot save the chat settings", err)
			return
		}
	}
	v.chat.SystemPrompt, v.chat.Sampling = prompt, s
	v.updateChatControls()
}

// settingsForm is the chat settings dialog's content.
type settingsForm struct {
	prompt                      *widget.Entry
	temp, topP, topK, maxTokens *widget.Entry
}

func newSettingsForm(c ChatInfo) *settingsForm {
	f := &settingsForm{prompt: widget.NewMultiLineEntry()}
	f.prompt.Wrapping = fyne.TextWrapWord
	f.prompt.SetText(c.SystemPrompt)
	f.prompt.SetPlaceHolder("How the model should answer in this chat, e.g.\nYou are a concise assistant. Answer in English.")
	f.prompt.SetMinRowsVisible(5)
	num := func(text string, check func(string) error) *widget.Entry {
		e := widget.NewEntry()
		e.SetPlaceHolder("default")
		e.SetText(text)
		e.Validator = check
		return e
	}
	s := c.Sampling
	f.temp = num(fmtFloat(s.Temperature), func(t string) error { _, err := parseFloat(t, "temperature", 0, 5); return err })
	f.topP = num(fmtFloat(s.TopP), func(t string) error { _, err := parseFloat(t, "top-p", 0.000001, 1); return err })
	f.topK = num(fmtInt(s.TopK), func(t string) error { _, err := parseInt(t, "top-k", 0, 1<<20); return err })
	f.maxTokens = num(fmtInt(s.MaxTokens), func(t string) error { _, err := parseInt(t, "max tokens", 1, 1<<20); return err })
	return f
}

func (f *settingsForm) items() []*widget.FormItem {
	item := func(name, hint string, e *widget.Entry) *widget.FormItem {
		it := widget.NewFormItem(name, e)
		it.HintText = hint
		return it
	}
	return []*widget.FormItem{
		item("System prompt", "", f.prompt),
		item("Temperature", "0 to 5; 0 always picks the likeliest token", f.temp),
		item("Top-p", "above 0, at most 1", f.topP),
		item("Top-k", "0 keeps every token", f.topK),
		item("Max tokens", "the longest reply", f.maxTokens),
	}
}

// sampling reads the sampling fields; empty ones keep the default.
func (f *settingsForm) sampling() (Sampling, error) {
	return parseSampling(f.temp.Text, f.topP.Text, f.topK.Text, f.maxTokens.Text)
}

// parseSampling reads sampling settings as typed; a blank field is nil.
func parseSampling(temp, topP, topK, maxTokens string) (Sampling, error) {
	var s Sampling
	var errs [4]error
	s.Temperature, errs[0] = parseFloat(temp, "temperature", 0, 5)
	s.TopP, errs[1] = parseFloat(topP, "top-p", 0.000001, 1)
	s.TopK, errs[2] = parseInt(topK, "top-k", 0, 1<<20)
	s.MaxTokens, errs[3] = parseInt(maxTokens, "max tokens", 1, 1<<20)
	return s, errors.Join(errs[:]...)
}

func parseFloat(text, name string, lo, hi float64) (*float64, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	x, err := strconv.ParseFloat(text, 64)
	if err != nil || x < lo || x > hi {
		return nil, fmt.Errorf("%s must be a number from %g to %g", name, lo, hi)
	}
	return &x, nil
}

func parseInt(text, name string, lo, hi int) (*int, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	x, err := strconv.Atoi(text)
	if err != nil || x < lo || x > hi {
		return nil, fmt.Errorf("%s must be a whole number from %d to %d", name, lo, hi)
	}
	return &x, nil
}

func fmtFloat(x *float64) string {
	if x == nil {
		return ""
	}
	return strconv.FormatFloat(*x, 'g', -1, 64)
}

func fmtInt(x *int) string {
	if x == nil {
		return ""
	}
	return strconv.Itoa(*x)
}

// showSettingsDialog edits the chat's system prompt and sampling settings.
func (v *chatView) showSettingsDialog() {
	if v.win == nil {
		return
	}
	f := newSettingsForm(v.chat)
	d := dialog.NewForm(settingsLabel, "Save", "Cancel", f.items(), func(ok bool) {
		if !ok {
			return
		}
		s, err := f.sampling()
		if err != nil { // the form's validation should have caught it
			v.showError("Cannot save the chat settings", err)
			return
		}
		v.setSettings(f.prompt.Text, s)
	}, v.win)
	d.Resize(fyne.NewSize(600, 0))
	d.Show()
	v.win.Canvas().Focus(f.prompt)
}
