//go:build !nogui

package app

import (
	"context"
	"fmt"
	"strings"

	"ember/inference/engine"
	"ember/inference/sample"
	"ember/ui"
)

// GUIOptions configure the desktop app.
type GUIOptions struct {
	ModelPath string // "" for the bundled model
	Backend   string
}

// RunGUI loads the model and runs the desktop app until its window closes.
func RunGUI(ctx context.Context, opt GUIOptions) error {
	m, err := OpenModel(opt.ModelPath, BackendOptions{Name: opt.Backend})
	if err != nil {
		return err
	}
	defer m.Close()
	eng, err := engine.New(m.Model, m.Tokenizer, engine.Options{})
	if err != nil {
		return err
	}
	defer eng.Close()
	ui.Run(&chatService{m: m, eng: eng})
	return nil
}

// chatService adapts the engine to the UI's ChatService.
type chatService struct {
	m   *Loaded
	eng *engine.Engine
}

func (c *chatService) ModelName() string   { return c.m.Name }
func (c *chatService) BackendName() string { return c.m.Backend.Name() }

// Chat streams a reply. Until chat templates land, the conversation is rendered as
// plain text: a base model such as the bundled one continues the last user message.
func (c *chatService) Chat(ctx context.Context, history []ui.Message, onDelta func(ui.Delta)) (ui.Stats, error) {
	var prompt string
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == "user" {
			prompt = history[i].Content
			break
		}
	}
	events, err := c.eng.Generate(ctx, engine.Request{
		Prompt:    strings.TrimSpace(prompt),
		MaxTokens: 256,
		Sampling:  sample.Params{Temperature: 0.7, TopK: 40, TopP: 0.95, MinP: 0.05, Seed: uint64(len(history))},
	})
	if err != nil {
		return ui.Stats{}, err
	}
	var last engine.Event
	for ev := range events {
		if ev.Text != "" {
			onDelta(ui.Delta{Content: ev.Text})
		}
		last = ev
	}
	u := last.Usage
	st := ui.Stats{PromptTokens: u.PromptTokens, GenTokens: u.CompletionTokens, TTFT: u.TTFT}
	if u.CompletionTokens > 1 && u.GenTime > 0 {
		st.TokensPerSec = float64(u.CompletionTokens-1) / u.GenTime.Seconds()
	}
	if last.Err != nil && last.Finish != engine.FinishCancelled {
		return st, fmt.Errorf("generation failed: %w", last.Err)
	}
	return st, nil
}
