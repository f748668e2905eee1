package prompt

import (
	"fmt"
	"testing"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// FuzzFormatBound checks that goFormatBound and pyFormatBound are upper bounds of what
// the format filter and the format method make, for any format string and a few
// arguments of each kind (whenever the bound is small enough to try).
func FuzzFormatBound(f *testing.F) {
	for _, s := range []string{"%s", "%5d|%-5s|%05.2f", "%[2]*[1]d", "%*.*f", "%q %x %X % x %#v %+q",
		"%%%%", "%!", "%[3]v%[1]v", "%U %c %b %o %e %g", "{}", "{0}{1!r}{2:>10}", "{0:{1}}", "{{}}{",
		"{:,}", "{0:.3f}", "{:x^20}", "{a}", "{0[0]}", "{!r:>30}", "{:%}"} {
		f.Add(s, 7, "ab\x00\u2581\xff", 2.5)
	}
	pyFormat, _ := builtins.Methods.Str.Get("format")
	f.Fuzz(func(t *testing.T, format string, n int, s string, x float64) {
		if len(format) > 200 || len(s) > 200 {
			return
		}
		n %= 1000
		va := &exec.VarArgs{
			Args:   []*exec.Value{exec.AsValue(n), exec.AsValue(s), exec.AsValue(x), exec.AsValue([]any{s, n, nil})},
			KwArgs: map[string]*exec.Value{"a": exec.AsValue(s)},
		}
		if bound := goFormatBound(format, scalars(va.Args)); bound <= 1<<20 {
			args := make([]any, len(va.Args))
			for i, a := range scalars(va.Args) {
				args[i] = a.Interface()
			}
			if got := len(fmt.Sprintf(format, args...)); got > bound {
				t.Fatalf("goFormatBound(%q) = %d, fmt.Sprintf made %d bytes", format, bound, got)
			}
		}
		if bound, ok := pyFormatBound(format, va.Args, va.KwArgs); ok && bound <= 1<<20 {
			out, err := callRecovered(func() (any, error) { return pyFormat(format, exec.AsValue(format), va) })
			if got, isString := out.(string); err == nil && isString && len(got) > bound {
				t.Fatalf("pyFormatBound(%q) = %d, format made %d bytes", format, bound, len(got))
			}
		}
	})
}

// callRecovered calls f, turning a panic into an error: Render recovers the engine's
// panics too, and this target checks sizes only.
func callRecovered(f func() (any, error)) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}
