package prompt

import (
	"strings"
	"sync"
)

// builtinSources are chat formats for models whose file has no usable template, written
// for plain conversations (system, user, assistant turns; no tools). Each renders such a
// conversation exactly as the model's own template does (builtin_test.go compares them
// with the real ones in testdata/templates).
var builtinSources = map[string]string{
	// ChatML, as OpenHermes and most fine-tunes use it.
	"chatml": `{%- for m in messages -%}
{{- '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif -%}`,

	// Qwen2 and Qwen2.5 instruct: ChatML with Qwen's system prompt when there is none.
	"qwen2": `{%- if not messages or messages[0].role != 'system' -%}
{{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' -}}
{%- endif -%}
{%- for m in messages -%}
{{- '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif -%}`,

	// Llama 3 instruct: header per turn, content trimmed, BOS first.
	"llama3": `{{- bos_token -}}
{%- for m in messages -%}
{{- '<|start_header_id|>' + m.role + '<|end_header_id|>\n\n' + m.content|trim + '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif -%}`,

	// DeepSeek-V2 (and V2-Lite) chat.
	"deepseek2": `{{- bos_token -}}
{%- for m in messages -%}
{%- if m.role == 'user' -%}{{ 'User: ' + m.content + '\n\n' }}
{%- elif m.role == 'assistant' -%}{{ 'Assistant: ' + m.content + eos_token }}
{%- elif m.role == 'system' -%}{{ m.content + '\n\n' }}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}{{ 'Assistant:' }}{% endif -%}`,

	// DeepSeek-V3: the system prompts (joined by a blank line) right after BOS.
	"deepseek3": deepseekV3(false),

	// DeepSeek-R1: V3's format; earlier answers keep only what follows </think>, and
	// the generation prompt opens the think block.
	"deepseek-r1": deepseekV3(true),

	// The R1 distills (Qwen and Llama): like R1, but only the last system prompt counts.
	"deepseek-r1-distill": `{%- set ns = namespace(system='') -%}
{%- for m in messages if m.role == 'system' %}{% set ns.system = m.content %}{% endfor -%}
{{- bos_token + ns.system -}}
{%- for m in messages -%}
{%- if m.role == 'user' -%}{{ '<｜User｜>' + m.content }}
{%- elif m.role == 'assistant' -%}
{%- set content = m.content -%}
{%- if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif -%}
{{ '<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>' }}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<｜Assistant｜><think>\n' }}{% endif -%}`,
}

func deepseekV3(r1 bool) string {
	drop, think := "", ""
	if r1 {
		drop = `{%- if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif -%}`
		think = `<think>\n`
	}
	return `{%- set ns = namespace(system='', first=true) -%}
{%- for m in messages if m.role == 'system' -%}
{%- if ns.first %}{% set ns.system = m.content %}{% set ns.first = false -%}
{%- else %}{% set ns.system = ns.system + '\n\n' + m.content %}{% endif -%}
{%- endfor -%}
{{- bos_token + ns.system -}}
{%- for m in messages -%}
{%- if m.role == 'user' -%}{{ '<｜User｜>' + m.content }}
{%- elif m.role == 'assistant' -%}
{%- set content = m.content -%}
` + drop + `
{{ '<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>' }}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}{{ '<｜Assistant｜>` + think + `' }}{% endif -%}`
}

var (
	builtinOnce      sync.Once
	builtinTemplates map[string]*Template
)

// Builtin returns the builtin chat format called name: "chatml", "qwen2", "llama3",
// "deepseek2", "deepseek3", "deepseek-r1" or "deepseek-r1-distill".
func Builtin(name string) (*Template, bool) {
	builtinOnce.Do(func() {
		builtinTemplates = make(map[string]*Template, len(builtinSources))
		for n, src := range builtinSources {
			t, err := Parse(src)
			if err != nil {
				panic("prompt: builtin template " + n + ": " + err.Error())
			}
			t.name = n
			builtinTemplates[n] = t
		}
	})
	t, ok := builtinTemplates[name]
	return t, ok
}

// BuiltinNames lists the builtin formats.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtinSources))
	for n := range builtinSources {
		names = append(names, n)
	}
	return names
}

// Detect picks the template for a model: its file's chat template when that parses in
// the sandbox; otherwise the builtin format the template's markers point to; otherwise
// the builtin for the architecture (general.architecture); otherwise ChatML. It never
// returns nil.
func Detect(chatTemplate string, arch string) *Template {
	if strings.TrimSpace(chatTemplate) != "" {
		if t, err := Parse(chatTemplate); err == nil {
			return t
		}
	}
	name := "chatml"
	switch {
	case strings.Contains(chatTemplate, "<｜User｜>") || strings.Contains(chatTemplate, "<｜Assistant｜>"):
		name = "deepseek3"
		if strings.Contains(chatTemplate, "</think>") {
			name = "deepseek-r1"
		}
	case strings.Contains(chatTemplate, "<|start_header_id|>"):
		name = "llama3"
	case strings.Contains(chatTemplate, "<|im_start|>"):
		if strings.Contains(chatTemplate, "You are Qwen") {
			name = "qwen2"
		}
	case strings.Contains(chatTemplate, "'User: '") && strings.Contains(chatTemplate, "Assistant:"):
		name = "deepseek2"
	case archFormats[arch] != "":
		name = archFormats[arch]
	}
	t, _ := Builtin(name)
	return t
}

// archFormats is the format to assume for a GGUF architecture with no template.
// DeepSeek-V3 and R1 files share "deepseek2" with V2; their converters always store a
// template, so a bare deepseek2 file is taken for V2.
var archFormats = map[string]string{
	"llama":     "llama3",
	"qwen2":     "qwen2",
	"qwen2moe":  "qwen2",
	"deepseek2": "deepseek2",
}
