package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// Hand-checked activation quantizer outputs. The inputs are chosen so every step is
// exact and can be followed on paper: amax 127 gives d = 1 and id = 1, amax 254 gives
// d = 2 and id = 0.5, so the quants are C's roundf (ties away from zero) of x or x/2
// for Q8_0/Q8_1, and nearest_int (ties to even) of +-x for Q8_K.

// block builds raw bytes: a little-endian u16/u32 header followed by signed quants.
func q8Bytes(header []uint16, qs []int8, n int) []byte {
	b := make([]byte, 0, 2*len(header)+n)
	for _, h := range header {
		b = binary.LittleEndian.AppendUint16(b, h)
	}
	q := make([]byte, n)
	for i, v := range qs {
		q[i] = byte(v)
	}
	return append(b, q...)
}

func pad(n int, xs ...float32) []float32 {
	out := make([]float32, n)
	copy(out, xs)
	return out
}

func TestQ8_0Q8_1HandChecked(t *testing.T) {
	// Block A: amax 127 -> d = 1 (f16 0x3c00), q = roundf(x).
	a := pad(32, 127, -0.5, 0.5, 1.5, 2.5, -2.5, 126.5, -126.5, 3.49)
	aq := []int8{127, -1, 1, 2, 3, -3, 127, -127, 3}
	// Block B: amax 254 -> d = 2 (0x4000), q = roundf(x/2).
	b := pad(32, -254, 3, 5, -1, 0.9)
	bq := []int8{-127, 2, 3, -1, 0}
	// Block C: all zero -> d = 0, q = 0.
	c := pad(32)
	src := append(append(append([]float32{}, a...), b...), c...)

	want0 := append(append(q8Bytes([]uint16{0x3c00}, aq, 32), q8Bytes([]uint16{0x4000}, bq, 32)...),
		q8Bytes([]uint16{0}, nil, 32)...)
	got0 := make([]byte, 3*34)
	if err := Quantize(Q8_0, src, got0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got0, want0) {
		t.Errorf("Q8_0:\n got %x\nwant %x", got0, want0)
	}

	// Q8_1 adds s = d*sum(q): A: sum 132 -> 132 = 0x5820; B: sum -123, s = -246 = 0xdbb0.
	want1 := append(append(q8Bytes([]uint16{0x3c00, 0x5820}, aq, 32), q8Bytes([]uint16{0x4000, 0xdbb0}, bq, 32)...),
		q8Bytes([]uint16{0, 0}, nil, 32)...)
	got1 := make([]byte, 3*36)
	if err := Quantize(Q8_1, src, got1); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got1, want1) {
		t.Errorf("Q8_1:\n got %x\nwant %x", got1, want1)
	}
}

func q8KBlock(d float32, qs []int8, bsums [16]int16) []byte {
	b := binary.LittleEndian.AppendUint32(nil, math.Float32bits(d))
	q := make([]byte, QK_K)
	for i, v := range qs {
		q[i] = byte(v)
	}
	b = append(b, q...)
	for _, s := range bsums {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}

func TestQ8_KHandChecked(t *testing.T) {
	// Block A: the largest magnitude is negative (-127), so iscale = -127/-127 = 1 and
	// d = 1; q = nearest_int(x), ties to even.
	a := pad(QK_K, -127, 0.5, 1.5, 2.5, -0.5, -1.5, 3.5, 126.6)
	a[20] = 10
	aq := make([]int8, 21)
	copy(aq, []int8{-127, 0, 2, 2, 0, -2, 4, 127})
	aq[20] = 10
	// Block B: the largest magnitude is positive (127), so iscale = -1 and d = -1:
	// Q8_K stores the quants negated.
	b := pad(QK_K, 127, 2.5, -3.5)
	b[255] = -4.5
	bq := make([]int8, QK_K)
	copy(bq, []int8{-127, -2, 4})
	bq[255] = 4
	// Block C: zero.
	c := pad(QK_K)
	src := append(append(append([]float32{}, a...), b...), c...)

	want := append(append(
		q8KBlock(1, aq, [16]int16{-127 + 0 + 2 + 2 + 0 - 2 + 4 + 127, 10}),
		q8KBlock(-1, bq, [16]int16{-127 - 2 + 4, 15: 4})...),
		q8KBlock(0, nil, [16]int16{})...)
	got := make([]byte, 3*292)
	if err := Quantize(Q8_K, src, got); err != nil {
		t.Fatal(err)
	}
	for ib := 0; ib < 3; ib++ {
		g, w := got[ib*292:ib*292+292], want[ib*292:ib*292+292]
		if !bytes.Equal(g, w) {
			t.Errorf("Q8_K block %d: %s", ib, firstDiff(Q8_K, g, w))
		}
	}
	// And it decodes to d*q.
	deq := make([]float32, 3*QK_K)
	if err := Dequantize(Q8_K, got, deq); err != nil {
		t.Fatal(err)
	}
	if deq[0] != -127 || deq[2] != 2 || deq[QK_K] != 127 || deq[QK_K+2] != -4 || deq[2*QK_K-1] != -4 {
		t.Errorf("Q8_K dequantized: %v ... %v", deq[:8], deq[QK_K:QK_K+3])
	}
}

// TestQ8_0IdFromFloat32Scale pins a detail of quantize_row_q8_0_ref: id = 1/d uses the
// float32 d, not the f16-rounded one stored in the block. With amax = 1, d = 1/127 is
// stored as f16 0x2008 (0.00787353515625); x = 0.49998 gives x*id = 63.4975 with the
// float32 d but 63.5014 with the f16 one, so the quant is 63, not 64.
func TestQ8_0IdFromFloat32Scale(t *testing.T) {
	src := pad(32, 1, 0.49998)
	got := make([]byte, 34)
	if err := Quantize(Q8_0, src, got); err != nil {
		t.Fatal(err)
	}
	if h := binary.LittleEndian.Uint16(got); h != 0x2008 {
		t.Errorf("d = %#04x, want 0x2008", h)
	}
	if q := int8(got[3]); q != 63 {
		t.Errorf("q[1] = %d, want 63", q)
	}
	if q := int8(got[2]); q != 127 {
		t.Errorf("q[0] = %d, want 127", q)
	}
}
