package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ValueType is the type id of a metadata value, exactly as stored in the file.
type ValueType uint32

// The GGUF metadata value types.
const (
	TypeUint8 ValueType = iota
	TypeInt8
	TypeUint16
	TypeInt16
	TypeUint32
	TypeInt32
	TypeFloat32
	TypeBool
	TypeString
	TypeArray
	TypeUint64
	TypeInt64
	TypeFloat64
)

var valueTypeNames = [...]string{
	TypeUint8: "uint8", TypeInt8: "int8", TypeUint16: "uint16", TypeInt16: "int16",
	TypeUint32: "uint32", TypeInt32: "int32", TypeFloat32: "float32", TypeBool: "bool",
	TypeString: "string", TypeArray: "array", TypeUint64: "uint64", TypeInt64: "int64",
	TypeFloat64: "float64",
}

// String is the GGUF name of the type ("uint32"), or "type(N)" for an unknown id.
func (t ValueType) String() string {
	if t.Valid() {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Valid reports whether t is one of the thirteen GGUF value types.
func (t ValueType) Valid() bool { return t <= TypeFloat64 }

// fixedSize is the encoded size in bytes of a scalar of type t; ok is false for strings,
// arrays and unknown ids.
func (t ValueType) fixedSize() (size uint64, ok bool) {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1, true
	case TypeUint16, TypeInt16:
		return 2, true
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4, true
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8, true
	}
	return 0, false
}

// minSize is the smallest number of bytes one encoded value of type t can take as an
// array element: its fixed size, a string's length field, or a nested array's header.
func (t ValueType) minSize() (uint64, bool) {
	if s, ok := t.fixedSize(); ok {
		return s, true
	}
	switch t {
	case TypeString:
		return 8, true
	case TypeArray:
		return 4 + 8, true
	}
	return 0, false
}

func (t ValueType) isInteger() bool {
	switch t {
	case TypeUint8, TypeInt8, TypeUint16, TypeInt16, TypeUint32, TypeInt32, TypeUint64, TypeInt64:
		return true
	}
	return false
}

// Value is one metadata value of any type, arrays (also nested) included. It holds the
// value in its little-endian file encoding: values read from a File alias the file's
// metadata, values made by ValueOf or NewArray own their bytes. Values are immutable.
// The zero Value is not valid; build Values with ValueOf or NewArray.
type Value struct {
	Type     ValueType // the value's type
	ElemType ValueType // for arrays: the type of every element; 0 otherwise

	n   uint64 // arrays: element count
	raw []byte // scalars: the value's bytes; strings: the text; arrays: the encoded elements
}

// Len is the number of elements of an array value, 0 for anything else.
func (v Value) Len() int {
	if v.Type != TypeArray || v.n > math.MaxInt {
		return 0
	}
	return int(v.n)
}

// TypeName describes the type of v, with the element type for arrays ("array of string").
func (v Value) TypeName() string {
	if v.Type == TypeArray {
		return "array of " + v.ElemType.String()
	}
	return v.Type.String()
}

// Equal reports whether v and o have the same type and the same encoded contents.
func (v Value) Equal(o Value) bool {
	return v.Type == o.Type && v.ElemType == o.ElemType && v.n == o.n && string(v.raw) == string(o.raw)
}

// String returns the value of a string.
func (v Value) String() (string, bool) {
	if v.Type != TypeString {
		return "", false
	}
	return string(v.raw), true
}

// Bool returns the value of a bool.
func (v Value) Bool() (bool, bool) {
	if v.Type != TypeBool || len(v.raw) != 1 || v.raw[0] > 1 {
		return false, false
	}
	return v.raw[0] == 1, true
}

// scalar decodes an integer of type t from b: u for unsigned types, s for signed ones.
func scalar(t ValueType, b []byte) (u uint64, s int64, signed, ok bool) {
	size, fixed := t.fixedSize()
	if !fixed || !t.isInteger() || uint64(len(b)) < size {
		return 0, 0, false, false
	}
	switch t {
	case TypeUint8:
		return uint64(b[0]), 0, false, true
	case TypeInt8:
		return 0, int64(int8(b[0])), true, true
	case TypeUint16:
		return uint64(binary.LittleEndian.Uint16(b)), 0, false, true
	case TypeInt16:
		return 0, int64(int16(binary.LittleEndian.Uint16(b))), true, true
	case TypeUint32:
		return uint64(binary.LittleEndian.Uint32(b)), 0, false, true
	case TypeInt32:
		return 0, int64(int32(binary.LittleEndian.Uint32(b))), true, true
	case TypeUint64:
		return binary.LittleEndian.Uint64(b), 0, false, true
	default: // TypeInt64
		return 0, int64(binary.LittleEndian.Uint64(b)), true, true
	}
}

// Uint returns the value of any integer type that is not negative.
func (v Value) Uint() (uint64, bool) {
	u, s, signed, ok := scalar(v.Type, v.raw)
	if !ok || (signed && s < 0) {
		return 0, false
	}
	if signed {
		return uint64(s), true
	}
	return u, true
}

// Int returns the value of any integer type that fits in an int64.
func (v Value) Int() (int64, bool) {
	u, s, signed, ok := scalar(v.Type, v.raw)
	if !ok || (!signed && u > math.MaxInt64) {
		return 0, false
	}
	if signed {
		return s, true
	}
	return int64(u), true
}

// Float returns the value of a float32 or float64, or of any integer (converted, which
// may round for integers beyond 2^53).
func (v Value) Float() (float64, bool) {
	switch {
	case v.Type == TypeFloat32 && len(v.raw) == 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(v.raw))), true
	case v.Type == TypeFloat64 && len(v.raw) == 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(v.raw)), true
	}
	u, s, signed, ok := scalar(v.Type, v.raw)
	if !ok {
		return 0, false
	}
	if signed {
		return float64(s), true
	}
	return float64(u), true
}

// Array returns the elements of an array as Values (nested arrays included). The
// elements alias v's bytes.
func (v Value) Array() ([]Value, bool) {
	if v.Type != TypeArray {
		return nil, false
	}
	least, ok := v.ElemType.minSize()
	if !ok || v.n > uint64(len(v.raw))/least {
		return nil, false
	}
	out := make([]Value, 0, v.n)
	b := v.raw
	for range v.n {
		e, rest, ok := splitElem(v.ElemType, b)
		if !ok {
			return nil, false
		}
		out = append(out, e)
		b = rest
	}
	return out, len(b) == 0
}

// splitElem splits the first encoded element of type t off b. It trusts no length: a
// malformed b gives ok == false.
func splitElem(t ValueType, b []byte) (e Value, rest []byte, ok bool) {
	if size, fixed := t.fixedSize(); fixed {
		if uint64(len(b)) < size {
			return Value{}, nil, false
		}
		return Value{Type: t, raw: b[:size:size]}, b[size:], true
	}
	switch t {
	case TypeString:
		if len(b) < 8 {
			return Value{}, nil, false
		}
		n := binary.LittleEndian.Uint64(b)
		if n > uint64(len(b)-8) {
			return Value{}, nil, false
		}
		end := 8 + int(n)
		return Value{Type: t, raw: b[8:end:end]}, b[end:], true
	case TypeArray:
		if len(b) < 12 {
			return Value{}, nil, false
		}
		et := ValueType(binary.LittleEndian.Uint32(b))
		n := binary.LittleEndian.Uint64(b[4:])
		r := reader{b: b, off: 12}
		if err := r.elems(et, n, 1); err != nil {
			return Value{}, nil, false
		}
		return Value{Type: TypeArray, ElemType: et, n: n, raw: b[12:r.off:r.off]}, b[r.off:], true
	}
	return Value{}, nil, false
}

// fixedElems checks that v is an array whose element type satisfies want, and whose
// fixed-size elements fill raw exactly; size is the element size.
func (v Value) fixedElems(want func(ValueType) bool) (size int, ok bool) {
	if v.Type != TypeArray || !want(v.ElemType) {
		return 0, false
	}
	s, _ := v.ElemType.fixedSize()
	if s == 0 || uint64(len(v.raw))/s != v.n || uint64(len(v.raw))%s != 0 {
		return 0, false
	}
	return int(s), true
}

// Strings returns the elements of an array of strings.
func (v Value) Strings() ([]string, bool) {
	if v.Type != TypeArray || v.ElemType != TypeString || v.n > uint64(len(v.raw))/8 {
		return nil, false
	}
	out := make([]string, 0, v.n)
	b := v.raw
	for range v.n {
		e, rest, ok := splitElem(TypeString, b)
		if !ok {
			return nil, false
		}
		out = append(out, string(e.raw))
		b = rest
	}
	return out, len(b) == 0
}

// Float32s returns the elements of an array of float32.
func (v Value) Float32s() ([]float32, bool) {
	if _, ok := v.fixedElems(func(t ValueType) bool { return t == TypeFloat32 }); !ok {
		return nil, false
	}
	out := make([]float32, v.n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(v.raw[4*i:]))
	}
	return out, true
}

// integers calls put for each element of an integer array, stopping at the first false.
func (v Value) integers(put func(i int, u uint64, s int64, signed bool) bool) bool {
	size, ok := v.fixedElems(ValueType.isInteger)
	if !ok {
		return false
	}
	for i := 0; i < int(v.n); i++ {
		u, s, signed, _ := scalar(v.ElemType, v.raw[i*size:])
		if !put(i, u, s, signed) {
			return false
		}
	}
	return true
}

// Int32s returns the elements of an array of any integer type, if all fit in an int32.
func (v Value) Int32s() ([]int32, bool) {
	var out []int32
	ok := v.integers(func(i int, u uint64, s int64, signed bool) bool {
		if out == nil {
			out = make([]int32, v.n)
		}
		if !signed {
			if u > math.MaxInt32 {
				return false
			}
			s = int64(u)
		}
		if s < math.MinInt32 || s > math.MaxInt32 {
			return false
		}
		out[i] = int32(s)
		return true
	})
	if !ok {
		return nil, false
	}
	if out == nil {
		out = []int32{}
	}
	return out, true
}

// Uint32s returns the elements of an array of any integer type, if all fit in a uint32.
func (v Value) Uint32s() ([]uint32, bool) {
	var out []uint32
	ok := v.integers(func(i int, u uint64, s int64, signed bool) bool {
		if out == nil {
			out = make([]uint32, v.n)
		}
		if signed {
			if s < 0 {
				return false
			}
			u = uint64(s)
		}
		if u > math.MaxUint32 {
			return false
		}
		out[i] = uint32(u)
		return true
	})
	if !ok {
		return nil, false
	}
	if out == nil {
		out = []uint32{}
	}
	return out, true
}
