package prompt

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// weatherTool is an OpenAI tool definition as encoding/json decodes it.
func weatherTool(t *testing.T) []any {
	var tools []any
	err := json.Unmarshal([]byte(`[{"type": "function", "function": {"name": "get_weather",
		"description": "Get weather", "parameters": {"type": "object",
		"properties": {"city": {"type": "string"}, "days": {"type": "integer", "maximum": 7}},
		"required": ["city"]}}}]`), &tools)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// weatherJSON is weatherTool as tojson prints it: Python's layout, keys sorted (Go maps
// have no order), whole numbers as integers.
const weatherJSON = `{"function": {"description": "Get weather", "name": "get_weather", "parameters": ` +
	`{"properties": {"city": {"type": "string"}, "days": {"maximum": 7, "type": "integer"}}, ` +
	`"required": ["city"], "type": "object"}}, "type": "function"}`

func TestToolsInRealTemplates(t *testing.T) {
	msgs := []Message{{Role: "user", Content: "What's the weather in Paris?"}}
	opt := Options{AddGenerationPrompt: true, BOSToken: "<|begin_of_text|>", Tools: weatherTool(t)}

	got, err := loadTemplate(t, "qwen2.5-7b-instruct.jinja").Render(context.Background(), msgs, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\n" +
		"You may call one or more functions to assist with the user query.\n\n" +
		"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" + weatherJSON +
		"\n</tools>\n\nFor each function call, return a json object with function name and arguments within " +
		"<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n" +
		"</tool_call><|im_end|>\n<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n<|im_start|>assistant\n"
	if got != want {
		t.Errorf("qwen2.5 with tools: got\n%q\nwant\n%q", got, want)
	}

	got, err = loadTemplate(t, "llama-3.1-8b-instruct.jinja").Render(context.Background(), msgs, opt)
	if err != nil {
		t.Fatal(err)
	}
	indented := strings.Join([]string{`{`,
		`    "function": {`,
		`        "description": "Get weather",`,
		`        "name": "get_weather",`,
		`        "parameters": {`,
		`            "properties": {`,
		`                "city": {`,
		`                    "type": "string"`,
		`                },`,
		`                "days": {`,
		`                    "maximum": 7,`,
		`                    "type": "integer"`,
		`                }`,
		`            },`,
		`            "required": [`,
		`                "city"`,
		`            ],`,
		`            "type": "object"`,
		`        }`,
		`    },`,
		`    "type": "function"`,
		`}`}, "\n")
	want = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n" +
		"Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>" +
		"<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON " +
		"for a function call with its proper arguments that best answers the given prompt.\n\n" +
		`Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.` +
		"Do not use variables.\n\n" + indented + "\n\nWhat's the weather in Paris?<|eot_id|>" +
		"<|start_header_id|>assistant<|end_header_id|>\n\n"
	if got != want {
		t.Errorf("llama 3.1 with tools: got\n%q\nwant\n%q", got, want)
	}
}

// TestJinjaFeatures renders the constructs real chat templates use.
func TestJinjaFeatures(t *testing.T) {
	now := time.Date(2024, 7, 26, 15, 4, 5, 0, time.UTC)
	msgs := []Message{
		{Role: "system", Content: "  sys  "},
		{Role: "user", Content: "a b c"},
		{Role: "assistant", Content: "<think>r</think>\n\nans", ReasoningContent: "r"},
	}
	tests := []struct{ src, want string }{
		{`{{ messages|length }} {{ messages[-1].role }} {{ messages[0]['content']|trim }}`, "3 assistant sys"},
		{`{% for m in messages %}{{ loop.index0 }}{{ m.role[0] }}{% if not loop.last %},{% endif %}{% endfor %}`, "0s,1u,2a"},
		{`{% for m in messages[1:] %}{{ m.role }}{% endfor %}|{{ messages[::-1][0].role }}`, "userassistant|assistant"},
		{`{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}`, "3"},
		{`{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join('|') }}`, "a b c"},
		{`{{ messages[1].content.split(' ')|join('-') }} {{ messages[1].content.startswith('a') }}`, "a-b-c True"},
		{`{% set c = messages[2].content %}{{ c.split('</think>')[-1].lstrip('\n') }}`, "ans"},
		{`{{ messages[2].reasoning_content }}|{{ messages[1].reasoning_content is defined }}`, "r|False"},
		{`{% if 'tool_calls' in messages[2] %}x{% else %}y{% endif %}{{ messages[0] is mapping }}{{ 'a' is string }}`, "yTrueTrue"},
		{`{{ none is none }} {{ undefined_var is defined }} {{ (1 + 2) * 3 }} {{ 2 ** 10 }} {{ 7 // 2 }}`, "True False 9 1024 3"},
		{`{{ 'ab' * 3 }} {{ 3 * 'ab' }} {{ [1] * 2 }}`, "ababab ababab [1, 1]"},
		{`{% macro greet(name, punct='!') %}hi {{ name }}{{ punct }}{% endmacro %}{{ greet('bob') }} {{ greet('al', punct='?') }}`, "hi bob! hi al?"},
		{`{% macro box() %}[{{ caller() }}]{% endmacro %}{% call box() %}in{% endcall %}`, "[in]"},
		{`{% set x %}block {{ 1 + 1 }}{% endset %}{{ x }}`, "block 2"},
		{`{% set l = [] %}{% for i in range(3) %}{% do l.append(i * 2) %}{% endfor %}{{ l }}`, "[0, 2, 4]"},
		{`{% for i in range(10) %}{% if i == 3 %}{% break %}{% endif %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %}`, "02"},
		{`{% set d = {'b': 1, 'a': 2} %}{% for k, v in d|dictsort %}{{ k }}{{ v }}{% endfor %}`, "a2b1"},
		{`{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d %H:%M:%S %A %B %j %p %I %%') }}`,
			"26 Jul 2024|2024-07-26 15:04:05 Friday July 208 PM 03 %"},
		{`{{ messages[0].content|tojson }} {{ {'k': [1, 2.5, none, true, "q\"é"]}|tojson }}`, `"  sys  " {"k": [1, 2.5, null, true, "q\"é"]}`},
		{`{{ 'é\n'|tojson(ensure_ascii=true) }} {{ [1, [2]]|tojson(indent=2) }}`, "\"\\u00e9\\n\" [\n  1,\n  [\n    2\n  ]\n]"},
		{`{{ {'b': 1, 'a': 2}|tojson(separators=[',', ':']) }}`, `{"b":1,"a":2}`}, // a literal keeps its order, as in Python
		{`{% set d = {'b': 1, 'a': 2} %}{% for k, v in d|items %}{{ k }}{{ v }}{% endfor %}`, "b1a2"},
		{`{% set ns = namespace(l=[]) %}{% for m in messages %}{% do ns.l.append(m.role) %}{% endfor %}{{ ns.l|join(',') }}`, "system,user,assistant"},
		{`{% set a = [3, 1] %}{% set b = a %}{% do b.append(2) %}{% do a.reverse() %}{{ a }} {{ b|length }} {{ a|sort }}`, "[2, 1, 3] 3 [1, 2, 3]"},
		{`{% set r = range(2) %}{% do r.append('x') %}{{ r }} {{ r|tojson }} {{ (r + [1])|length }} {{ r * 2 }}`, "[0, 1, 'x'] [0, 1, \"x\"] 4 [0, 1, 'x', 0, 1, 'x']"},
		{`{{ enable_thinking }} {{ budget }}`, "False 512"},
	}
	for _, tc := range tests {
		tpl, err := Parse(tc.src)
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		got, err := tpl.Render(context.Background(), msgs, Options{Now: now,
			Vars: map[string]any{"enable_thinking": false, "budget": json.Number("512")}})
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.src, got, tc.want)
		}
	}
}

func TestReservedVars(t *testing.T) {
	tpl, _ := Builtin("chatml")
	for _, k := range []string{"messages", "bos_token", "add_generation_prompt", "__ember_guard"} {
		if _, err := tpl.Render(context.Background(), nil, Options{Vars: map[string]any{k: 1}}); err == nil {
			t.Errorf("Vars[%q] accepted", k)
		}
	}
}

func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 2.5: "2.5", 0.1: "0.1", 1e16: "1e+16", 1234567: "1234567.0",
		1e-5: "1e-05", 0.0001: "0.0001", -3.25: "-3.25", 123456789012345678: "1.2345678901234568e+17"} {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestConcurrentRenders: one Template, many goroutines (run with -race).
func TestConcurrentRenders(t *testing.T) {
	tpl := loadTemplate(t, "llama-3.1-8b-instruct.jinja")
	want, err := tpl.Render(context.Background(), conversation, Options{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				got, err := tpl.Render(context.Background(), conversation, Options{AddGenerationPrompt: true})
				if err != nil || got != want {
					t.Errorf("concurrent render: %v, equal %v", err, got == want)
					return
				}
			}
		})
	}
	wg.Wait()
}
