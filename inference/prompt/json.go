package prompt

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// maxJSONIndent bounds tojson's indent: real templates use 2 or 4.
const maxJSONIndent = 32

// filterToJSON is the tojson filter as Hugging Face's chat template environment defines
// it: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False),
// so ", " and ": " separate items and keys without indent, "," and ": " with it. Dicts
// built in the template keep their order; Go maps have no order and come out sorted.
func filterToJSON(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
	g := guardFrom(e.Environment.Context)
	if g == nil {
		return exec.AsValue(errNoGuard)
	}
	j := jsonWriter{itemSep: ", ", keySep: ": ", max: g.maxOutput}
	if v, ok := va.KwArgs["indent"]; ok && !v.IsNil() {
		switch {
		case v.IsInteger() && v.Integer() >= 0 && v.Integer() <= maxJSONIndent:
			j.indent = strings.Repeat(" ", v.Integer())
		case v.IsString() && len(v.String()) <= maxJSONIndent:
			j.indent = v.String()
		default:
			return exec.AsValue(g.limit("tojson indent must be an integer from 0 to %d or a short string", maxJSONIndent))
		}
		j.indented, j.itemSep = true, ","
	}
	if v, ok := va.KwArgs["ensure_ascii"]; ok {
		j.ascii = v.IsTrue()
	}
	if v, ok := va.KwArgs["sort_keys"]; ok {
		j.sortKeys = v.IsTrue()
	}
	if v, ok := va.KwArgs["separators"]; ok && !v.IsNil() {
		if !v.IsList() || v.Len() != 2 {
			return exec.AsValue(fmt.Errorf("tojson: separators must be a pair of strings"))
		}
		j.itemSep, j.keySep = v.Index(0).String(), v.Index(1).String()
	}
	if err := j.value(reflect.ValueOf(in.Interface()), 0); err != nil {
		return exec.AsValue(g.fail(fmt.Errorf("prompt: tojson: %w", err)))
	}
	return exec.AsValue(j.b.String())
}

type jsonWriter struct {
	b               strings.Builder
	indent          string
	indented        bool
	itemSep, keySep string
	ascii, sortKeys bool
	max             int // bytes
}

func (j *jsonWriter) newline(depth int) {
	if j.indented {
		j.b.WriteByte('\n')
		for range depth {
			j.b.WriteString(j.indent)
		}
	}
}

func (j *jsonWriter) value(v reflect.Value, depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("value nested deeper than %d: %w", maxNesting, ErrLimit)
	}
	if j.b.Len() > j.max {
		return fmt.Errorf("output bigger than %d bytes: %w", j.max, ErrLimit)
	}
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) {
		if v.IsNil() {
			j.b.WriteString("null")
			return nil
		}
		if ev, ok := v.Interface().(*exec.Value); ok {
			v = ev.Val
			continue
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		j.b.WriteString("null")
		return nil
	}
	switch v.Kind() {
	case reflect.Bool:
		j.b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		j.b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		j.b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		j.b.WriteString(pyFloat(v.Float()))
	case reflect.String:
		j.str(v.String())
	case reflect.Slice, reflect.Array:
		return j.list(v, depth)
	case reflect.Map:
		keys := make([]string, 0, v.Len())
		vals := make(map[string]reflect.Value, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := fmt.Sprint(it.Key().Interface())
			keys = append(keys, k)
			vals[k] = it.Value()
		}
		slices.Sort(keys)
		return j.object(keys, func(k string) reflect.Value { return vals[k] }, depth)
	case reflect.Struct:
		if v.Type() != exec.TypeDict || !v.CanInterface() {
			return fmt.Errorf("cannot encode %s as JSON", v.Type())
		}
		d := v.Interface().(exec.Dict)
		keys := make([]string, len(d.Pairs))
		vals := make(map[string]reflect.Value, len(d.Pairs))
		for i, p := range d.Pairs {
			keys[i] = p.Key.String()
			vals[keys[i]] = reflect.ValueOf(p.Value)
		}
		if j.sortKeys {
			slices.Sort(keys)
		}
		return j.object(keys, func(k string) reflect.Value { return vals[k] }, depth)
	default:
		return fmt.Errorf("cannot encode %s as JSON", v.Type())
	}
	return nil
}

func (j *jsonWriter) list(v reflect.Value, depth int) error {
	if v.Len() == 0 {
		j.b.WriteString("[]")
		return nil
	}
	j.b.WriteByte('[')
	for i := 0; i < v.Len(); i++ {
		if i > 0 {
			j.b.WriteString(j.itemSep)
		}
		j.newline(depth + 1)
		if err := j.value(v.Index(i), depth+1); err != nil {
			return err
		}
	}
	j.newline(depth)
	j.b.WriteByte(']')
	return nil
}

func (j *jsonWriter) object(keys []string, get func(string) reflect.Value, depth int) error {
	if len(keys) == 0 {
		j.b.WriteString("{}")
		return nil
	}
	j.b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			j.b.WriteString(j.itemSep)
		}
		j.newline(depth + 1)
		j.str(k)
		j.b.WriteString(j.keySep)
		if err := j.value(get(k), depth+1); err != nil {
			return err
		}
	}
	j.newline(depth)
	j.b.WriteByte('}')
	return nil
}

// str writes s quoted as Python's json module does.
func (j *jsonWriter) str(s string) {
	j.b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			j.b.WriteString(`\"`)
		case '\\':
			j.b.WriteString(`\\`)
		case '\n':
			j.b.WriteString(`\n`)
		case '\r':
			j.b.WriteString(`\r`)
		case '\t':
			j.b.WriteString(`\t`)
		case '\b':
			j.b.WriteString(`\b`)
		case '\f':
			j.b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(&j.b, `\u%04x`, r)
			case j.ascii && r > 0x7f:
				if r > 0xffff {
					r -= 0x10000
					fmt.Fprintf(&j.b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				} else {
					fmt.Fprintf(&j.b, `\u%04x`, r)
				}
			default:
				j.b.WriteRune(r)
			}
		}
	}
	j.b.WriteByte('"')
}

// pyFloat formats f as Python's repr(float) (and so json.dumps) does.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX, shortest round trip
	_, exps, _ := strings.Cut(s, "e")
	if exp, _ := strconv.Atoi(exps); exp < -4 || exp >= 16 {
		return s // Python's layout too: 1e+16, 1.5e-07
	}
	s = strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
