package prompt

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzRender parses and renders arbitrary templates with small limits: whatever the
// text, the result is a template or an error, and a render ends with output or an error
// (a crash, a hang or a fatal stack overflow fails the fuzzer).
func FuzzRender(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "templates", "*.jinja"))
	for _, file := range files {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(string(src))
		}
	}
	for _, src := range builtinSources {
		f.Add(src)
	}
	for _, src := range []string{
		`{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}`,
		`{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}`,
		`{% set l = [] %}{% do l.append(l) %}{{ l }}`,
		`{{ 'a' * 10**12 }}{{ [1] * 3 }}{{ (1, 2) }}{{ {'a': [1, {'b': none}]}|tojson(indent=2) }}`,
		`{% for m in messages %}{{ m.content|upper }}{% else %}none{% endfor %}{{ raise_exception('x') }}`,
	} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			return
		}
		_, _ = tpl.Render(context.Background(), conversation, Options{AddGenerationPrompt: true,
			MaxSteps: 2000, MaxOutput: 1 << 16, MaxAlloc: 256 << 20, Timeout: 2 * time.Second})
	})
}
