package cuda_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/model/goldentest"
	"ember/inference/quant"
)

// ltTypes are the weight types the cuBLASLt path takes (F16 in place, the others through
// kernels/cuda/dequant.cu).
var ltTypes = []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.Q5_K, quant.Q4_0, quant.Q5_0, quant.F16,
	quant.Q4_1, quant.Q5_1, quant.Q2_K, quant.Q3_K, quant.BF16}

// newLtOrSkip starts a backend with cuBLASLt, or skips the test where there is no GPU or
// no libcublasLt (set EMBER_CUBLASLT to its full path if it is installed elsewhere).
func newLtOrSkip(t *testing.T) *cuda.Backend {
	t.Helper()
	b := newWith(t, cuda.Options{})
	if ok, why := cuda.CublasAvailable(b); !ok {
		b.Close()
		t.Skipf("skipping the cuBLASLt tests: %s", why)
	}
	return b
}

// weightPair uploads one weight of random values quantized to typ (quantized) to be and
// to the reference rb.
func weightPair(t *testing.T, be, rb backend.Backend, rng *rand.Rand, typ quant.Type, rows, cols int) (wb, wr backend.Tensor) {
	t.Helper()
	data, _ := quantized(t, rng, typ, rows, cols)
	wb, err := be.Weight(typ, rows, cols, data)
	if err != nil {
		t.Fatal(err)
	}
	wr, _ = rb.Weight(typ, rows, cols, data)
	return wb, wr
}

// quantized returns rows x cols random normal values quantized to typ, and the values
// quant.Dequantize makes of them.
func quantized(t *testing.T, rng *rand.Rand, typ quant.Type, rows, cols int) ([]byte, []float32) {
	t.Helper()
	rb, err := quant.RowBytes(typ, uint64(cols))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, rows*int(rb))
	vals := make([]float32, cols)
	deq := make([]float32, rows*cols)
	for r := 0; r < rows; r++ {
		for i := range vals {
			vals[i] = float32(rng.NormFloat64() * 0.05)
		}
		row := data[r*int(rb) : (r+1)*int(rb)]
		if err := quant.Quantize(typ, vals, row); err != nil {
			t.Fatal(err)
		}
		if err := quant.Dequantize(typ, row, deq[r*cols:(r+1)*cols]); err != nil {
			t.Fatal(err)
		}
	}
	return data, deq
}

// TestCublasDequant: every dequantization kernel, bit for bit, against
// quant.Dequantize rounded to f16 (quant.FP32ToFP16), on rows of several blocks.
func TestCublasDequant(t *testing.T) {
	be := newOrSkip(t)
	defer be.Close()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, typ := range ltTypes {
		if typ == quant.F16 {
			continue // read in place
		}
		const rows, cols = 37, 1024
		data, deq := quantized(t, rng, typ, rows, cols)
		w, err := be.Weight(typ, rows, cols, data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cuda.DequantF16(be, w)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		for i, h := range got {
			if want := quant.FP32ToFP16(deq[i]); h != want {
				t.Fatalf("%v: element %d (row %d col %d): got half %#04x (%g), want %#04x (%g from %g)", typ, i, i/cols,
					i%cols, h, quant.FP16ToFP32(h), want, quant.FP16ToFP32(want), deq[i])
			}
		}
		be.Free(w)
	}
}

// ltCase is one weight shape; chunk forces the f16 copy into chunks of that many rows
// (0: one chunk), so that a chunk's product writes a part of each output row (its row
// stride larger than the chunk).
type ltCase struct {
	m, k, chunk int
}

// TestCublasMatMul forces the cuBLASLt path (from one row) and checks MatMul and
// MatMulShared on random weights of every type it takes, odd row counts, K from 256 to
// 4096 and outputs written at an offset (a view one row into a larger tensor: an
// unaligned start, guard rows around it). Two checks, each failure naming the type,
// shape and rows:
//
//   - against the exact product of the f16-rounded weights and activations (float64
//     sums on the host): only cuBLAS's f32 accumulation differs (~1e-11 at K = 4096),
//     NMSE < 1e-8. This
//     catches a wrong element, layout, transpose, stride or chunk offset.
//   - against the reference backend, NMSE < 1e-5: not bitwise, because cuBLASLt
//     multiplies f16 copies of the dequantized weights and of the activations as the
//     reference rounds them (its dot partner, Q8_K or Q8_0 blocks), each within 2^-11
//     relative, in f32, where the reference takes integer dots (NMSE ~1e-7 to 2.3e-6,
//     the most for Q5_1's offset values on one row; x rounded to f16 instead of its dot
//     partner gives ~5e-5).
//
// It also checks that the products really ran on cuBLASLt (the backend's counter) and
// that a repeated product is bitwise the same (no nondeterministic reduction).
func TestCublasMatMul(t *testing.T) {
	be := newLtOrSkip(t)
	defer be.Close()
	t.Logf("cuBLASLt: %s", cuda.CublasLibrary(be))
	rb := ref.New()
	rng := rand.New(rand.NewPCG(13, 14))
	for _, typ := range ltTypes {
		cases := []ltCase{{300, 256, 0}, {136, 1024, 128}}
		switch typ {
		case quant.Q4_K, quant.Q6_K, quant.Q8_0:
			cases = append(cases, ltCase{136, 4096, 128}, ltCase{200, 2048, 0})
		}
		for _, c := range cases {
			cuda.SetCublas(be, 1, c.chunk)
			data, deq := quantized(t, rng, typ, c.m, c.k)
			wb, err := be.Weight(typ, c.m, c.k, data)
			if err != nil {
				t.Fatal(err)
			}
			wr, err := rb.Weight(typ, c.m, c.k, data)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 17, 300, 513} {
				name := fmt.Sprintf("%v %dx%d (chunk %d), %d rows", typ, c.m, c.k, c.chunk, n)
				ltCheckMatMul(t, name, be, rb, wb, wr, deq, c, n, rng)
			}
			be.Free(wb)
		}
	}
	ltCheckShared(t, be, rb, rng)
}

// ltCheckMatMul runs one product on both backends and checks it (TestCublasMatMul).
func ltCheckMatMul(t *testing.T, name string, be *cuda.Backend, rb backend.Backend, wb, wr backend.Tensor,
	deq []float32, c ltCase, n int, rng *rand.Rand) {
	t.Helper()
	x, xb, xr := ltInput(t, be, rb, rng, n, c.k)
	const guard = float32(-1234.5)
	full := newF32(t, be, n+2, c.m) // guard rows 0 and n+1 must keep their values
	g := make([]float32, (n+2)*c.m)
	for i := range g {
		g[i] = guard
	}
	be.WriteF32(full, g)
	db, dr := be.View(full, 1, n), newF32(t, rb, n, c.m)
	before := cuda.CublasProducts(be)
	be.MatMul(db, wb, xb)
	rb.MatMul(dr, wr, xr)
	if got := cuda.CublasProducts(be) - before; got != 1 {
		t.Fatalf("%s: %d products ran on cuBLASLt, want 1", name, got)
	}
	all := backendtest.ReadF32(t, be, full)
	for j := 0; j < c.m; j++ {
		if all[j] != guard || all[(n+1)*c.m+j] != guard {
			t.Fatalf("%s: guard row overwritten at col %d", name, j)
		}
	}
	got := all[c.m : (n+1)*c.m]
	exact := ltExact(deq, partnerRounded(t, wb.Type(), x, c.k), c.m, c.k, n)
	if e := goldentest.NMSE(got, exact); !(e < 1e-8) {
		t.Fatalf("%s: NMSE %.3g against the exact product of the f16 operands (want < 1e-8); %s", name, e,
			firstDiff(got, exact, c.m))
	}
	want := backendtest.ReadF32(t, rb, dr)
	if e := goldentest.NMSE(got, want); !(e < 1e-5) {
		t.Fatalf("%s: NMSE %.3g against the reference backend (want < 1e-5); %s", name, e, firstDiff(got, want, c.m))
	}
	be.MatMul(db, wb, xb)
	again := backendtest.ReadF32(t, be, full)[c.m : (n+1)*c.m]
	if i := firstOtherBits(got, again); i >= 0 {
		t.Fatalf("%s: a repeated product differs at row %d col %d: %g then %g", name, i/c.m, i%c.m, got[i], again[i])
	}
	be.Free(xb)
	be.Free(full)
}

// ltCheckShared: MatMulShared of Llama's Q/K/V (Q4_K, Q4_K, Q6_K) and of a mixture with
// a type cuBLASLt leaves to our kernels (F32), 300 rows, against the reference.
func ltCheckShared(t *testing.T, be *cuda.Backend, rb backend.Backend, rng *rand.Rand) {
	cuda.SetCublas(be, 1, 128)
	const n, k = 300, 512
	for _, types := range [][]quant.Type{{quant.Q4_K, quant.Q4_K, quant.Q6_K}, {quant.Q8_0, quant.F32, quant.Q5_0}} {
		_, xb, xr := ltInput(t, be, rb, rng, n, k)
		var pb, pr []backend.Proj
		want := 0
		for i, typ := range types {
			m := 256 + 64*i
			wb, wr := weightPair(t, be, rb, rng, typ, m, k)
			pb = append(pb, backend.Proj{Dst: newF32(t, be, n, m), W: wb})
			pr = append(pr, backend.Proj{Dst: newF32(t, rb, n, m), W: wr})
			if typ != quant.F32 {
				want++
			}
		}
		before := cuda.CublasProducts(be)
		backend.MatMulShared(be, xb, pb)
		backend.MatMulShared(rb, xr, pr)
		if got := cuda.CublasProducts(be) - before; got != want {
			t.Fatalf("shared %v: %d products ran on cuBLASLt, want %d", types, got, want)
		}
		for i := range pb {
			got, ref := backendtest.ReadF32(t, be, pb[i].Dst), backendtest.ReadF32(t, rb, pr[i].Dst)
			if e := goldentest.NMSE(got, ref); !(e < 1e-5) {
				t.Fatalf("shared %v, projection %d: NMSE %.3g against the reference (want < 1e-5); %s", types, i, e,
					firstDiff(got, ref, pb[i].Dst.Cols()))
			}
			be.Free(pb[i].Dst)
			be.Free(pb[i].W)
		}
		be.Free(xb)
	}
}

// partnerRounded is x (rows of k) as the reference rounds activations for weights of
// type w: each row through its dot partner (Q8_K, Q8_0, Q8_1 or BF16) and back, as
// cuBLASLt's activation rows hold them before their f16 rounding (act_f16).
func partnerRounded(t *testing.T, w quant.Type, x []float32, k int) []float32 {
	t.Helper()
	vt, _ := w.VecDotType()
	if vt == quant.F16 || vt == quant.F32 {
		return x
	}
	rb, err := quant.RowBytes(vt, uint64(k))
	if err != nil {
		t.Fatal(err)
	}
	out, buf := make([]float32, len(x)), make([]byte, rb)
	for r := 0; r < len(x)/k; r++ {
		if err := quant.Quantize(vt, x[r*k:(r+1)*k], buf); err != nil {
			t.Fatal(err)
		}
		if err := quant.Dequantize(vt, buf, out[r*k:(r+1)*k]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// ltExact is x W^T of the f16-rounded operands, summed in float64: n x m.
func ltExact(deq, x []float32, m, k, n int) []float32 {
	wh := make([]float64, len(deq))
	for i, v := range deq {
		wh[i] = float64(quant.FP16ToFP32(quant.FP32ToFP16(v)))
	}
	xh := make([]float64, len(x))
	for i, v := range x {
		xh[i] = float64(quant.FP16ToFP32(quant.FP32ToFP16(v)))
	}
	out := make([]float32, n*m)
	for r := 0; r < n; r++ {
		xr := xh[r*k : (r+1)*k]
		for i := 0; i < m; i++ {
			wr := wh[i*k : (i+1)*k]
			s := 0.0
			for j, v := range wr {
				s += v * xr[j]
			}
			out[r*m+i] = float32(s)
		}
	}
	return out
}

// firstDiff names the element of largest difference (for failure messages).
func firstDiff(got, want []float32, cols int) string {
	bi, bd := 0, -1.0
	for i := range want {
		if d := math.Abs(float64(got[i]) - float64(want[i])); d > bd || math.IsNaN(d) {
			bi, bd = i, d
			if math.IsNaN(d) {
				break
			}
		}
	}
	return fmt.Sprintf("largest difference at row %d col %d: got %g, want %g", bi/cols, bi%cols, got[bi], want[bi])
}

// ltInput is n x k normal values written to an F32 tensor on each of be and rb.
func ltInput(t *testing.T, be, rb backend.Backend, rng *rand.Rand, n, k int) ([]float32, backend.Tensor, backend.Tensor) {
	t.Helper()
	x := make([]float32, n*k)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	xb, xr := newF32(t, be, n, k), newF32(t, rb, n, k)
	be.WriteF32(xb, x)
	rb.WriteF32(xr, x)
	return x, xb, xr
}

func newF32(t *testing.T, be backend.Backend, rows, cols int) backend.Tensor {
	t.Helper()
	x, err := be.New(quant.F32, rows, cols)
	if err != nil {
		t.Fatalf("%s: New(F32, %d, %d): %v", be.Name(), rows, cols, err)
	}
	return x
}
