package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
)

var valueReflectType = reflect.TypeFor[Value]()

// ValueOf converts a Go value to a metadata Value: uint8, int8, uint16, int16, uint32,
// int32, float32, bool, string, uint64, int64, float64 (or types defined on them), slices
// and arrays of those, slices of slices (nested arrays, e.g. [][]string), a Value, or a
// slice of Values of one type. Anything else (int, uint, maps, []any, ...) is an error.
func ValueOf(x any) (Value, error) {
	v, err := valueOfAny(x)
	if err != nil {
		return Value{}, fmt.Errorf("gguf: %w", err)
	}
	return v, nil
}

// valueOfAny is ValueOf with errors that do not start with "gguf: ".
func valueOfAny(x any) (Value, error) {
	switch x := x.(type) {
	case Value:
		if err := x.check(); err != nil {
			return Value{}, err
		}
		return x, nil
	case string:
		return Value{Type: TypeString, raw: []byte(x)}, nil
	case []string:
		raw := make([]byte, 0, 8*len(x))
		for _, s := range x {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(len(s)))
			raw = append(raw, s...)
		}
		return Value{Type: TypeArray, ElemType: TypeString, n: uint64(len(x)), raw: raw}, nil
	case []float32:
		raw := make([]byte, 0, 4*len(x))
		for _, f := range x {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
		}
		return Value{Type: TypeArray, ElemType: TypeFloat32, n: uint64(len(x)), raw: raw}, nil
	case []int32:
		raw := make([]byte, 0, 4*len(x))
		for _, i := range x {
			raw = binary.LittleEndian.AppendUint32(raw, uint32(i))
		}
		return Value{Type: TypeArray, ElemType: TypeInt32, n: uint64(len(x)), raw: raw}, nil
	}
	if x == nil {
		return Value{}, fmt.Errorf("nil has no GGUF type")
	}
	return valueOf(reflect.ValueOf(x), 0)
}

// scalarType maps a Go kind to its GGUF scalar type.
func scalarType(k reflect.Kind) (ValueType, bool) {
	switch k {
	case reflect.Uint8:
		return TypeUint8, true
	case reflect.Int8:
		return TypeInt8, true
	case reflect.Uint16:
		return TypeUint16, true
	case reflect.Int16:
		return TypeInt16, true
	case reflect.Uint32:
		return TypeUint32, true
	case reflect.Int32:
		return TypeInt32, true
	case reflect.Float32:
		return TypeFloat32, true
	case reflect.Bool:
		return TypeBool, true
	case reflect.String:
		return TypeString, true
	case reflect.Uint64:
		return TypeUint64, true
	case reflect.Int64:
		return TypeInt64, true
	case reflect.Float64:
		return TypeFloat64, true
	}
	return 0, false
}

func valueOf(rv reflect.Value, depth int) (Value, error) {
	if rv.Type() == valueReflectType {
		v := rv.Interface().(Value)
		return v, v.check()
	}
	k := rv.Kind()
	if t, ok := scalarType(k); ok {
		var raw []byte
		switch t {
		case TypeString:
			return Value{Type: t, raw: []byte(rv.String())}, nil
		case TypeBool:
			raw = []byte{0}
			if rv.Bool() {
				raw[0] = 1
			}
		case TypeFloat32:
			raw = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(rv.Float())))
		case TypeFloat64:
			raw = binary.LittleEndian.AppendUint64(nil, math.Float64bits(rv.Float()))
		default:
			size, _ := t.fixedSize()
			var u uint64
			if rv.CanUint() {
				u = rv.Uint()
			} else {
				u = uint64(rv.Int())
			}
			raw = binary.LittleEndian.AppendUint64(nil, u)[:size]
		}
		return Value{Type: t, raw: raw}, nil
	}
	if k != reflect.Slice && k != reflect.Array {
		return Value{}, fmt.Errorf("Go type %v has no GGUF type", rv.Type())
	}
	if depth >= maxNesting {
		return Value{}, fmt.Errorf("arrays nested more than %d deep", maxNesting)
	}
	et := rv.Type().Elem()
	var elem ValueType
	switch {
	case et == valueReflectType:
		if rv.Len() == 0 {
			return Value{}, fmt.Errorf("the element type of an empty []Value is unknown; use NewArray")
		}
		elem = rv.Index(0).Interface().(Value).Type
	case et.Kind() == reflect.Slice || et.Kind() == reflect.Array:
		elem = TypeArray
	default:
		t, ok := scalarType(et.Kind())
		if !ok {
			return Value{}, fmt.Errorf("Go type %v has no GGUF type", rv.Type())
		}
		elem = t
	}
	elems := make([]Value, rv.Len())
	for i := range elems {
		e, err := valueOf(rv.Index(i), depth+1)
		if err != nil {
			return Value{}, fmt.Errorf("element %d: %w", i, err)
		}
		elems[i] = e
	}
	return newArray(elem, elems)
}

// NewArray builds an array value whose elements, all of type elem, are elems. It is the
// way to build empty arrays of a given type and arrays of arrays.
func NewArray(elem ValueType, elems []Value) (Value, error) {
	v, err := newArray(elem, elems)
	if err != nil {
		return Value{}, fmt.Errorf("gguf: %w", err)
	}
	return v, nil
}

func newArray(elem ValueType, elems []Value) (Value, error) {
	if !elem.Valid() {
		return Value{}, fmt.Errorf("unknown array element type %v", elem)
	}
	var raw []byte
	for i, e := range elems {
		if e.Type != elem {
			return Value{}, fmt.Errorf("array element %d has type %s, want %v", i, e.TypeName(), elem)
		}
		if err := e.check(); err != nil {
			return Value{}, fmt.Errorf("array element %d: %w", i, err)
		}
		if e.depth() >= maxNesting {
			return Value{}, fmt.Errorf("arrays nested more than %d deep", maxNesting)
		}
		raw = appendPayload(raw, e)
	}
	if raw == nil {
		raw = []byte{}
	}
	return Value{Type: TypeArray, ElemType: elem, n: uint64(len(elems)), raw: raw}, nil
}

// depth is the number of array levels in v: 0 for scalars, 1 for a flat array.
func (v Value) depth() int {
	if v.Type != TypeArray {
		return 0
	}
	d := 0
	if v.ElemType == TypeArray {
		elems, _ := v.Array()
		for _, e := range elems {
			d = max(d, e.depth())
		}
	}
	return d + 1
}

// appendPayload appends the encoding of v without its type id: a scalar's bytes, a
// string's length and text, or an array's element type, count and elements.
func appendPayload(b []byte, v Value) []byte {
	switch v.Type {
	case TypeString:
		b = binary.LittleEndian.AppendUint64(b, uint64(len(v.raw)))
	case TypeArray:
		b = binary.LittleEndian.AppendUint32(b, uint32(v.ElemType))
		b = binary.LittleEndian.AppendUint64(b, v.n)
	}
	return append(b, v.raw...)
}

// check verifies that v is well formed, as the reader would: the zero Value, or one
// with a bad payload, is an error.
func (v Value) check() error {
	if size, ok := v.Type.fixedSize(); ok {
		if uint64(len(v.raw)) != size {
			return fmt.Errorf("malformed %v value (%d bytes, want %d); build Values with ValueOf", v.Type, len(v.raw), size)
		}
		if v.Type == TypeBool && v.raw[0] > 1 {
			return fmt.Errorf("bool value %d is neither 0 nor 1", v.raw[0])
		}
		return nil
	}
	switch v.Type {
	case TypeString:
		return nil
	case TypeArray:
		r := reader{b: v.raw}
		if err := r.elems(v.ElemType, v.n, 1); err != nil {
			return fmt.Errorf("malformed array value: %w", err)
		}
		if r.off != len(v.raw) {
			return fmt.Errorf("malformed array value: %d trailing bytes", len(v.raw)-r.off)
		}
		return nil
	}
	return fmt.Errorf("unknown value type %v", v.Type)
}

// Any returns v as a plain Go value, for printing and tests: the scalar (uint32, string,
// ...), a typed slice for arrays of scalars ([]float32, []string, ...), or []any for
// arrays of arrays. It returns nil for a malformed value.
func (v Value) Any() any {
	switch v.Type {
	case TypeString:
		s, _ := v.String()
		return s
	case TypeBool:
		b, _ := v.Bool()
		return b
	case TypeFloat32:
		f, _ := v.Float()
		return float32(f)
	case TypeFloat64:
		f, _ := v.Float()
		return f
	case TypeArray:
		return v.anyArray()
	}
	u, s, signed, ok := scalar(v.Type, v.raw)
	if !ok {
		return nil
	}
	if signed {
		switch v.Type {
		case TypeInt8:
			return int8(s)
		case TypeInt16:
			return int16(s)
		case TypeInt32:
			return int32(s)
		}
		return s
	}
	switch v.Type {
	case TypeUint8:
		return uint8(u)
	case TypeUint16:
		return uint16(u)
	case TypeUint32:
		return uint32(u)
	}
	return u
}

func (v Value) anyArray() any {
	elems, ok := v.Array()
	if !ok {
		return nil
	}
	if v.ElemType == TypeArray {
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i] = e.Any()
		}
		return out
	}
	t, _ := goType(v.ElemType)
	out := reflect.MakeSlice(reflect.SliceOf(t), len(elems), len(elems))
	for i, e := range elems {
		out.Index(i).Set(reflect.ValueOf(e.Any()))
	}
	return out.Interface()
}

// goType is the Go type Any uses for a scalar of type t.
func goType(t ValueType) (reflect.Type, bool) {
	switch t {
	case TypeUint8:
		return reflect.TypeFor[uint8](), true
	case TypeInt8:
		return reflect.TypeFor[int8](), true
	case TypeUint16:
		return reflect.TypeFor[uint16](), true
	case TypeInt16:
		return reflect.TypeFor[int16](), true
	case TypeUint32:
		return reflect.TypeFor[uint32](), true
	case TypeInt32:
		return reflect.TypeFor[int32](), true
	case TypeFloat32:
		return reflect.TypeFor[float32](), true
	case TypeBool:
		return reflect.TypeFor[bool](), true
	case TypeString:
		return reflect.TypeFor[string](), true
	case TypeUint64:
		return reflect.TypeFor[uint64](), true
	case TypeInt64:
		return reflect.TypeFor[int64](), true
	case TypeFloat64:
		return reflect.TypeFor[float64](), true
	}
	return nil, false
}
