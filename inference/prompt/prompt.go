// Package prompt renders a conversation into a model's prompt text with the Jinja chat
// template a GGUF file carries (tokenizer.chat_template), the way Hugging Face
// transformers' apply_chat_template does: trim_blocks and lstrip_blocks on, one trailing
// newline of the template dropped, bos_token/eos_token/messages/add_generation_prompt
// (and tools when given) as variables, plus the helpers real templates call
// (raise_exception, strftime_now, tojson with Python's json.dumps layout, namespace, loop
// controls, Python string methods).
//
// The Jinja engine is github.com/nikolalohinski/gonja/v2. A template is untrusted input (it
// comes from a downloaded file), so it runs sandboxed and bounded:
//
//   - no file or network access: include, import, from, extends, block, with, filter
//     blocks, autoescape and trans are not available, and there is no loader;
//   - every loop iteration and macro (or call-block) entry is a step, counted against
//     Options.MaxSteps; macro and call-block nesting is limited by Options.MaxDepth;
//   - every step, output write and guarded expression (calls, filters, +, ~, *) checks
//     the context (Options.Timeout), the size of the value it made (Options.MaxOutput),
//     and the bytes the process allocated since the render began (Options.MaxAlloc: a
//     process-wide meter, so it is a generous backstop, not an exact account);
//   - operations that would allocate before any check can run are checked first:
//     string and list repetition, range(), padding filters and methods (center, indent,
//     ljust, format widths, ...), replace;
//   - assignments that would make a namespace or dict contain itself are refused, so no
//     value is cyclic, and recursive for-loops are not available.
//
// A template that breaks a limit gets an error wrapping ErrLimit (or the context's error)
// instead of hanging the caller or exhausting memory. A Template is immutable after Parse
// and safe for concurrent renders.
package prompt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string // "system", "user", "assistant", "tool", ...
	Content string
	// ReasoningContent is an assistant turn's thinking, passed to the template as
	// reasoning_content when not empty (R1 distill templates ignore it; Qwen3-style ones
	// render it).
	ReasoningContent string
	// ToolCalls are an assistant turn's tool calls; they reach the template as
	// tool_calls, each {"id", "type": "function", "function": {"name", "arguments"}}
	// with the arguments decoded from JSON (templates write them with tojson).
	ToolCalls []ToolCall
	// ToolCallID and Name are a tool turn's call id and tool name (tool_call_id, name).
	ToolCallID, Name string
}

// ToolCall is one call of an assistant turn: its id, the tool's name and the arguments
// as JSON text.
type ToolCall struct {
	ID, Name, Arguments string
}

// UsesTools reports whether the template reads the tools variable: whether tool
// definitions passed to Render reach the model at all.
func (t *Template) UsesTools() bool { return strings.Contains(t.source, "tools") }

// Options are a render's variables and limits. The zero value renders without a
// generation prompt, with empty BOS/EOS and the default limits.
type Options struct {
	AddGenerationPrompt bool
	BOSToken, EOSToken  string
	// Tools are tool definitions as JSON-like values (map[string]any, []any, string,
	// float64, json.Number, bool, nil), e.g. an OpenAI "tools" array decoded by
	// encoding/json. They are passed as the tools variable only when not empty. Maps
	// reach the template with sorted keys (Python would keep their order), and JSON
	// numbers that are whole become integers, as Python's json.loads makes them.
	Tools []any
	// Vars are extra template variables (enable_thinking, date_string, ...), normalized
	// as Tools are. They cannot replace messages, tools, bos_token, eos_token or
	// add_generation_prompt.
	Vars map[string]any
	// Now is strftime_now's clock; the zero value means time.Now().
	Now time.Time

	MaxOutput int           // bytes of output, and of any one value; 0: DefaultMaxOutput
	MaxSteps  int           // loop iterations plus macro calls; 0: DefaultMaxSteps
	MaxDepth  int           // nesting of macro and call-block bodies; 0: DefaultMaxDepth
	MaxAlloc  int64         // bytes allocated by the process during the render; 0: DefaultMaxAlloc
	Timeout   time.Duration // 0: DefaultTimeout; the context's deadline applies too
}

// Default limits: far above what real chat templates need (a conversation takes about one
// step per message, plus one per tool or argument in templates that list them), low
// enough that a hostile template fails within about a second (gonja spends some
// microseconds on each loop iteration).
const (
	DefaultMaxOutput = 16 << 20
	DefaultMaxSteps  = 50_000
	DefaultMaxDepth  = 100
	DefaultMaxAlloc  = 1 << 30
	DefaultTimeout   = 5 * time.Second

	// MaxTemplateSize bounds the template source; real ones are a few KiB.
	MaxTemplateSize = 256 << 10
	// maxNesting bounds bracket and block nesting in the source and expression depth
	// in the parsed template, so the recursive parser and evaluator cannot overflow
	// the goroutine stack.
	maxNesting = 100
	// maxRange bounds range() (Jinja's sandbox uses the same number).
	maxRange = 100_000
	// maxWidth bounds integer arguments that size an allocation (center, indent,
	// ljust, zfill, batch, tojson indent, ...).
	maxWidth = 100_000
)

// ErrLimit is wrapped by the error of a render that broke one of the limits.
var ErrLimit = errors.New("template limit exceeded")

// Template is a parsed, sandboxed chat template.
type Template struct {
	name   string // builtin name, or "" for a template from a file
	source string
	tpl    *exec.Template
}

// Parse parses a Jinja chat template. It fails on syntax errors, on constructs outside the
// sandbox (include, recursive loops, ...) and on sources over MaxTemplateSize or nested
// too deeply.
func Parse(source string) (*Template, error) {
	tpl, err := parseSandboxed(source)
	if err != nil {
		return nil, shorten(fmt.Errorf("prompt: parse chat template: %w", err))
	}
	return &Template{source: source, tpl: tpl}, nil
}

// Source is the template's Jinja text.
func (t *Template) Source() string { return t.source }

// Name is the builtin template's name (see Builtin), or "" for a parsed one.
func (t *Template) Name() string { return t.name }

// Render renders msgs with the template. It stops with an error when the template
// raises an exception, breaks a limit, or ctx ends.
func (t *Template) Render(ctx context.Context, msgs []Message, opt Options) (string, error) {
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()

	data, err := renderData(msgs, opt)
	if err != nil {
		return "", err
	}
	g := newGuard(ctx, parent, opt)
	data[guardKey] = g
	if err := g.check(); err != nil {
		return "", err
	}
	out := &limitWriter{g: g}
	err = execute(t.tpl, out, data)
	if g.err != nil { // the first limit or exception wins over gonja's wrapping of it
		return "", g.err
	}
	if err != nil {
		return "", shorten(fmt.Errorf("prompt: render chat template: %w", err))
	}
	return out.b.String(), nil
}

// abort is a panic value that ends a render with err, for the few places the sandbox
// cannot return an error through the engine.
type abort struct{ err error }

// execute runs the template, turning a panic inside the engine into an error.
func execute(tpl *exec.Template, out *limitWriter, data map[string]any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if a, ok := p.(abort); ok {
				err = out.g.fail(a.err)
				return
			}
			err = fmt.Errorf("template engine panic: %v", p)
		}
	}()
	return tpl.Execute(out, exec.NewContext(data))
}

// maxErrorLen bounds an error's text: the engine quotes values in its messages.
const maxErrorLen = 2000

// shortError is an error whose text was cut to maxErrorLen bytes.
type shortError struct {
	msg string
	err error
}

func (e *shortError) Error() string { return e.msg }
func (e *shortError) Unwrap() error { return e.err }

func shorten(err error) error {
	msg := err.Error()
	if len(msg) <= maxErrorLen {
		return err
	}
	return &shortError{msg: strings.ToValidUTF8(msg[:maxErrorLen], "") + "…", err: err}
}

// reserved are the variables Options.Vars cannot replace.
var reserved = map[string]bool{
	"messages": true, "tools": true, "bos_token": true, "eos_token": true,
	"add_generation_prompt": true,
}

// renderData builds the template's variables.
func renderData(msgs []Message, opt Options) (map[string]any, error) {
	data := make(map[string]any, len(opt.Vars)+6)
	for k, v := range opt.Vars {
		if reserved[k] || strings.HasPrefix(k, internalPrefix) {
			return nil, fmt.Errorf("prompt: variable %q is reserved", k)
		}
		data[k] = normalizeJSON(v)
	}
	ms := make([]any, len(msgs))
	for i, m := range msgs {
		mm := map[string]any{"role": m.Role, "content": m.Content}
		if m.ReasoningContent != "" {
			mm["reasoning_content"] = m.ReasoningContent
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]any, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				var args any = c.Arguments
				dec := json.NewDecoder(strings.NewReader(c.Arguments))
				dec.UseNumber()
				var v any
				if dec.Decode(&v) == nil {
					args = v
				}
				calls[j] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": args}}
			}
			mm["tool_calls"] = normalizeJSON(calls)
		}
		if m.ToolCallID != "" {
			mm["tool_call_id"] = m.ToolCallID
		}
		if m.Name != "" {
			mm["name"] = m.Name
		}
		ms[i] = mm
	}
	data["messages"] = ms
	data["add_generation_prompt"] = opt.AddGenerationPrompt
	data["bos_token"] = opt.BOSToken
	data["eos_token"] = opt.EOSToken
	if len(opt.Tools) > 0 {
		data["tools"] = normalizeJSON(opt.Tools)
	}
	return data, nil
}

// WithToolInstructions returns msgs with the tool definitions and how to call them
// written into the system turn (a new first turn when there is none), for a template
// that does not read the tools variable: the reply form asked for is one JSON object
// of a tool's name and arguments, which reply.ParseCalls reads.
func WithToolInstructions(msgs []Message, tools []any) []Message {
	defs, err := json.Marshal(tools)
	if err != nil || len(tools) == 0 {
		return msgs
	}
	text := "You can call these tools (JSON definitions):\n" + string(defs) +
		"\nTo call one, reply with only a JSON object of the form " +
		`{"name": "<tool name>", "arguments": {<the arguments>}}` +
		" and nothing else. Otherwise answer normally."
	out := make([]Message, 0, len(msgs)+1)
	if len(msgs) > 0 && msgs[0].Role == "system" {
		first := msgs[0]
		first.Content = strings.TrimSpace(first.Content + "\n\n" + text)
		return append(append(out, first), msgs[1:]...)
	}
	return append(append(out, Message{Role: "system", Content: text}), msgs...)
}
