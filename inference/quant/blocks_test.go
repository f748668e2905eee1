package quant

import (
	"encoding/binary"
	"testing"
)

// Hand-built blocks: each test packs known quants and scales into the bytes exactly as
// the layout comments in ggml-common.h / dequantize_row_* describe them, and checks that
// Dequantize gives back d*scale*q (- dmin*min). All chosen values are small integers
// times powers of two, so every expected float is exact. A wrong nibble order, bit
// position or scale packing changes some element.

func le16b(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }

func checkDequant(t *testing.T, typ Type, blk []byte, want func(i int) float32) {
	t.Helper()
	if len(blk) != typ.TypeSize() {
		t.Fatalf("%v: built %d bytes, want %d", typ, len(blk), typ.TypeSize())
	}
	got := make([]float32, typ.BlockSize())
	if err := Dequantize(typ, blk, got); err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if w := want(i); g != w {
			t.Fatalf("%v element %d = %g, want %g", typ, i, g, w)
		}
	}
}

func TestDequantHandBuiltLegacy(t *testing.T) {
	// Q4_0: d = 0.5; byte j = lo j | hi 15-j: element j = 0.5*(j-8), element j+16 = 0.5*(15-j-8).
	blk := le16b(0x3800)
	for j := 0; j < 16; j++ {
		blk = append(blk, byte(j|(15-j)<<4))
	}
	checkDequant(t, Q4_0, blk, func(i int) float32 {
		if i < 16 {
			return 0.5 * float32(i-8)
		}
		return 0.5 * float32(15-(i-16)-8)
	})

	// Q4_1: d = 0.25, m = -1.
	blk = append(le16b(0x3400), le16b(0xbc00)...)
	for j := 0; j < 16; j++ {
		blk = append(blk, byte(j|(15-j)<<4))
	}
	checkDequant(t, Q4_1, blk, func(i int) float32 {
		q := i
		if i >= 16 {
			q = 15 - (i - 16)
		}
		return 0.25*float32(q) - 1
	})

	// Q5_0 / Q5_1: the fifth bit of element i is bit i of qh (elements j and j+16 share
	// byte j of qs). qh = 0xa5a5f00f.
	const qh = 0xa5a5f00f
	q5 := func(i int) int {
		nib := i % 16
		if i >= 16 {
			nib = 15 - (i - 16)
		}
		return nib | int(qh>>uint(i)&1)<<4
	}
	qs := make([]byte, 16)
	for j := range qs {
		qs[j] = byte(j | (15-j)<<4)
	}
	blk = append(append(le16b(0x3c00), binary.LittleEndian.AppendUint32(nil, qh)...), qs...)
	checkDequant(t, Q5_0, blk, func(i int) float32 { return float32(q5(i) - 16) })
	blk = append(append(append(le16b(0x3800), le16b(0x4000)...), binary.LittleEndian.AppendUint32(nil, qh)...), qs...)
	checkDequant(t, Q5_1, blk, func(i int) float32 { return 0.5*float32(q5(i)) + 2 })

	// Q8_0: d = 0.125, q = 8i-128. Q8_1: d = 2 (s is not used by dequantization).
	blk = le16b(0x3000)
	for i := 0; i < 32; i++ {
		blk = append(blk, byte(int8(8*i-128)))
	}
	checkDequant(t, Q8_0, blk, func(i int) float32 { return 0.125 * float32(8*i-128) })
	blk = append(append(le16b(0x4000), le16b(0x7bff)...), blk[2:]...)
	checkDequant(t, Q8_1, blk, func(i int) float32 { return 2 * float32(8*i-128) })
}

// put2 stores 2-bit value v of element i (0..255) into qs[64]: element 128h + 32s + l
// lives at bits 2s of qs[32h + l].
func put2(qs []byte, i int, v int) {
	h, s, l := i/128, (i%128)/32, i%32
	qs[32*h+l] |= byte(v&3) << (2 * s)
}

func TestDequantHandBuiltQ2_K(t *testing.T) {
	// Sub-block j (16 elements): scale j, min 15-j; d = 0.5, dmin = 0.25; q = (i/3)%4.
	blk := make([]byte, 84)
	for j := 0; j < 16; j++ {
		blk[j] = byte(j | (15-j)<<4)
	}
	for i := 0; i < QK_K; i++ {
		put2(blk[16:80], i, (i/3)%4)
	}
	copy(blk[80:], le16b(0x3800))
	copy(blk[82:], le16b(0x3400))
	checkDequant(t, Q2_K, blk, func(i int) float32 {
		j := i / 16
		return 0.5*float32(j)*float32((i/3)%4) - 0.25*float32(15-j)
	})
}

func TestDequantHandBuiltQ3_K(t *testing.T) {
	// Signed 6-bit scales s_j = 2j-15, stored as s_j+32: low 4 bits in the low (j < 8) or
	// high (j >= 8) nibble of scales[j%8], top 2 bits at bits 2*(j/4) of scales[8+j%4].
	// Quants q in [-4, 3] stored as v = q+4: low 2 bits in qs (as Q2_K), and the third
	// bit in bit i/32 of hmask[i%32] (set means v >= 4). d = 0.25.
	blk := make([]byte, 110)
	hmask, qs, sc := blk[0:32], blk[32:96], blk[96:108]
	for j := 0; j < 16; j++ {
		v := byte(2*j - 15 + 32)
		if j < 8 {
			sc[j] |= v & 0x0f
		} else {
			sc[j-8] |= (v & 0x0f) << 4
		}
		sc[8+j%4] |= (v >> 4) << (2 * (j / 4))
	}
	q := func(i int) int { return (i*5+i/7)%8 - 4 }
	for i := 0; i < QK_K; i++ {
		v := q(i) + 4
		put2(qs, i, v&3)
		if v >= 4 {
			hmask[i%32] |= 1 << (i / 32)
		}
	}
	copy(blk[108:], le16b(0x3400))
	checkDequant(t, Q3_K, blk, func(i int) float32 {
		return 0.25 * float32(2*(i/16)-15) * float32(q(i))
	})
}

// packK4 packs eight 6-bit scales and mins of a Q4_K/Q5_K block into 12 bytes, written
// from the layout: sub-blocks 0-3 keep scale and min in the low 6 bits of bytes j and
// j+4; sub-blocks 4-7 keep the low 4 bits of scale and min in the nibbles of byte j+4,
// and their top 2 bits in the top 2 bits of bytes j-4 (scale) and j (min).
func packK4(sc, m [8]int) []byte {
	b := make([]byte, 12)
	for j := 0; j < 4; j++ {
		b[j] = byte(sc[j])
		b[j+4] = byte(m[j])
	}
	for j := 4; j < 8; j++ {
		b[j+4] = byte(sc[j]&0x0f | (m[j]&0x0f)<<4)
		b[j-4] |= byte(sc[j]>>4) << 6
		b[j] |= byte(m[j]>>4) << 6
	}
	return b
}

func TestDequantHandBuiltQ4_KQ5_K(t *testing.T) {
	var sc, m [8]int
	for j := range sc {
		sc[j], m[j] = 10+7*j, 63-5*j // all above 15, so the top bits matter
	}
	// Q4_K: element 64c + l (l < 32) is the low nibble of qs[32c + l], element
	// 64c + 32 + l the high nibble. d = 0.5, dmin = 0.125.
	q4 := func(i int) int { return (i*5 + i/16) % 16 }
	qs := make([]byte, 128)
	for i := 0; i < QK_K; i++ {
		c, hi, l := i/64, (i/32)%2, i%32
		qs[32*c+l] |= byte(q4(i)) << (4 * hi)
	}
	blk := append(append(append(le16b(0x3800), le16b(0x3000)...), packK4(sc, m)...), qs...)
	checkDequant(t, Q4_K, blk, func(i int) float32 {
		j := i / 32
		return 0.5*float32(sc[j])*float32(q4(i)) - 0.125*float32(m[j])
	})

	// Q5_K: as Q4_K plus a fifth bit: bit i/32 of qh[i%32].
	q5 := func(i int) int { return (i*3 + i/16) % 32 }
	qs = make([]byte, 128)
	qh := make([]byte, 32)
	for i := 0; i < QK_K; i++ {
		c, hi, l := i/64, (i/32)%2, i%32
		qs[32*c+l] |= byte(q5(i)&0x0f) << (4 * hi)
		qh[i%32] |= byte(q5(i)>>4) << (i / 32)
	}
	blk = append(append(append(append(le16b(0x3800), le16b(0x3000)...), packK4(sc, m)...), qh...), qs...)
	checkDequant(t, Q5_K, blk, func(i int) float32 {
		j := i / 32
		return 0.5*float32(sc[j])*float32(q5(i)) - 0.125*float32(m[j])
	})
}

func TestDequantHandBuiltQ6_K(t *testing.T) {
	// Element i = 128h + 32s + l: 6-bit v = q+32, low 4 bits in ql[64h + 32(s%2) + l]
	// (low nibble for s < 2, high for s >= 2), top 2 bits at bits 2s of qh[32h + l].
	// int8 scales s_j = 9j-70 per 16 elements; d = 0.0625.
	blk := make([]byte, 210)
	ql, qh, sc := blk[0:128], blk[128:192], blk[192:208]
	q := func(i int) int { return (i*11+i/64)%64 - 32 }
	for i := 0; i < QK_K; i++ {
		v := q(i) + 32
		h, s, l := i/128, (i%128)/32, i%32
		ql[64*h+32*(s%2)+l] |= byte(v&0x0f) << (4 * (s / 2))
		qh[32*h+l] |= byte(v>>4) << (2 * s)
	}
	for j := 0; j < 16; j++ {
		sc[j] = byte(int8(9*j - 70))
	}
	copy(blk[208:], le16b(0x2c00))
	checkDequant(t, Q6_K, blk, func(i int) float32 {
		return 0.0625 * float32(9*(i/16)-70) * float32(q(i))
	})
}

func TestDequantHandBuiltQ8_K(t *testing.T) {
	blk := binary.LittleEndian.AppendUint32(nil, 0x3f000000) // d = 0.5 as f32
	for i := 0; i < QK_K; i++ {
		blk = append(blk, byte(int8(i-128)))
	}
	blk = append(blk, make([]byte, 32)...) // bsums: not used by dequantization
	checkDequant(t, Q8_K, blk, func(i int) float32 { return 0.5 * float32(i-128) })
}

func TestDequantPlain(t *testing.T) {
	f32 := binary.LittleEndian.AppendUint32(nil, 0xc0490fdb) // -pi
	checkDequant(t, F32, f32, func(int) float32 { return -3.14159274 })
	checkDequant(t, F16, le16b(0xc248), func(int) float32 { return -3.140625 })
	checkDequant(t, BF16, le16b(0xc049), func(int) float32 { return -3.140625 })
}
