package quant

import (
	"math/rand/v2"
	"testing"
)

// Benchmarks of the scalar oracle (not the fast path): bytes are the quantized weight
// bytes read per operation, reported as MB/s by b.SetBytes and as GB/s.

const benchN = 16 * QK_K // one 4096-wide row

func benchRow(b *testing.B, typ Type) ([]byte, []byte) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, benchN)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 0.02)
	}
	wb, _ := RowBytes(typ, benchN)
	w := make([]byte, wb)
	if err := Quantize(typ, x, w); err != nil {
		b.Fatal(err)
	}
	vt, _ := typ.VecDotType()
	xb, _ := RowBytes(vt, benchN)
	a := make([]byte, xb)
	if err := Quantize(vt, x, a); err != nil {
		b.Fatal(err)
	}
	return w, a
}

func reportGBs(b *testing.B, bytes int) {
	b.SetBytes(int64(bytes))
	b.ReportMetric(float64(bytes)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

func benchDequantize(b *testing.B, typ Type) {
	w, _ := benchRow(b, typ)
	dst := make([]float32, benchN)
	b.ResetTimer()
	for b.Loop() {
		if err := Dequantize(typ, w, dst); err != nil {
			b.Fatal(err)
		}
	}
	reportGBs(b, len(w))
}

func benchDot(b *testing.B, typ Type) {
	w, a := benchRow(b, typ)
	dot, err := Dot(typ)
	if err != nil {
		b.Fatal(err)
	}
	var sink float32
	b.ResetTimer()
	for b.Loop() {
		sink += dot(w, a, benchN)
	}
	reportGBs(b, len(w))
	_ = sink
}

func BenchmarkDequantizeQ4_K(b *testing.B) { benchDequantize(b, Q4_K) }
func BenchmarkDequantizeQ8_0(b *testing.B) { benchDequantize(b, Q8_0) }
func BenchmarkDotQ4_K(b *testing.B)        { benchDot(b, Q4_K) }
func BenchmarkDotQ8_0(b *testing.B)        { benchDot(b, Q8_0) }
func BenchmarkQuantizeQ4_K(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, benchN)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 0.02)
	}
	wb, _ := RowBytes(Q4_K, benchN)
	w := make([]byte, wb)
	for b.Loop() {
		_ = Quantize(Q4_K, x, w)
	}
	reportGBs(b, 4*benchN) // float32 input read
}
