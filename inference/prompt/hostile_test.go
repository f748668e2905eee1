package prompt

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// render parses and renders src with one user message, failing the test if that takes
// more than a few seconds (a guard that does not trip would hang or crash instead). A
// render still running after 20s is abandoned (its goroutine leaks) and fails the test,
// so a hang in the engine fails fast instead of at the test binary's timeout.
func render(t *testing.T, src string, opt Options) (string, error) {
	t.Helper()
	tpl, err := Parse(src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		out, err := tpl.Render(context.Background(), []Message{{Role: "user", Content: "hi"}}, opt)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("render took %v", d)
		}
		return r.out, r.err
	case <-time.After(20 * time.Second):
		t.Fatalf("render still running after 20s, ignoring its context's deadline")
		return "", nil
	}
}

// TestHostileTemplates: templates built to hang, recurse or exhaust memory end with an
// error wrapping ErrLimit, and quickly.
func TestHostileTemplates(t *testing.T) {
	tests := []struct {
		name, src string
		opt       Options
		msg       string // a substring of the error
	}{
		{"loop too long", `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`,
			Options{}, "loop iterations"},
		{"range too long", `{% for i in range(10**9) %}x{% endfor %}`, Options{}, "range"},
		{"doubling string", `{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}`,
			Options{}, "bigger than"},
		{"doubling list", `{% set ns = namespace(l=[1]) %}{% for i in range(64) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}`,
			Options{}, "bigger than"},
		{"exponential macro fan-out", `{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}x{% endmacro %}{{ f(60) }}`,
			Options{MaxSteps: 10000}, "macro calls"},
		{"infinite recursion", `{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}`, Options{}, "nested deeper"},
		{"recursion through call blocks", `{% macro f() %}{% call f() %}x{% endcall %}{% endmacro %}{{ f() }}`,
			Options{}, "nested deeper"},
		{"string repetition", `{{ 'a' * 10**12 }}`, Options{}, "repetition"},
		{"reversed repetition", `{{ 10**12 * 'ab' }}`, Options{}, "repetition"},
		{"list repetition", `{{ ([1, 2] * 10**9)|length }}`, Options{}, "repetition"},
		{"output size", `{% for i in range(10000) %}{{ 'x' * 1000 }}{% endfor %}`, Options{MaxOutput: 1 << 20}, "output bigger"},
		{"output size in macros", `{% macro f() %}{% for i in range(10000) %}{{ 'x' * 1000 }}{% endfor %}{% endmacro %}{{ f() }}`,
			Options{MaxOutput: 1 << 20}, "printed more than"},
		{"accumulating list", `{% set l = [] %}{% for i in range(100000) %}{% do l.append('x' * 100000 ~ i) %}{% endfor %}{{ l|length }}`,
			Options{MaxAlloc: 64 << 20}, "allocated"},
		{"center", `{{ 'a'|center(10**9) }}`, Options{}, "filter result"},
		{"ljust", `{% set s = 'a' %}{{ s.ljust(10**9, ' ') }}`, Options{}, "string method"},
		{"power overflow", `{{ 10**100 }}`, Options{}, "64 bits"},
		{"format width", `{{ '%1000000000d'|format(1) }}`, Options{}, "filter result"},
		// Directives that reuse one argument: each is small, together they are gigabytes.
		{"format width from argument", `{{ ('%[1]*[2]d' * 10000)|format(99999, 1)|length }}`, Options{}, "filter result"},
		{"format width per directive", `{{ ('%99999[1]d' * 9000)|format(1)|length }}`, Options{}, "filter result"},
		{"format argument reused", `{% set f = '%[1]s' * 20000 %}{{ f|format('x' * 100000)|length }}`, Options{}, "filter result"},
		{"method format width", `{% set f = '{0:>99999}' * 9000 %}{{ f.format(1)|length }}`, Options{}, "string method"},
		{"method format argument reused", `{% set f = '{0}' * 20000 %}{{ f.format('x' * 100000)|length }}`, Options{}, "string method"},
		{"method format nested width", `{{ '{0:{1}{1}{1}{1}{1}{1}{1}{1}{1}}'.format(1, 9)|length }}`, Options{}, "string method"},
		{"method format width as text", `{% set f = '{0:{1}}' * 2000 %}{{ f.format(1, '9999999')|length }}`, Options{}, "string method"},
		{"method format_map", `{% set f = '{a:>99999}' * 9000 %}{{ f.format_map({'a': 1})|length }}`, Options{}, "string method"},
		{"replace blow-up", `{{ ('a' * 100000)|replace('a', 'b' * 1000) }}`, Options{}, "filter result"},
		{"method replace blow-up", `{% set s = 'a' * 100000 %}{{ s.replace('', 'b' * 1000) }}`, Options{}, "string method"},
		{"join blow-up", `{{ range(100000)|join('x' * 10000) }}`, Options{}, "filter result"},
		{"indent blow-up", `{{ ('\n' * 100000)|indent(1000) }}`, Options{}, "filter result"},
		{"tojson indent", `{{ [[1]]|tojson(indent=1000000) }}`, Options{}, "indent"},
		{"namespace holding itself", `{% set ns = namespace() %}{% set ns.me = ns %}{{ ns|tojson }}`, Options{}, "contain itself"},
		{"list holding itself", `{% set l = [] %}{% do l.append(l) %}{{ l|join(',') }}`, Options{}, "contain itself"},
		{"list holding its namespace", `{% set ns = namespace(l=[]) %}{% set ns.l = [] %}{% do ns.l.append(ns) %}{{ ns|tojson }}`, Options{}, "contain itself"},
		{"dict holding itself", `{% set d = {} %}{% set d['x'] = [d] %}{{ d }}`, Options{}, "contain itself"},
		{"timeout", `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`,
			Options{MaxSteps: 1 << 40, Timeout: 50 * time.Millisecond}, "too long"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.src, tc.opt)
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("err = %v, want ErrLimit", err)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want it to mention %q", err, tc.msg)
			}
		})
	}
}

func TestTimeoutIsDeadline(t *testing.T) {
	_, err := render(t, `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`,
		Options{MaxSteps: 1 << 40, Timeout: 20 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrLimit) {
		t.Errorf("err = %v, want DeadlineExceeded and ErrLimit", err)
	}
}

// TestCallerCancel: the caller's cancellation stops a render, and is not a limit.
func TestCallerCancel(t *testing.T) {
	tpl, err := Parse(`{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}`)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = tpl.Render(ctx, nil, Options{MaxSteps: 1 << 40})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrLimit) {
		t.Errorf("err = %v, want Canceled and not ErrLimit", err)
	}
}

// TestSandboxedParse: templates that would read files, or could overflow the parser's
// stack, or touch the sandbox's own names, do not parse.
func TestSandboxedParse(t *testing.T) {
	tests := []struct{ name, src string }{
		{"include", `{% include '/etc/passwd' %}`},
		{"import", `{% import 'macros.j2' as m %}`},
		{"from import", `{% from 'macros.j2' import f %}`},
		{"extends", `{% extends 'base.j2' %}`},
		{"block", `{% block b %}x{% endblock %}`},
		{"with", `{% with a = 1 %}{{ a }}{% endwith %}`},
		{"filter block", `{% filter upper %}x{% endfilter %}`},
		{"recursive loop", `{% for m in messages recursive %}{{ loop(m.children) }}{% endfor %}`},
		{"deep brackets", `{{ ` + strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200) + ` }}`},
		{"deep blocks", strings.Repeat(`{% if true %}`, 200) + strings.Repeat(`{% endif %}`, 200)},
		{"long unary chain", `{{ ` + strings.Repeat("not ", 300) + `true }}`},
		{"too big", strings.Repeat("x", MaxTemplateSize+1)},
		{"reserved names", `{% set __ember_chk = 1 %}`},
		{"syntax error", `{% if %}`},
		{"unclosed", `{% for m in messages %}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tpl, err := Parse(tc.src); err == nil {
				out, rerr := tpl.Render(context.Background(), nil, Options{})
				t.Errorf("parsed; renders %q, %v", out, rerr)
			}
		})
	}
}

// TestRenderErrors: runtime errors inside the engine come back as errors, not panics.
func TestRenderErrors(t *testing.T) {
	for _, src := range []string{
		`{{ raise_exception('Conversation roles must alternate') }}`,
		`{{ 1 % 0 }}`,
		`{{ messages[10].content }}{{ raise_exception('x') }}`,
		`{{ range(1, 2, 0) }}`,
	} {
		if _, err := render(t, src, Options{}); err == nil {
			t.Errorf("%s: no error", src)
		}
	}
	_, err := render(t, `{% if messages[0].role != 'system' %}{{ raise_exception('System first!') }}{% endif %}`, Options{})
	if err == nil || !strings.Contains(err.Error(), "System first!") || errors.Is(err, ErrLimit) {
		t.Errorf("raise_exception: err = %v", err)
	}
}

// TestHugeExponents: ** with a huge exponent ends at once, whatever the base (a base of
// -1 used to loop once per unit of the exponent, ignoring the render's deadline).
func TestHugeExponents(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{{ (-1) ** 1000000000000000000 }}`, "1"},
		{`{{ (-1) ** 999999999999999999 }}`, "-1"},
		{`{{ 1 ** 999999999999999999 }}|{{ 0 ** 999999999999999999 }}|{{ 0 ** 0 }}|{{ 5 ** 0 }}`, "1|0|1|1"},
		{`{{ (-2) ** 3 }}|{{ 2 ** 62 }}|{{ (-2) ** 61 }}`, "-8|4611686018427387904|-2305843009213693952"},
	} {
		out, err := render(t, tc.src, Options{Timeout: 2 * time.Second})
		if err != nil || out != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.src, out, err, tc.want)
		}
	}
	if _, err := render(t, `{{ (-3) ** 999999999999999999 }}`, Options{}); !errors.Is(err, ErrLimit) {
		t.Errorf("(-3) ** huge: err = %v, want ErrLimit", err)
	}
}

// TestFormatListArgument: the format filter prints a list argument as its text, once,
// and not each element padded to the directive's width (ten gigabytes here).
func TestFormatListArgument(t *testing.T) {
	out, err := render(t, `{{ '%99999v'|format(range(100000)|list)|length }}|{{ '%s'|format([1, 'a']) }}`, Options{})
	if err != nil || !strings.HasSuffix(out, "|[1, 'a']") || len(out) > len("688890|[1, 'a']") {
		t.Errorf("got %q, %v", out, err)
	}
}
