package prompt

import (
	"context"
	"strings"
	"testing"
)

// TestPythonArithmetic: // floors and % takes the divisor's sign as Python's do (gonja
// truncates both), floats keep their fractions, a zero divisor is an error rather than
// a crash, and a string % args formats as the format filter does.
func TestPythonArithmetic(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 // -2 }} {{ -7 // -2 }}", "3 -4 -4 3"},
		{"{{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ -7 % -3 }} {{ 6 % 3 }}", "1 2 -2 -1 0"},
		{"{{ 7.5 // 2 }} {{ -7.5 // 2 }}", "3.0 -4.0"},
		{"{{ 5.5 % 2 }} {{ -5.5 % 2 }}", "1.5 0.5"},
		{"{% for m in messages %}{{ loop.index0 % 2 }}{% endfor %}", "010"},
		{"{{ '%s-%d' % ['a', 3] }} {{ '%d items' % 5 }}", "a-3 5 items"},
		{"{{ (10 // 3) * 'ab' }}", "ababab"},
	} {
		tpl, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		msgs := []Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}, {Role: "user", Content: "c"}}
		got, err := tpl.Render(context.Background(), msgs, Options{})
		if err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.src, got, err, c.want)
		}
	}
	for _, src := range []string{"{{ 1 % 0 }}", "{{ 1 // 0 }}", "{{ 1.5 % 0 }}", "{{ 2.0 // 0.0 }}", "{{ none // 2 }}"} {
		tpl, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got, err := tpl.Render(context.Background(), nil, Options{}); err == nil || !strings.Contains(err.Error(), "zero") && !strings.Contains(err.Error(), "operand") {
			t.Errorf("%s: %q %v, want a division or operand error", src, got, err)
		}
	}
}
