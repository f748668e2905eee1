package prompt

import (
	"errors"
	"fmt"
	"math"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// Python's // and % in templates. gonja truncates a // b toward zero, takes a % b of
// integers only (a float's fraction dropped, the result's sign the dividend's, a zero
// divisor a Go panic) and has no %-formatting of strings. The rewriter turns a // b into
// __ember_floordiv(a, b) and a % b into __ember_mod(a, b): floor division and a modulo
// with the divisor's sign, as Python computes them, ZeroDivisionError's text for a zero
// divisor, and a string % args formatted as the format filter formats it (each item of a
// list or tuple an argument, as Python's % takes a tuple).

const (
	floorDivFunc = "__ember_floordiv" // __ember_floordiv(a, b): Python's a // b
	modFunc      = "__ember_mod"      // __ember_mod(a, b): Python's a % b
)

var errZeroDivision = errors.New("prompt: integer division or modulo by zero")

// arithArgs are a two-operand helper's operands, or an error for another count.
func arithArgs(name string, va *exec.VarArgs) (a, b *exec.Value, err error) {
	if len(va.Args) != 2 {
		return nil, nil, fmt.Errorf("%s takes two arguments", name)
	}
	return va.Args[0], va.Args[1], nil
}

// floorDivInt is Python's x // y for y != 0 (the most negative int64 // -1 wraps, as
// Go's division does, where Python's would grow).
func floorDivInt(x, y int64) int64 {
	q := x / y
	if x%y != 0 && (x < 0) != (y < 0) {
		q--
	}
	return q
}

// modInt is Python's x % y for y != 0: zero or the sign of y.
func modInt(x, y int64) int64 {
	r := x % y
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return r
}

// modFloat is Python's float x % y for y != 0.
func modFloat(x, y float64) float64 {
	r := math.Mod(x, y)
	if r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return r
}

// guardFloorDiv implements __ember_floordiv.
func guardFloorDiv(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	a, b, err := arithArgs(floorDivFunc, va)
	if err != nil {
		return exec.AsValue(err)
	}
	return divide(a, b, "//", "floor division", floorDivInt, func(x, y float64) float64 { return math.Floor(x / y) })
}

// guardMod implements __ember_mod.
func guardMod(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	a, b, err := arithArgs(modFunc, va)
	if err != nil {
		return exec.AsValue(err)
	}
	if a.IsString() {
		format, ok := e.Environment.Filters.Get("format")
		if !ok {
			return exec.AsValue(errors.New("prompt: no format filter for string %"))
		}
		args := []*exec.Value{b}
		if b.IsList() {
			args = args[:0]
			for i := 0; i < b.Len(); i++ {
				args = append(args, b.Index(i))
			}
		}
		return format(e, a, &exec.VarArgs{Args: args, KwArgs: map[string]*exec.Value{}})
	}
	return divide(a, b, "%", "modulo", modInt, modFloat)
}

// divide is a op b for numbers, as Python computes it: ints (fi, for b != 0) stay ints,
// else floats (ff, for b != 0); a zero divisor or another operand type is an error
// (what names the float operation in ZeroDivisionError's text).
func divide(a, b *exec.Value, op, what string, fi func(x, y int64) int64, ff func(x, y float64) float64) *exec.Value {
	if !a.IsNumber() || !b.IsNumber() {
		return exec.AsValue(fmt.Errorf("prompt: unsupported operand types for %s: %s and %s", op, kind(a), kind(b)))
	}
	if a.IsInteger() && b.IsInteger() {
		if b.Integer() == 0 {
			return exec.AsValue(errZeroDivision)
		}
		return exec.AsValue(int(fi(int64(a.Integer()), int64(b.Integer()))))
	}
	if b.Float() == 0 {
		return exec.AsValue(fmt.Errorf("prompt: float %s by zero", what))
	}
	return exec.AsValue(ff(a.Float(), b.Float()))
}

// kind names a value's type for an error, as Python would.
func kind(v *exec.Value) string {
	switch {
	case v.IsNil():
		return "NoneType"
	case v.IsBool():
		return "bool"
	case v.IsInteger():
		return "int"
	case v.IsFloat():
		return "float"
	case v.IsString():
		return "str"
	case v.IsList():
		return "list"
	case v.IsDict():
		return "dict"
	}
	return "object"
}
