package prompt

import (
	"context"
	"slices"
	"testing"
)

// sixTurns is llama.cpp's test-chat-template.cpp conversation.
var sixTurns = append(append([]Message{}, conversation...),
	Message{Role: "assistant", Content: "   I am an assistant   "},
	Message{Role: "user", Content: "Another question"})

func renderBuiltin(t *testing.T, name string, msgs []Message, opt Options) string {
	t.Helper()
	tpl, ok := Builtin(name)
	if !ok {
		t.Fatalf("no builtin %q", name)
	}
	if tpl.Name() != name {
		t.Errorf("Name() = %q, want %q", tpl.Name(), name)
	}
	out, err := tpl.Render(context.Background(), msgs, opt)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// TestBuiltinGoldens: the builtins whose model template is not stored here render
// llama.cpp's expected strings (test-chat-template.cpp: OpenHermes for ChatML, "Llama-3").
func TestBuiltinGoldens(t *testing.T) {
	gen := Options{AddGenerationPrompt: true}
	tests := []struct {
		name string
		msgs []Message
		opt  Options
		want string
	}{
		{"chatml", sixTurns, gen, "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n"},
		{"llama3", sixTurns, gen, "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		{"llama3", conversation[1:2], Options{BOSToken: "<|begin_of_text|>"}, "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"},
		{"deepseek3", conversation, Options{AddGenerationPrompt: true, BOSToken: dsBOS},
			dsBOS + "You are a helpful assistant<｜User｜>Hello<｜Assistant｜>Hi there" + dsEOS + "<｜User｜>Who are you<｜Assistant｜>"},
		{"deepseek3", []Message{{Role: "system", Content: "A"}, {Role: "system", Content: "B"}, {Role: "user", Content: "u"}},
			Options{AddGenerationPrompt: true}, "A\n\nB<｜User｜>u<｜Assistant｜>"},
		{"deepseek-r1", []Message{{Role: "user", Content: "u"}, {Role: "assistant", Content: "<think>r</think>\n\na"}, {Role: "user", Content: "v"}},
			Options{AddGenerationPrompt: true}, "<｜User｜>u<｜Assistant｜>\n\na" + dsEOS + "<｜User｜>v<｜Assistant｜><think>\n"},
	}
	for _, tc := range tests {
		if got := renderBuiltin(t, tc.name, tc.msgs, tc.opt); got != tc.want {
			t.Errorf("%s: got\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

// TestBuiltinsMatchRealTemplates renders several conversations with a builtin and with
// the real template it stands in for; the texts must be equal.
func TestBuiltinsMatchRealTemplates(t *testing.T) {
	convs := [][]Message{
		conversation,
		conversation[1:],
		sixTurns,
		{{Role: "user", Content: "only"}},
		{{Role: "system", Content: "S"}, {Role: "user", Content: "2+2?"},
			{Role: "assistant", Content: "<think>\nadd\n</think>\n\n4"}, {Role: "user", Content: "and 3+3?"}},
	}
	pairs := []struct{ builtin, file string }{
		{"deepseek-r1-distill", "deepseek-r1-distill-qwen-7b.jinja"},
		{"deepseek-r1-distill", "deepseek-r1-distill-llama-8b.llamacpp.jinja"},
		{"qwen2", "qwen2.5-7b-instruct.jinja"},
		{"deepseek2", "deepseek-v2-lite-chat.jinja"},
	}
	for _, p := range pairs {
		real := loadTemplate(t, p.file)
		for i, msgs := range convs {
			for _, gen := range []bool{true, false} {
				opt := Options{AddGenerationPrompt: gen, BOSToken: dsBOS, EOSToken: dsEOS}
				want, err := real.Render(context.Background(), msgs, opt)
				if err != nil {
					t.Fatal(err)
				}
				if got := renderBuiltin(t, p.builtin, msgs, opt); got != want {
					t.Errorf("%s vs %s, conversation %d, generation prompt %v:\ngot  %q\nwant %q", p.builtin, p.file, i, gen, got, want)
				}
			}
		}
	}
}

func TestBuiltinNames(t *testing.T) {
	names := BuiltinNames()
	slices.Sort(names)
	want := []string{"chatml", "deepseek-r1", "deepseek-r1-distill", "deepseek2", "deepseek3", "llama3", "qwen2"}
	if !slices.Equal(names, want) {
		t.Errorf("BuiltinNames() = %v, want %v", names, want)
	}
	if _, ok := Builtin("nope"); ok {
		t.Error(`Builtin("nope") found something`)
	}
}

func TestDetect(t *testing.T) {
	qwen := loadTemplate(t, "qwen2.5-7b-instruct.jinja").Source()
	tests := []struct {
		template, arch string
		want           string // builtin name, or "" for the file's own template
	}{
		{qwen, "qwen2", ""},
		{qwen, "llama", ""}, // a template that parses wins over the architecture
		{"", "llama", "llama3"},
		{"", "qwen2", "qwen2"},
		{"", "deepseek2", "deepseek2"},
		{"", "mamba", "chatml"},
		{"   \n", "unknown", "chatml"},
		// Templates that do not parse: markers choose.
		{"{% include 'x' %}<｜User｜>", "llama", "deepseek3"},
		{"{% include 'x' %}<｜Assistant｜></think>", "", "deepseek-r1"},
		{"{% include 'x' %}<|start_header_id|>", "qwen2", "llama3"},
		{"{% include 'x' %}<|im_start|>", "llama", "chatml"},
		{"{% include 'x' %}<|im_start|>You are Qwen", "", "qwen2"},
		{"{% include 'x' %}{{ 'User: ' }}Assistant:", "", "deepseek2"},
		{"{% include 'x' %}", "llama", "llama3"},
		{"{% broken", "", "chatml"},
	}
	for _, tc := range tests {
		got := Detect(tc.template, tc.arch)
		if got == nil {
			t.Fatalf("Detect(%.30q, %q) = nil", tc.template, tc.arch)
		}
		if got.Name() != tc.want {
			t.Errorf("Detect(%.30q, %q) = %q, want %q", tc.template, tc.arch, got.Name(), tc.want)
		}
		if tc.want == "" && got.Source() != tc.template {
			t.Errorf("Detect(%.30q, %q) did not keep the file's template", tc.template, tc.arch)
		}
	}
}
