package prompt

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"
)

// rootID names the template inside the engine; nothing else can be loaded.
const rootID = "chat_template"

// sandboxConfig is Hugging Face's chat template environment: trim_blocks and
// lstrip_blocks on, the template's last newline dropped, no autoescape.
func sandboxConfig() *config.Config {
	c := config.New()
	c.TrimBlocks = true
	c.LeftStripBlocks = true
	c.KeepTrailingNewline = false
	return c
}

// sandboxEnv is shared by all templates: renders only read it (each render works in a
// child context).
var sandboxEnv = newSandboxEnv()

func newSandboxEnv() *exec.Environment {
	statements := map[string]parser.ControlStructureParser{"set": setParser}
	// The rest are gonja's own; anything that reads other templates (include, import,
	// from, extends, block) or that the rewriter cannot see into is left out.
	for _, name := range []string{"for", "if", "macro", "call", "do", "break", "continue", "raw"} {
		p, ok := builtins.ControlStructures.Get(name)
		if !ok {
			panic("prompt: gonja lacks the " + name + " statement")
		}
		statements[name] = p
	}
	return &exec.Environment{
		Context:           sandboxGlobals(),
		Filters:           sandboxFilters(),
		Tests:             builtins.Tests,
		ControlStructures: exec.NewControlStructureSet(statements),
		Methods:           sandboxMethods(),
	}
}

// parseSandboxed checks source, parses it and rewrites it with the sandbox's guards.
func parseSandboxed(source string) (tpl *exec.Template, err error) {
	if err := checkSource(source); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			tpl, err = nil, fmt.Errorf("template engine panic: %v", p)
		}
	}()
	tpl, err = exec.NewTemplate(rootID, sandboxConfig(), sourceLoader(source), sandboxEnv)
	if err != nil {
		return nil, err
	}
	rw := rewriter{memo: map[nodes.Node]nodes.Expression{}}
	root := tpl.Root()
	if root.Parent != nil || len(root.Blocks) > 0 {
		return nil, errors.New("template inheritance is not available")
	}
	if root.Nodes, err = rw.block(root.Nodes); err != nil {
		return nil, err
	}
	return tpl, nil
}

// sourceLoader serves the template itself and nothing else.
type sourceLoader string

var errNoLoading = errors.New("loading other templates is not available")

func (l sourceLoader) Read(path string) (io.Reader, error) {
	if path != rootID {
		return nil, errNoLoading
	}
	return strings.NewReader(string(l)), nil
}

func (l sourceLoader) Resolve(path string) (string, error) {
	if path != rootID {
		return "", errNoLoading
	}
	return path, nil
}

func (l sourceLoader) Inherit(string) (loaders.Loader, error) { return nil, errNoLoading }

// checkSource bounds what the parser will see: the size, bracket nesting inside tags and
// block nesting, so that the recursive descent parser stays shallow; and it keeps the
// sandbox's own names out of templates.
func checkSource(src string) error {
	if len(src) > MaxTemplateSize {
		return fmt.Errorf("template is %d bytes, more than %d", len(src), MaxTemplateSize)
	}
	if strings.Contains(src, internalPrefix) {
		return fmt.Errorf("template uses the reserved prefix %q", internalPrefix)
	}
	blocks := 0
	for i := 0; i+1 < len(src); i++ {
		if src[i] != '{' {
			continue
		}
		switch src[i+1] {
		case '#':
			end := strings.Index(src[i+2:], "#}")
			if end < 0 {
				return nil // unterminated: the parser says so
			}
			i += 2 + end + 1
		case '{', '%':
			end, err := scanTag(src, i+2, src[i+1] == '%')
			if err != nil {
				return err
			}
			if src[i+1] == '%' {
				word := tagWord(src[i+2 : end])
				switch {
				case strings.HasPrefix(word, "end"):
					blocks--
				case word == "raw":
					if k := strings.Index(src[end:], "endraw"); k >= 0 {
						end += k
					}
				case blockOpeners[word] || (word == "set" && !strings.Contains(src[i+2:end], "=")):
					if blocks++; blocks > maxNesting {
						return fmt.Errorf("blocks nested deeper than %d", maxNesting)
					}
				}
			}
			i = end + 1
		}
	}
	return nil
}

var blockOpeners = map[string]bool{"for": true, "if": true, "macro": true, "call": true,
	"filter": true, "block": true, "with": true, "autoescape": true, "trans": true}

// scanTag finds the end of a {{ or {% tag whose body starts at i, skipping string
// literals and checking bracket nesting. It returns the index of the closing "}}" or
// "%}", or len(src) when there is none.
func scanTag(src string, i int, statement bool) (int, error) {
	depth := 0
	var quote byte
	for ; i < len(src); i++ {
		c := src[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
		case '(', '[', '{':
			if depth++; depth > maxNesting {
				return 0, fmt.Errorf("brackets nested deeper than %d", maxNesting)
			}
		case ')', ']':
			depth = max(depth-1, 0)
		case '}':
			if depth == 0 && !statement && i+1 < len(src) && src[i+1] == '}' {
				return i, nil
			}
			depth = max(depth-1, 0)
		case '%':
			if statement && i+1 < len(src) && src[i+1] == '}' {
				return i, nil
			}
		}
	}
	return len(src), nil
}

// tagWord is a statement's keyword.
func tagWord(body string) string {
	body = strings.TrimLeft(body, "-+ \t\r\n")
	end := strings.IndexFunc(body, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if end < 0 {
		return body
	}
	return body[:end]
}

// setStmt is {% set target = expr [if cond [else alt]] %} and the block form
// {% set target %}...{% endset %}. Unlike gonja's own set statement it refuses to make a
// container hold itself, and its parts are visible to the rewriter.
type setStmt struct {
	loc             *tokens.Token
	target          nodes.Expression // *nodes.Name, *nodes.GetAttribute or *nodes.GetItem
	expr, cond, alt nodes.Expression
	body            *nodes.Wrapper
}

func (s *setStmt) Position() *tokens.Token { return s.loc }
func (s *setStmt) String() string          { return fmt.Sprintf("set(%s)", s.target) }

func setParser(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
	s := &setStmt{loc: p.Current()}
	target, err := args.ParseVariableOrLiteral()
	if err != nil {
		return nil, err
	}
	switch target.(type) {
	case *nodes.Name, *nodes.GetAttribute, *nodes.GetItem:
		s.target = target
	default:
		return nil, args.Error("Expected a name, attribute or item to set.", args.Current())
	}
	if args.Match(tokens.Assign) == nil {
		if !args.End() {
			return nil, args.Error("Expected '=' or the end of a block set.", args.Current())
		}
		body, endargs, err := p.WrapUntil("endset")
		if err != nil {
			return nil, err
		}
		if !endargs.End() {
			return nil, endargs.Error("endset takes no arguments.", nil)
		}
		s.body = body
		return s, nil
	}
	if s.expr, err = args.ParseExpression(); err != nil {
		return nil, err
	}
	if s.cond, s.alt, err = args.ParseCondition(); err != nil {
		return nil, err
	}
	if !args.End() {
		return nil, args.Error("Malformed set statement.", args.Current())
	}
	return s, nil
}

func (s *setStmt) Execute(r *exec.Renderer, _ *nodes.ControlStructureBlock) error {
	var value *exec.Value
	switch {
	case s.body != nil:
		var buf strings.Builder
		sub := r.Inherit()
		sub.Output = &buf
		if err := sub.ExecuteWrapper(s.body); err != nil {
			return err
		}
		value = exec.AsSafeValue(buf.String())
	case s.cond != nil:
		c := r.Eval(s.cond)
		switch {
		case c.IsError():
			return c
		case c.IsTrue():
			value = r.Eval(s.expr)
		case s.alt != nil:
			value = r.Eval(s.alt)
		default:
			value = exec.AsValue(nil)
		}
	default:
		value = r.Eval(s.expr)
	}
	if value.IsError() {
		return value
	}
	stored := box(value.Interface())
	var node, keyNode nodes.Node
	var key *exec.Value
	switch t := s.target.(type) {
	case *nodes.Name:
		r.Environment.Context.Set(t.Name.Val, stored)
		return nil
	case *nodes.GetAttribute:
		node, key = t.Node, exec.AsValue(t.Attribute)
	case *nodes.GetItem:
		node, keyNode = t.Node, t.Arg
	}
	container := r.Eval(node)
	if container.IsError() {
		return container
	}
	if keyNode != nil {
		if key = r.Eval(keyNode); key.IsError() {
			return key
		}
	}
	if refersTo(reflect.ValueOf(value.Interface()), identity(container.Interface()), 0) {
		g := guardFrom(r.Environment.Context)
		if g == nil {
			return errNoGuard
		}
		return g.limit("set would make a value contain itself")
	}
	return container.Set(key, stored)
}

// box turns a list into a pointer to a []any, which gonja reads as the list itself. The
// pointer gives lists Python's reference semantics: l.append(x) inside a loop changes
// the list the template set (gonja would append to a copy that lives in the loop's scope
// only), and two names set to one list share it.
func box(x any) any {
	v := reflect.ValueOf(x)
	if v.Kind() != reflect.Slice {
		return x
	}
	l := make([]any, v.Len())
	for i := range l {
		l[i] = v.Index(i).Interface()
	}
	return &l
}

// sandboxListMethods are gonja's list methods with append and reverse working in place on
// boxed lists.
func sandboxListMethods() *exec.MethodSet[[]any] {
	methods := map[string]exec.Method[[]any]{}
	for _, name := range []string{"append", "reverse", "copy"} {
		if m, ok := builtins.Methods.List.Get(name); ok {
			methods[name] = m
		}
	}
	orig := methods["append"]
	methods["append"] = func(self []any, sv *exec.Value, va *exec.VarArgs) (any, error) {
		p, ok := sv.Interface().(*[]any)
		if !ok {
			return orig(self, sv, va)
		}
		if len(va.Args) != 1 || len(va.KwArgs) != 0 {
			return nil, errors.New("append takes one argument")
		}
		x := va.Args[0].Interface()
		if refersTo(reflect.ValueOf(x), identity(p), 0) {
			panic(abort{fmt.Errorf("prompt: append would make a list contain itself: %w", ErrLimit)})
		}
		*p = append(*p, x)
		return nil, nil
	}
	origReverse := methods["reverse"]
	methods["reverse"] = func(self []any, sv *exec.Value, va *exec.VarArgs) (any, error) {
		p, ok := sv.Interface().(*[]any)
		if !ok {
			return origReverse(self, sv, va)
		}
		slices.Reverse(*p)
		return nil, nil
	}
	return exec.NewMethodSet(methods)
}

// identity is the address of a map, slice or pointer, which is what a cycle returns to;
// 0 for anything else.
func identity(x any) uintptr {
	v := reflect.ValueOf(x)
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Pointer:
		return v.Pointer()
	}
	return 0
}

// refersTo reports whether v is or contains the container at address id (or is nested
// too deeply to tell).
func refersTo(v reflect.Value, id uintptr, depth int) bool {
	if id == 0 {
		return false
	}
	if depth > maxNesting {
		return true
	}
	for v.IsValid() && v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() {
		return false
	}
	if ev, ok := v.Interface().(*exec.Value); ok && ev != nil {
		return refersTo(ev.Val, id, depth+1)
	}
	switch v.Kind() {
	case reflect.Map:
		if v.Pointer() == id {
			return true
		}
		for it := v.MapRange(); it.Next(); {
			if refersTo(it.Value(), id, depth+1) {
				return true
			}
		}
	case reflect.Slice:
		if v.Len() > 0 && v.Pointer() == id {
			return true
		}
		for i := 0; i < v.Len(); i++ {
			if refersTo(v.Index(i), id, depth+1) {
				return true
			}
		}
	case reflect.Pointer:
		return v.Pointer() == id || (!v.IsNil() && refersTo(v.Elem(), id, depth+1))
	case reflect.Struct:
		if v.Type() == exec.TypeDict && v.CanInterface() {
			for _, p := range v.Interface().(exec.Dict).Pairs {
				if refersTo(reflect.ValueOf(p.Value), id, depth+1) {
					return true
				}
			}
		}
	}
	return false
}
