package cuda_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// TestNormRouterBits (GPU): NormRouter's logits (mmv_f32_norm_1w, from the residual sum
// itself) have the bits of the residual add, the norm (add_rms_norm_q8_k_1, its Q8_K row
// taken by a Q4_K product) and the router's product of the normed row (mmv_f32_1w),
// for both widths it takes, a router of 64 rows and one of 37, and rows of ordinary and
// of large values; it declines other widths and with $EMBER_CUDA_NO_NORM_ROUTER.
func TestNormRouterBits(t *testing.T) {
	for _, c := range []struct {
		K, X  int
		scale float64
	}{{2048, 64, 1}, {2048, 37, 40}, {4096, 64, 1}, {4096, 7, 0.01}} {
		t.Run(fmt.Sprintf("%dx%d scale %g", c.X, c.K, c.scale), func(t *testing.T) {
			be := newOrSkip(t)
			defer be.Close()
			e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(60, uint64(c.K+c.X)))}
			a, b := e.randn(1, c.K, c.scale), e.randn(1, c.K, c.scale)
			nw, router := e.randn(1, c.K, 1), e.weight(quant.F32, c.X, c.K) // nw by New, as the loader makes it
			pw := e.weight(quant.Q4_K, 32, c.K)
			got, want := e.zeros(quant.F32, 1, c.X), e.zeros(quant.F32, 1, c.X)
			sum, xn, prod := e.zeros(quant.F32, 1, c.K), e.zeros(quant.F32, 1, c.K), e.zeros(quant.F32, 1, 32)
			if err := be.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !be.NormRouter(got, a, b, nw, router, 1e-6) {
				t.Fatal("NormRouter declined")
			}
			be.Add(sum, a, b)
			be.RMSNorm(xn, sum, nw, 1e-6)
			be.MatMul(prod, pw, xn)
			be.MatMul(want, router, xn)
			q := strings.Join(cuda.Queued(be), " ")
			for _, k := range []string{"mmv_f32_norm_1w", "add_rms_norm_q8_k_1", "mmv_f32_1w"} {
				if !strings.Contains(q, k) {
					t.Fatalf("launches %s: no %s", q, k)
				}
			}
			g, w := e.bits(got), e.bits(want)
			for i := range g {
				if g[i] != w[i] {
					t.Fatalf("logit %d: %#x, want %#x (the norm and mmv_f32_1w)", i, g[i], w[i])
				}
			}
			odd := e.zeros(quant.F32, 1, 1024)
			if be.NormRouter(got, odd, odd, e.weight(quant.F32, 1, 1024), e.weight(quant.F32, c.X, 1024), 1e-6) {
				t.Error("NormRouter took 1,024 columns")
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		t.Setenv(cuda.NoNormRouterEnv, "1")
		be := newOrSkip(t)
		defer be.Close()
		e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(60, 0))}
		var x backend.Tensor = e.randn(1, 2048, 1)
		if be.NormRouter(e.zeros(quant.F32, 1, 64), x, x, e.weight(quant.F32, 1, 2048), e.weight(quant.F32, 64, 2048), 1e-6) {
			t.Error("NormRouter took a row with $EMBER_CUDA_NO_NORM_ROUTER set")
		}
	})
}
