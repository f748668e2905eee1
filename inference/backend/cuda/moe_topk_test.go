package cuda_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"ember/inference/backend"
	"ember/inference/backend/cuda"
	"ember/inference/quant"
)

// routeRef is the routing the kernels do (deepseek2's route, written again here as the
// plain reference): softmax (float exps of the max-shifted logits, a double sum in index
// order) or sigmoid probabilities, bias added for selection, group limiting, the k best
// scores in descending order with ties to the lower index, weights optionally
// normalised and scaled.
func routeRef(logits, bias []float32, X, k, nGroup, nGroupUsed int, sigmoid, norm bool, scale float32) ([]int32, []float32) {
	n := len(logits) / X
	ids, wts := make([]int32, n*k), make([]float32, n*k)
	for t := range n {
		row := logits[t*X : (t+1)*X]
		probs, score := make([]float32, X), make([]float32, X)
		if sigmoid {
			for e, x := range row {
				probs[e] = 1 / (1 + float32(math.Exp(float64(-x))))
			}
		} else {
			mx := float32(math.Inf(-1))
			for _, x := range row {
				mx = max(mx, x)
			}
			var sum float64
			for e, x := range row {
				probs[e] = float32(math.Exp(float64(x - mx)))
				sum += float64(probs[e])
			}
			inv := float32(1 / sum)
			for e := range probs {
				probs[e] *= inv
			}
		}
		for e := range score {
			score[e] = probs[e]
			if bias != nil {
				score[e] += bias[e]
			}
		}
		if nGroup > 1 && nGroupUsed < nGroup {
			per := X / nGroup
			sums := make([]float32, nGroup)
			for g := range sums {
				a, b := float32(math.Inf(-1)), float32(math.Inf(-1))
				for _, x := range score[g*per : (g+1)*per] {
					if x > a {
						a, b = x, a
					} else if x > b {
						b = x
					}
				}
				sums[g] = a + b
			}
			keep := make([]bool, nGroup)
			for range nGroupUsed {
				best := -1
				for g := range sums {
					if !keep[g] && (best < 0 || sums[g] > sums[best]) {
						best = g
					}
				}
				keep[best] = true
			}
			for e := range score {
				if !keep[e/per] {
					score[e] = float32(math.Inf(-1))
				}
			}
		}
		taken := make([]bool, X)
		s, w := ids[t*k:(t+1)*k], wts[t*k:(t+1)*k]
		for j := range s {
			best := -1
			for e := range X {
				if !taken[e] && (best < 0 || score[e] > score[best]) {
					best = e
				}
			}
			taken[best] = true
			s[j], w[j] = int32(best), probs[best]
		}
		if norm {
			var sum float64
			for _, x := range w {
				sum += float64(x)
			}
			d := max(float32(sum), 6.103515625e-5)
			for j := range w {
				w[j] /= d
			}
		}
		if scale != 0 {
			for j := range w {
				w[j] *= scale
			}
		}
	}
	return ids, wts
}

// TestMoERouting (GPU): the routing on the device (RoutedExperts' moe_topk after the
// router product) picks routeRef's experts and weights, bit for bit, from the logits the
// product wrote, and the fused and unfused launches give the same bits in every output
// (logits, experts, weights, the experts' sum). The router's rows include copies of one
// another and a zero row (tied scores), and the cases cover softmax and sigmoid gating,
// selection bias, expert groups, weight normalisation and scaling, one row and three,
// expert counts past a warp's lanes, and Q4_K and Q5_K experts, whose one-token routing
// and gate and up are one launch (mmv_route_q4_k, mmv_route_q5_k) with fusion on
// (RouteFuseEnv not 0).
func TestMoERouting(t *testing.T) { testMoERouting(t, "") }

// TestMoERoutingNoGuess (GPU) is TestMoERouting with mmv_route's guessed loads off
// (RouteSpecEnv): the same bits either way.
func TestMoERoutingNoGuess(t *testing.T) {
	t.Setenv(cuda.RouteSpecEnv, "off")
	testMoERouting(t, "")
}

// TestMoERoutingSmallGrid (GPU) is TestMoERouting's Q4_K cases on five mmv_route_q4_k
// blocks (RouteGridEnv), so that each warp takes many tasks, past the two it loads by the
// guess while the routing runs.
func TestMoERoutingSmallGrid(t *testing.T) {
	t.Setenv(cuda.RouteGridEnv, "5")
	testMoERouting(t, "q4k")
}

// TestMoERoutingWide (GPU) is TestMoERouting's Q4_K cases with RouteWideEnv: up to 64
// experts on mmv_route_q4_k (moe_route<8>'s code beside <2>'s) instead of
// mmv_route_q4_k_64 or _64s, the same bits.
func TestMoERoutingWide(t *testing.T) {
	t.Setenv(cuda.RouteWideEnv, "1")
	testMoERouting(t, "q4k")
}

// TestMoERoutingWide64 (GPU) is TestMoERouting's Q4_K cases with RouteWideEnv 64: plain
// routing of up to 64 experts on mmv_route_q4_k_64 (every routing option's code) instead
// of mmv_route_q4_k_64s, the same bits.
func TestMoERoutingWide64(t *testing.T) {
	t.Setenv(cuda.RouteWideEnv, "64")
	testMoERouting(t, "q4k")
}

// testMoERouting runs the cases whose names contain only ("" for all), all on one
// backend (a backend's start took ~1 s of the test's ~100 s when each run made its own),
// each case fused and then with NoFusion.
func testMoERouting(t *testing.T, only string) {
	be := newOrSkip(t)
	defer be.Close()
	type shape struct {
		K, F     int
		gu, down quant.Type
	}
	q80 := shape{448, 32, quant.Q8_0, quant.Q8_0}
	for _, c := range []struct {
		name                string
		X, k, groups, used  int
		sigmoid, norm, bias bool
		scale               float32
		shape
		under bool // underflowRouter's logits: mmv_route's guess wrong, loaded again
	}{
		{"v2-lite", 64, 6, 1, 1, false, false, false, 1, q80, false},
		{"norm-scale", 8, 4, 1, 1, false, true, false, 2.5, q80, false},
		{"odd", 37, 5, 1, 1, false, true, false, 0, q80, false},
		{"groups", 16, 3, 4, 2, false, false, false, 0, q80, false},
		{"v3-like", 256, 8, 8, 4, true, true, true, 2.5, q80, false},
		{"all-used", 48, 48, 1, 1, false, true, false, 0, q80, false},
		// Q4_K gate and up: with RouteFuseEnv (1 for these runs) one token's routing
		// and its gate and up in one launch (mmv_route_q4_k), in the unfused run
		// moe_topk and mmv_id_q4_k.
		{"v2-lite-q4k", 64, 6, 1, 1, false, false, false, 1, shape{2048, 96, quant.Q4_K, quant.Q8_0}, false},
		{"odd-q4k", 37, 5, 1, 1, false, true, false, 0, shape{512, 42, quant.Q4_K, quant.F32}, false},
		// The guessed selection taken without the argmax rounds, then normalised and
		// scaled lane by lane.
		{"norm-scale-q4k", 64, 6, 1, 1, false, true, false, 2.5, shape{1024, 64, quant.Q4_K, quant.Q8_0}, false},
		{"v3-like-q4k", 256, 8, 8, 4, true, true, true, 2.5, shape{256, 64, quant.Q4_K, quant.Q8_0}, false},
		// Q5_K (a Q5_K_M file's experts): mmv_route_q5_k, two rows a task; odd row
		// counts leave a task's second row past the expert's rows.
		{"v2-lite-q5k", 64, 6, 1, 1, false, false, false, 1, shape{2048, 96, quant.Q5_K, quant.Q8_0}, false},
		{"odd-q5k", 37, 5, 1, 1, false, true, false, 0, shape{768, 41, quant.Q5_K, quant.F32}, false},
		// The largest logits are not the routing's choice where probabilities tie at
		// 0: mmv_route's guess (moe_guess) is wrong in slots 3-5 and its weights are
		// loaded again. Run also with RouteSpecEnv off (TestMoERoutingNoGuess).
		{"ties-q4k", 64, 6, 1, 1, false, false, false, 1, shape{2048, 96, quant.Q4_K, quant.Q8_0}, true},
		{"ties-q5k", 64, 6, 1, 1, false, true, false, 0, shape{2048, 96, quant.Q5_K, quant.Q8_0}, true},
	} {
		if !strings.Contains(c.name, only) {
			continue
		}
		K, F := c.K, c.F
		plain := cuda.RoutePlain(c.sigmoid, c.bias, c.groups, c.used, c.k, os.Getenv(cuda.RouteSpecEnv) == "off")
		routed, _ := cuda.RouteKernel(c.gu, c.X, plain, os.Getenv(cuda.RouteWideEnv))
		if routed != "" {
			t.Setenv(cuda.RouteFuseEnv, "1")
		}
		for _, n := range []int{1, 3} {
			if c.k*n > 64 {
				continue // past the mat-vec experts: grouped on the tensor cores, not this test's
			}
			name := fmt.Sprintf("%s-%d", c.name, n)
			var got [2][][]uint32
			for run := range 2 {
				if run == 1 {
					cuda.NoFusion(be)
				} else {
					cuda.DefaultFusion(be)
				}
				e := &fuseEnv{t: t, be: be, rng: rand.New(rand.NewPCG(7, uint64(c.X)))}
				wv := make([]float32, c.X*K)
				for i := range wv {
					wv[i] = float32(e.rng.NormFloat64() * 0.05)
				}
				copy(wv[(c.X-2)*K:(c.X-1)*K], wv[K:2*K]) // rows 1 and X-2 tie
				clear(wv[2*K : 3*K])                     // and a zero row: logit 0
				var x backend.Tensor
				if c.under {
					xv := e.normals(n*K, 1)
					wv, x = underflowRouter(xv[:K], c.X), e.vals(n, K, xv)
				} else {
					x = e.randn(n, K, 1)
				}
				router, err := be.Weight(quant.F32, c.X, K, f32Bytes(wv))
				if err != nil {
					t.Fatal(err)
				}
				var probsB backend.Tensor
				var bias []float32
				if c.bias {
					bias = make([]float32, c.X)
					for i := range bias {
						bias[i] = float32(e.rng.NormFloat64() * 0.01)
					}
					probsB = e.vals(1, c.X, bias)
				}
				gate, up, down := e.weight(c.gu, c.X*F, K), e.weight(c.gu, c.X*F, K), e.weight(c.down, c.X*K, F)
				P := n * c.k
				logits, ids, wts := e.zeros(quant.F32, n, c.X), e.zeros(quant.I32, P, 1), e.zeros(quant.F32, P, 1)
				g, u, d, dst := e.zeros(quant.F32, P, F), e.zeros(quant.F32, P, F), e.zeros(quant.F32, P, K), e.zeros(quant.F32, n, K)
				shared, sum := e.randn(n, K, 1), e.zeros(quant.F32, n, K) // the shared experts' output, the layer's sum
				if err := be.Sync(context.Background()); err != nil {
					t.Fatal(err)
				}
				be.MatMul(logits, router, x)
				if !be.RoutedExperts(dst, x, logits, gate, up, down, probsB, ids, wts, g, u, d, c.groups, c.used, c.sigmoid, c.norm, c.scale) {
					t.Fatalf("%s: RoutedExperts declined", name)
				}
				q := strings.Join(cuda.Queued(be), " ")
				fused := run == 0 && n == 1 && routed != ""
				if fused == strings.Contains(q, "moe_topk") || fused != (routed != "" && strings.Contains(q, routed)) {
					t.Fatalf("%s (fusion off %v): launches %s", name, run == 1, q)
				}
				// The shared experts' output added: with fusion, moe_sum and the Add are one
				// launch (moe_sum_add), and its sum must match the unfused pair's bits.
				be.Add(sum, dst, shared)
				if q := strings.Join(cuda.Queued(be), " "); (run == 0) != strings.Contains(q, "moe_sum_add") {
					t.Fatalf("%s (fusion off %v): launches %s", name, run == 1, q)
				}
				lv, wsel, sel := make([]float32, n*c.X), make([]float32, P), make([]int32, P)
				if err := be.ReadF32(context.Background(), logits, lv); err != nil {
					t.Fatal(err)
				}
				if err := be.ReadF32(context.Background(), wts, wsel); err != nil {
					t.Fatal(err)
				}
				if err := cuda.ReadI32(context.Background(), be, ids, sel); err != nil {
					t.Fatal(err)
				}
				wantIDs, wantW := routeRef(lv, bias, c.X, c.k, c.groups, c.used, c.sigmoid, c.norm, c.scale)
				if c.under && n == 1 && slices.Equal(wantIDs, guessRef(lv, c.k)) {
					t.Fatalf("%s: logits %v: the largest are the routing's choice; the case tests nothing", name, lv)
				}
				for i := range sel {
					if sel[i] != wantIDs[i] || math.Float32bits(wsel[i]) != math.Float32bits(wantW[i]) {
						t.Fatalf("%s (fusion off %v): pair %d: expert %d weight %g, want %d %g", name, run == 1, i, sel[i], wsel[i], wantIDs[i], wantW[i])
					}
				}
				u32 := make([]uint32, P)
				for i, v := range sel {
					u32[i] = uint32(v)
				}
				got[run] = [][]uint32{e.bits(logits), u32, e.bits(wts), e.bits(dst), e.bits(sum)}
			}
			for j := range got[0] {
				for i := range got[0][j] {
					if got[0][j][i] != got[1][j][i] {
						t.Fatalf("%s: output %d [%d]: fused %#x, unfused %#x", name, j, i, got[0][j][i], got[1][j][i])
					}
				}
			}
		}
	}
}

// underflowRouter is a router of X experts whose logits for x are about 5, 4 and 3 for
// experts 0-2 and -300 + e/100 for the others: their probabilities all round to 0 and
// tie, so routeRef takes experts 3, 4, .. next, while the largest logits are, ..
func underflowRouter(x []float32, X int) []float32 {
	var n2 float64
	for _, v := range x {
		n2 += float64(v) * float64(v)
	}
	w := make([]float32, X*len(x))
	for e := range X {
		a := -300 + float64(e)/100
		if e < 3 {
			a = float64(5 - e)
		}
		for i, v := range x {
			w[e*len(x)+i] = float32(a * float64(v) / n2)
		}
	}
	return w
}

// guessRef is moe_guess's choice: the k largest logits of one row, ties to the lower
// index.
func guessRef(logits []float32, k int) []int32 {
	ids := make([]int32, 0, k)
	for range k {
		best := -1
		for e, v := range logits {
			if !slices.Contains(ids, int32(e)) && (best < 0 || v > logits[best]) {
				best = e
			}
		}
		ids = append(ids, int32(best))
	}
	return ids
}

// f32Bytes is v's bytes (GGUF's little-endian F32 rows).
func f32Bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		u := math.Float32bits(f)
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return out
}

// TestUnderflowRouterTies (no GPU): underflowRouter's logits make the routing and
// moe_guess's choice differ, so the ties cases of TestMoERouting test the reload.
func TestUnderflowRouterTies(t *testing.T) {
	x := (&fuseEnv{rng: rand.New(rand.NewPCG(3, 64))}).normals(2048, 1)
	const X, k = 64, 6
	w := underflowRouter(x, X)
	logits := make([]float32, X)
	for e := range logits {
		var s float64
		for i, v := range x {
			s += float64(w[e*len(x)+i]) * float64(v)
		}
		logits[e] = float32(s)
	}
	ids, _ := routeRef(logits, nil, X, k, 1, 1, false, false, 0)
	if g := guessRef(logits, k); slices.Equal(ids, g) || !slices.Equal(ids, []int32{0, 1, 2, 3, 4, 5}) || !slices.Equal(g, []int32{0, 1, 2, 63, 62, 61}) {
		t.Fatalf("routing %v, guess %v (logits %v)", ids, g, logits)
	}
}
