package cuda_test

import (
	"math/rand/v2"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/backendtest"
	"ember/inference/backend/cuda"
	"ember/inference/backend/ref"
	"ember/inference/model/goldentest"
	"ember/inference/quant"
)

func TestF16CopiesEnv(t *testing.T) {
	t.Setenv(cuda.F16MinElemsEnv, "x")
	if _, _, err := cuda.F16CopiesFromEnv(); err == nil {
		t.Fatalf("$%s=x: no error", cuda.F16MinElemsEnv)
	}
	t.Setenv(cuda.F16MinElemsEnv, "")
	checkRowsEnv(t, cuda.F16CopiesEnv, cuda.F16CopiesFromEnv, []rowsEnvCase{{"", false, 48, false},
		{"auto", false, 48, false}, {"off", true, 48, false}, {"0", true, 48, false}, {"32", false, 32, false},
		{"-3", false, 0, true}, {"many", false, 0, true}})
}

// rowsEnvCase is a value of a row-count variable (rowsEnv in f16copy.go) and what its
// reader should make of it: off, the fewest rows, or an error.
type rowsEnvCase struct {
	v       string
	off     bool
	minRows int
	bad     bool
}

// checkRowsEnv sets variable name to each case's value and checks what read returns.
func checkRowsEnv(t *testing.T, name string, read func() (bool, int, error), cases []rowsEnvCase) {
	t.Helper()
	for _, c := range cases {
		t.Setenv(name, c.v)
		off, minRows, err := read()
		if (err != nil) != c.bad {
			t.Fatalf("$%s=%q: error %v, want error %v", name, c.v, err, c.bad)
		}
		if !c.bad && (off != c.off || minRows != c.minRows) {
			t.Fatalf("$%s=%q: off %v, rows %d; want %v, %d", name, c.v, off, minRows, c.off, c.minRows)
		}
	}
}

// TestF16Copies: with the default thresholds, a product of 64 activation rows makes the
// weight's f16 copy and runs on cuBLASLt over it, one of 16 rows stays on our kernels,
// both agree with the reference, a second weight-sized product makes no second copy,
// and Free gives the copy back.
func TestF16Copies(t *testing.T) {
	be := newLtOrSkip(t)
	defer be.Close()
	rb := ref.New()
	rng := rand.New(rand.NewPCG(21, 22))
	cuda.SetF16Copies(be, true, 0) // these small weights too
	cuda.SetMMF(be, false, 0)      // which mmf would take at 64 rows
	for _, typ := range []quant.Type{quant.Q4_K, quant.Q6_K, quant.Q8_0, quant.Q5_0} {
		const m, k = 384, 1024
		wb, wr := weightPair(t, be, rb, rng, typ, m, k)
		n0, _ := be.F16Copies()
		for _, c := range []struct {
			n    int
			onLt bool
		}{{16, false}, {64, true}, {300, true}, {64, true}} {
			_, xb, xr := ltInput(t, be, rb, rng, c.n, k)
			db, dr := newF32(t, be, c.n, m), newF32(t, rb, c.n, m)
			before := cuda.CublasProducts(be)
			be.MatMul(db, wb, xb)
			rb.MatMul(dr, wr, xr)
			got, want := backendtest.ReadF32(t, be, db), backendtest.ReadF32(t, rb, dr)
			if on := cuda.CublasProducts(be)-before == 1; on != c.onLt {
				t.Fatalf("%v, %d rows: on cuBLASLt %v, want %v", typ, c.n, on, c.onLt)
			}
			if e := goldentest.NMSE(got, want); !(e < 1e-5) {
				t.Fatalf("%v, %d rows: NMSE %.3g against the reference (want < 1e-5); %s", typ, c.n, e, firstDiff(got, want, m))
			}
			if n, _ := be.F16Copies(); cuda.HasF16Copy(wb) != c.onLt || n-n0 != b2i(c.onLt) {
				t.Fatalf("%v, %d rows: %d copies made, weight has one: %v", typ, c.n, n-n0, cuda.HasF16Copy(wb))
			}
			for _, x := range []backend.Tensor{xb, db} {
				be.Free(x)
			}
		}
		be.Free(wb)
		if n, bytes := be.F16Copies(); n != n0 {
			t.Fatalf("%v: after Free %d copies (%d bytes), want %d", typ, n, bytes, n0)
		}
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// TestF16Wants: which batched products take the f16 copies by default (the H200
// measurements in f16copy.go): Llama-3.1-8B's FFN, output head, Q, O, K and V at 48+
// rows; DeepSeek-V2-Lite's 2,048-column projections and its shared experts' down at 48+
// rows; not weights under 1 << 22 elements with rows longer than 2,048; nothing below 48.
func TestF16Wants(t *testing.T) {
	for _, c := range []struct {
		name          string
		rows, cols, n int
		want          bool
	}{
		{"8B gate, 64 rows", 14336, 4096, 64, true},
		{"8B down, 64 rows", 4096, 14336, 64, true},
		{"8B output head, 48 rows", 128256, 4096, 48, true},
		{"8B gate, 32 rows", 14336, 4096, 32, false},
		{"8B Q, 64 rows", 4096, 4096, 64, true},
		{"8B Q, 47 rows", 4096, 4096, 47, false},
		{"8B K, 64 rows", 1024, 4096, 64, true},
		{"Qwen2-7B K, 64 rows", 512, 3584, 64, false},
		{"V2-Lite q, 64 rows", 3072, 2048, 64, true},
		{"V2-Lite shared down, 64 rows", 2048, 2816, 64, true},
		{"V2-Lite O, 47 rows", 2048, 2048, 47, false},
	} {
		if got := cuda.F16Wants(c.rows, c.cols, c.n); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
