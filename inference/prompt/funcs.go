package prompt

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
)

// sandboxFilters are gonja's filters minus those with no place in a chat template
// (random, urlize, wordwrap, pprint, forceescape), with the ones that size an allocation
// from an argument checked first, and tojson replaced by Python's json.dumps layout.
func sandboxFilters() *exec.FilterSet {
	keep := []string{"abs", "attr", "capitalize", "default", "d", "dictsort", "e", "escape",
		"filesizeformat", "first", "float", "groupby", "int", "items", "last", "length",
		"count", "list", "lower", "map", "max", "min", "rejectattr", "reject", "reverse",
		"round", "safe", "selectattr", "select", "sort", "string", "striptags", "sum",
		"title", "trim", "unique", "upper", "urlencode", "wordcount", "xmlattr",
		"center", "indent", "truncate", "batch", "slice", "join", "replace", "format"}
	m := make(map[string]exec.FilterFunction, len(keep)+1)
	for _, name := range keep {
		f, ok := builtins.Filters.Get(name)
		if !ok {
			continue
		}
		switch name {
		case "center", "truncate", "batch", "slice":
			m[name] = sizedFilter(f, nil)
		case "indent":
			m[name] = sizedFilter(f, func(in *exec.Value, va *exec.VarArgs, max int) bool {
				width := 4
				if len(va.Args) > 0 && va.Args[0].IsInteger() {
					width = va.Args[0].Integer()
				}
				lines := strings.Count(in.String(), "\n") + 1
				return len(in.String())+lines*width <= max
			})
		case "join":
			m[name] = sizedFilter(f, func(in *exec.Value, va *exec.VarArgs, max int) bool {
				sep := 0
				if len(va.Args) > 0 {
					sep = len(va.Args[0].String())
				}
				return in.Len()*sep <= max
			})
		case "replace":
			m[name] = sizedFilter(f, func(in *exec.Value, va *exec.VarArgs, max int) bool {
				return len(va.Args) < 2 || replaceFits(in.String(), va.Args[0].String(), va.Args[1].String(), max)
			})
		case "format":
			m[name] = scalarArgs(sizedFilter(f, func(in *exec.Value, va *exec.VarArgs, max int) bool {
				return !bigWidth.MatchString(in.String()) && goFormatBound(in.String(), va.Args) <= max
			}))
		case "dictsort":
			m[name] = literalDictFilter(f)
		case "items":
			m[name] = func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
				if d, ok := in.Interface().(*exec.Dict); ok && d != nil { // in order, as Python
					pairs := make([]any, len(d.Pairs))
					for i, p := range d.Pairs {
						pairs[i] = []any{p.Key.Interface(), p.Value.Interface()}
					}
					return exec.AsValue(pairs)
				}
				return f(e, in, va)
			}
		default:
			m[name] = f
		}
	}
	m["tojson"] = filterToJSON
	return exec.NewFilterSet(m)
}

// literalDictFilter wraps a filter that gonja only implements for maps: a dict written in
// the template (an ordered exec.Dict) reaches it as a map.
func literalDictFilter(f exec.FilterFunction) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		if d, ok := in.Interface().(*exec.Dict); ok && d != nil {
			m := make(map[string]any, len(d.Pairs))
			for _, p := range d.Pairs {
				m[p.Key.String()] = p.Value.Interface()
			}
			in = exec.AsValue(m)
		}
		return f(e, in, va)
	}
}

// bigWidth matches a run of six or more digits: a format width or precision that would
// allocate a megabyte or more.
var bigWidth = regexp.MustCompile(`[0-9]{6,}`)

// sizedFilter wraps f: integer arguments must be at most maxWidth, and fits (if not nil)
// must accept the input and arguments before f allocates anything.
func sizedFilter(f exec.FilterFunction, fits func(in *exec.Value, va *exec.VarArgs, max int) bool) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		g := guardFrom(e.Environment.Context)
		if g == nil {
			return exec.AsValue(errNoGuard)
		}
		if !smallInts(va) || (fits != nil && !fits(in, va, g.maxOutput)) {
			return exec.AsValue(g.limit("filter result would be bigger than %d bytes", g.maxOutput))
		}
		return f(e, in, va)
	}
}

// smallInts reports whether every numeric argument is within ±maxWidth.
func smallInts(va *exec.VarArgs) bool {
	small := func(a *exec.Value) bool {
		return !(a.IsInteger() || a.IsFloat()) || math.Abs(a.Float()) <= maxWidth
	}
	for _, a := range va.Args {
		if !small(a) {
			return false
		}
	}
	for _, a := range va.KwArgs {
		if !small(a) {
			return false
		}
	}
	return true
}

// replaceFits reports whether strings.Replace(s, old, new, -1) stays within max bytes.
func replaceFits(s, old, new string, max int) bool {
	n := strings.Count(s, old) // len(s)+1 when old is empty
	grow := len(new) - len(old)
	return grow <= 0 || n <= (max-len(s))/grow
}

// sandboxMethods are gonja's Python methods with the string ones that pad, expand or
// replace checked before they allocate.
func sandboxMethods() exec.Methods {
	names := []string{"capitalize", "capwords", "casefold", "center", "count", "encode",
		"endswith", "expandtabs", "find", "format", "format_map", "isalnum", "isalpha",
		"isascii", "isdecimal", "isdigit", "islower", "isnumeric", "isprintable", "isspace",
		"istitle", "isupper", "join", "ljust", "lower", "lstrip", "partition", "removeprefix",
		"removesuffix", "replace", "rfind", "rjust", "rpartition", "rsplit", "rstrip", "split",
		"splitlines", "startswith", "strip", "swapcase", "title", "upper", "zfill"}
	str := make(map[string]exec.Method[string], len(names))
	for _, name := range names {
		m, ok := builtins.Methods.Str.Get(name)
		if !ok {
			continue
		}
		var fits func(s string, va *exec.VarArgs, max int) bool
		switch name {
		case "expandtabs":
			fits = func(s string, va *exec.VarArgs, max int) bool {
				tab := 8
				if len(va.Args) > 0 && va.Args[0].IsInteger() {
					tab = va.Args[0].Integer()
				}
				return len(s)+strings.Count(s, "\t")*tab <= max
			}
		case "replace":
			fits = func(s string, va *exec.VarArgs, max int) bool {
				return len(va.Args) < 2 || replaceFits(s, va.Args[0].String(), va.Args[1].String(), max)
			}
		case "join":
			fits = func(s string, va *exec.VarArgs, max int) bool {
				return len(va.Args) == 0 || va.Args[0].Len()*len(s) <= max
			}
		case "format", "format_map":
			fits = func(s string, va *exec.VarArgs, max int) bool {
				n, ok := pyFormatBound(s, va.Args, va.KwArgs)
				return ok && n <= max && !bigWidth.MatchString(s)
			}
		}
		str[name] = sizedMethod(m, fits)
	}
	all := builtins.Methods
	all.Str = exec.NewMethodSet(str)
	all.List = sandboxListMethods()
	return all
}

func sizedMethod(m exec.Method[string], fits func(s string, va *exec.VarArgs, max int) bool) exec.Method[string] {
	return func(s string, self *exec.Value, va *exec.VarArgs) (any, error) {
		// Methods get no evaluator, so the guard is out of reach: the size limit here is
		// the default one, and the render is abandoned by a panic that Render recovers
		// (gonja rewrites a method's error into text that no longer wraps ErrLimit).
		if !smallInts(va) || (fits != nil && !fits(s, va, DefaultMaxOutput)) {
			panic(abort{fmt.Errorf("prompt: string method result would be bigger than %d bytes: %w", DefaultMaxOutput, ErrLimit)})
		}
		return m(s, self, va)
	}
}

// sandboxGlobals are the template's global functions.
func sandboxGlobals() *exec.Context {
	ctx := exec.NewContext(map[string]any{
		"range":           rangeFunc,
		"raise_exception": raiseException,
		"strftime_now":    strftimeNow,
		chkFunc:           guardChk,
		outFunc:           guardOut,
		mulFunc:           guardMul,
		powFunc:           guardPow,
		floorDivFunc:      guardFloorDiv,
		modFunc:           guardMod,
	})
	ctx.Set("namespace", namespaceFunc)
	for _, name := range []string{"dict", "cycler", "joiner"} {
		if f, ok := builtins.GlobalFunctions.Get(name); ok {
			ctx.Set(name, f)
		}
	}
	return ctx
}

// namespaceFunc is namespace(k=v, ...), with lists boxed as set boxes them, so that
// ns.l.append(x) changes ns.l.
func namespaceFunc(_ *exec.Evaluator, va *exec.VarArgs) map[string]any {
	ns := make(map[string]any, len(va.KwArgs))
	for k, v := range va.KwArgs {
		ns[k] = box(v.Interface())
	}
	return ns
}

// rangeFunc is Python's range, at most maxRange long.
func rangeFunc(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	start, stop, step := 0, 0, 1
	for _, a := range va.Args {
		if !a.IsInteger() {
			return exec.AsValue(fmt.Errorf("range arguments must be integers"))
		}
	}
	switch len(va.Args) {
	case 1:
		stop = va.Args[0].Integer()
	case 2, 3:
		start, stop = va.Args[0].Integer(), va.Args[1].Integer()
		if len(va.Args) == 3 {
			step = va.Args[2].Integer()
		}
	default:
		return exec.AsValue(fmt.Errorf("range takes 1 to 3 arguments"))
	}
	if step == 0 {
		return exec.AsValue(fmt.Errorf("range step must not be zero"))
	}
	n := 0
	if step > 0 && stop > start {
		n = int((int64(stop) - int64(start) + int64(step) - 1) / int64(step))
	} else if step < 0 && stop < start {
		n = int((int64(start) - int64(stop) - int64(step) - 1) / -int64(step))
	}
	if n > maxRange {
		if g := guardFrom(e.Environment.Context); g != nil {
			return exec.AsValue(g.limit("range of %d numbers, more than %d", n, maxRange))
		}
		return exec.AsValue(errNoGuard)
	}
	out := make([]int, n)
	for i := range out {
		out[i] = start + i*step
	}
	return exec.AsValue(out)
}

// raiseException is raise_exception(message): the render fails with message.
func raiseException(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	msg := ""
	if len(va.Args) > 0 {
		msg = va.Args[0].String()
	}
	err := fmt.Errorf("prompt: chat template raised an exception: %s", msg)
	if g := guardFrom(e.Environment.Context); g != nil {
		err = g.fail(err)
	}
	return exec.AsValue(err)
}

// strftimeNow is strftime_now(format): the render's clock formatted as Python's
// strftime does for the common directives.
func strftimeNow(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	now := time.Now()
	if g := guardFrom(e.Environment.Context); g != nil && !g.now.IsZero() {
		now = g.now
	}
	if len(va.Args) != 1 || !va.Args[0].IsString() {
		return exec.AsValue(fmt.Errorf("strftime_now takes one string argument"))
	}
	return exec.AsValue(strftime(now, va.Args[0].String()))
}

// strftime formats t per Python's time.strftime in the C locale.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'b', 'h':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'y':
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case 'Y':
			fmt.Fprintf(&b, "%d", t.Year())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'I':
			fmt.Fprintf(&b, "%02d", (t.Hour()+11)%12+1)
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

// normalizeJSON makes JSON-decoded values look like Python's json.loads output: whole
// numbers become int, other numbers float64.
func normalizeJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeJSON(e)
		}
		return out
	}
	return v
}
