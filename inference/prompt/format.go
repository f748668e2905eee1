package prompt

import (
	"math"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// The format filter (Go's fmt.Sprintf) and the format/format_map string methods (Python's
// str.format) build their whole result before the sandbox sees it, and a short format
// string can ask for a huge one: every directive pads to its width, and may print the
// same argument again ("%[1]*[2]d" or "{0:>99999}" repeated ten thousand times is a
// gigabyte). The bounds below are computed from the format string and the arguments
// before the call, and are generous: they only need to stay within a small factor of
// the true size.

// Each directive (or replacement field) is charged, beyond its width and precision, up
// to reprFactor times the longest argument (quoting and escaping: %q, !r) and
// formatSlack bytes (a float64 printed with %f has up to 309 digits; fmt's error notes).
const (
	reprFactor    = 10
	formatSlack   = 400
	saturatedSize = math.MaxInt / 4 // sums stop growing here, so they cannot overflow
)

// argSizes returns the length of the longest argument's text, the largest magnitude of
// an integer argument, and the text length of all arguments together.
func argSizes(args []*exec.Value, kwargs map[string]*exec.Value) (longest, biggestInt, all int) {
	add := func(a *exec.Value) {
		n := len(a.String())
		longest = max(longest, n)
		all = satAdd(all, n)
		if a.IsInteger() {
			biggestInt = max(biggestInt, min(absInt(a.Integer()), saturatedSize))
		}
	}
	for _, a := range args {
		add(a)
	}
	for _, a := range kwargs {
		add(a)
	}
	return longest, biggestInt, all
}

// goFormatBound is an upper bound on len(fmt.Sprintf(format, args...)): the format's own
// bytes, fmt's %!(EXTRA ...) and %!v(BADINDEX) notes, and for each '%' a directive of the
// longest argument. Widths and precisions are digit runs of the format or '*' (an
// integer argument), each used by one directive at most, so all of them are added up
// whatever fmt makes of the text around them.
func goFormatBound(format string, args []*exec.Value) int {
	longest, biggestInt, all := argSizes(args, nil)
	total := satAdd(len(format), satMul(reprFactor, all))
	total = satAdd(total, satMul(formatSlack, len(args)))
	total = satAdd(total, digitSum(format))
	total = satAdd(total, satMul(strings.Count(format, "*"), biggestInt))
	return satAdd(total, satMul(strings.Count(format, "%"), satAdd(satMul(reprFactor, longest), formatSlack)))
}

// pyFormatBound is an upper bound on the length of Python's format(*args, **kwargs) of
// format, counted as goFormatBound counts, and ok is false for a replacement field with a
// nested one in its format spec ("{0:{1}}"): nested fields are pasted together into the
// spec, so a few digits of arguments can ask for any width ("{0:{1}{1}{1}{1}{1}{1}}"
// with 9).
func pyFormatBound(format string, args []*exec.Value, kwargs map[string]*exec.Value) (size int, ok bool) {
	for i := 0; i < len(format); i++ {
		if format[i] != '{' {
			continue
		}
		if i+1 < len(format) && format[i+1] == '{' {
			i++ // "{{" prints "{"
			continue
		}
		for i++; i < len(format) && format[i] != '}'; i++ {
			if format[i] == '{' {
				return 0, false
			}
		}
	}
	longest, _, _ := argSizes(args, kwargs)
	total := satAdd(len(format), digitSum(format))
	return satAdd(total, satMul(strings.Count(format, "{"), satAdd(satMul(reprFactor, longest), formatSlack))), true
}

// digitSum is the sum of the values of all runs of decimal digits in s, saturating.
func digitSum(s string) int {
	sum := 0
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			var n int
			n, i = digitsAt(s, i)
			sum = satAdd(sum, n)
		}
	}
	return sum
}

// digitsAt parses the run of decimal digits at s[i:], saturating, and returns its value
// and the index just past it.
func digitsAt(s string, i int) (n, end int) {
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		n = satAdd(satMul(n, 10), int(s[i]-'0'))
	}
	return n, i
}

func satAdd(a, b int) int { return min(a+min(b, saturatedSize), saturatedSize) }

func satMul(a, b int) int {
	if a != 0 && b > saturatedSize/a {
		return saturatedSize
	}
	return min(a*b, saturatedSize)
}

func absInt(x int) int {
	if x < 0 {
		if x == math.MinInt {
			return math.MaxInt
		}
		return -x
	}
	return x
}

// scalarArgs wraps the format filter so that it gets lists, dicts and any other
// non-scalar argument as their text (Python's str, which is what the % operator the
// filter stands for would print): fmt applies a directive's width to every element of a
// slice or map, so "%99999d" of a list of a hundred thousand numbers would make ten
// gigabytes.
func scalarArgs(f exec.FilterFunction) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, va *exec.VarArgs) *exec.Value {
		return f(e, in, &exec.VarArgs{Args: scalars(va.Args), KwArgs: va.KwArgs})
	}
}

// scalars returns args with every argument that is not a string, number, bool or none
// replaced by its text.
func scalars(args []*exec.Value) []*exec.Value {
	out := make([]*exec.Value, len(args))
	for i, a := range args {
		if a.IsString() || a.IsNumber() || a.IsBool() || a.IsNil() {
			out[i] = a
		} else {
			out[i] = exec.AsValue(a.String())
		}
	}
	return out
}
