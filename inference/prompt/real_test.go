package prompt

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The conversation the golden tests render: system + user + assistant + user, with
// add_generation_prompt (llama.cpp's tests/test-chat-template.cpp uses the same turns).
var conversation = []Message{
	{Role: "system", Content: "You are a helpful assistant"},
	{Role: "user", Content: "Hello"},
	{Role: "assistant", Content: "Hi there"},
	{Role: "user", Content: "Who are you"},
}

// The DeepSeek special tokens as their GGUF vocabularies spell them.
const (
	dsBOS = "<｜begin▁of▁sentence｜>"
	dsEOS = "<｜end▁of▁sentence｜>"
)

// r1Want is what every R1 distill template renders for conversation: the system prompt
// right after BOS, no separator, and the generation prompt opening the think block.
const r1Want = dsBOS + "You are a helpful assistant<｜User｜>Hello<｜Assistant｜>Hi there" + dsEOS +
	"<｜User｜>Who are you<｜Assistant｜><think>\n"

func loadTemplate(t testing.TB, name string) *Template {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "templates", name))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := Parse(string(src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tpl
}

// TestRealTemplates renders the conversation with the chat templates of real models
// (testdata/templates/SOURCES.md) and compares the exact text. The expectations were
// written by reading each template; the DeepSeek-V2 one matches the expected string of
// llama.cpp's test-chat-template.cpp (which renders with an empty BOS).
func TestRealTemplates(t *testing.T) {
	tests := []struct {
		file     string
		bos, eos string
		msgs     []Message
		want     string
	}{
		{"deepseek-r1-distill-qwen-7b.jinja", dsBOS, dsEOS, conversation, r1Want},
		{"deepseek-r1-distill-llama-8b.jinja", dsBOS, dsEOS, conversation, r1Want},
		{"deepseek-r1-distill-llama-8b.llamacpp.jinja", dsBOS, dsEOS, conversation, r1Want},
		{"deepseek-v2-lite-chat.jinja", dsBOS, dsEOS, conversation,
			dsBOS + "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there" + dsEOS +
				"User: Who are you\n\nAssistant:"},
		{"deepseek-v2-lite-chat.jinja", "", dsEOS, // llama.cpp's test case, all six turns
			append(append([]Message{}, conversation...),
				Message{Role: "assistant", Content: "   I am an assistant   "},
				Message{Role: "user", Content: "Another question"}),
			"You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there<｜end▁of▁sentence｜>" +
				"User: Who are you\n\nAssistant:    I am an assistant   <｜end▁of▁sentence｜>" +
				"User: Another question\n\nAssistant:"},
		{"qwen2.5-7b-instruct.jinja", "", "<|im_end|>", conversation,
			"<|im_start|>system\nYou are a helpful assistant<|im_end|>\n" +
				"<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n" +
				"<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen2.5-7b-instruct.jinja", "", "<|im_end|>", conversation[1:], // no system: Qwen's default one
			"<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n" +
				"<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n" +
				"<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n"},
		{"llama-3.1-8b-instruct.jinja", "<|begin_of_text|>", "<|eot_id|>", conversation,
			"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n" +
				"Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n" +
				"You are a helpful assistant<|eot_id|>" +
				"<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>" +
				"<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>" +
				"<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>" +
				"<|start_header_id|>assistant<|end_header_id|>\n\n"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			tpl := loadTemplate(t, tc.file)
			got, err := tpl.Render(context.Background(), tc.msgs,
				Options{AddGenerationPrompt: true, BOSToken: tc.bos, EOSToken: tc.eos})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// TestR1DropsHistoryReasoning: the R1 distill templates keep only what follows the last
// </think> of earlier assistant turns (the leading blank lines stay, as in Python), and
// ignore ReasoningContent.
func TestR1DropsHistoryReasoning(t *testing.T) {
	msgs := []Message{
		{Role: "user", Content: "2+2?"},
		{Role: "assistant", Content: "<think>\nAdd them.\n</think>\n\n4", ReasoningContent: "ignored"},
		{Role: "assistant", Content: "no think tags"},
		{Role: "assistant", Content: "a</think>b</think>c"},
		{Role: "user", Content: "3+3?"},
	}
	want := dsBOS + "<｜User｜>2+2?<｜Assistant｜>\n\n4" + dsEOS + "<｜Assistant｜>no think tags" + dsEOS +
		"<｜Assistant｜>c" + dsEOS + "<｜User｜>3+3?<｜Assistant｜><think>\n"
	for _, file := range []string{"deepseek-r1-distill-qwen-7b.jinja", "deepseek-r1-distill-llama-8b.llamacpp.jinja"} {
		got, err := loadTemplate(t, file).Render(context.Background(), msgs,
			Options{AddGenerationPrompt: true, BOSToken: dsBOS, EOSToken: dsEOS})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: got\n%q\nwant\n%q", file, got, want)
		}
		if strings.Contains(got, "Add them") || strings.Contains(got, "ignored") {
			t.Errorf("%s: earlier reasoning leaked into the prompt", file)
		}
	}
}

// TestNoGenerationPrompt: add_generation_prompt=false leaves the prompt at the last turn.
func TestNoGenerationPrompt(t *testing.T) {
	got, err := loadTemplate(t, "qwen2.5-7b-instruct.jinja").Render(context.Background(), conversation[:2], Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
