package deepseek2

import (
	"context"
	"fmt"
	"math"

	"ember/inference/backend"
	"ember/inference/model"
	"ember/inference/quant"
)

// moeWeights are one MoE layer's router, routed experts and shared experts.
type moeWeights struct {
	gateInp backend.Tensor // ffn_gate_inp {NEmbd, nExpert}, F32 in converted files
	probsB  []float32      // exp_probs_b.bias: added to the probabilities for selection only; nil when absent
	// Per-expert views of ffn_{gate,up}_exps [nFFExp, NEmbd] and ffn_down_exps [NEmbd, nFFExp].
	gate, up, down []backend.Tensor
	// The stacks they view, and exp_probs_b on the backend (nil when absent), for a
	// backend that routes on the device (deviceExperts).
	gateAll, upAll, downAll, probsBT backend.Tensor
	shared                           *model.FFNWeights // ffn_*_shexp, width nFFExp*nShared; nil without shared experts
}

// moeHost are the host buffers of one routing step, kept to spare allocations.
type moeHost struct {
	logits  []float32 // [n, nExpert]
	ids     []int32   // per (token, slot) pair in expert order: its token
	slots   []int32   // [nUsed][n]: where pair (token, slot) sits in expert order
	weights []float32 // per pair, its weight repeated over NEmbd
	up      []backend.Group
	down    []backend.Group
}

func (m *Model) bindMoE(l *model.Loader, name func(string) string) *moeWeights {
	p, c, be := m.p, m.cfg, m.be
	X, F, E := c.nExpert, c.nFFExp, p.NEmbd
	w := &moeWeights{gateInp: l.Matrix(name("ffn_gate_inp.weight"), E, X)}
	gate := l.Stack(name("ffn_gate_exps.weight"), E, F, X)
	up := l.Stack(name("ffn_up_exps.weight"), E, F, X)
	down := l.Stack(name("ffn_down_exps.weight"), F, E, X)
	if c.nShared > 0 {
		fs := F * c.nShared
		w.shared = &model.FFNWeights{
			Gate: l.Matrix(name("ffn_gate_shexp.weight"), E, fs),
			Up:   l.Matrix(name("ffn_up_shexp.weight"), E, fs),
			Down: l.Matrix(name("ffn_down_shexp.weight"), fs, E),
		}
	}
	if b := name("exp_probs_b.bias"); l.Has(b) {
		t, raw := l.Raw(b, X)
		if raw != nil {
			w.probsB = make([]float32, X)
			if err := quant.Dequantize(t, raw, w.probsB); err != nil {
				l.Fail(fmt.Errorf("model: tensor %q: %w", b, err))
			}
			w.probsBT = l.F32(b, w.probsB)
		}
	}
	if l.Err() != nil {
		return w
	}
	w.gateAll, w.upAll, w.downAll = gate, up, down
	for e := 0; e < X; e++ {
		w.gate = append(w.gate, be.View(gate, e*F, F))
		w.up = append(w.up, be.View(up, e*F, F))
		w.down = append(w.down, be.View(down, e*E, E))
	}
	return w
}

// route picks each token's experts from its router logits as llama.cpp's build_moe_ffn
// does: probabilities by softmax (ggml_soft_max: float exps, a double sum) or sigmoid,
// the nUsed highest (plus exp_probs_b) in descending order, ties to the lower index,
// their probabilities optionally normalised to sum 1 and scaled. sel and wts get nUsed
// entries per token.
func (c *config) route(logits []float32, bias []float32, sel []int, wts []float32) {
	X, k := c.nExpert, c.nUsed
	probs := make([]float32, X)
	score := make([]float32, X)
	for i := 0; i < len(logits)/X; i++ {
		row := logits[i*X : (i+1)*X]
		if c.sigmoid {
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
		copy(score, probs)
		for e := range bias {
			score[e] += bias[e]
		}
		c.limitGroups(score)
		s, w := sel[i*k:(i+1)*k], wts[i*k:(i+1)*k]
		for j := range s {
			best := -1
			for e := 0; e < X; e++ {
				if taken(s[:j], e) {
					continue
				}
				if best < 0 || score[e] > score[best] {
					best = e
				}
			}
			s[j], w[j] = best, probs[best]
		}
		if c.wNorm {
			var sum float64
			for _, x := range w {
				sum += float64(x)
			}
			d := max(float32(sum), 6.103515625e-5)
			for j := range w {
				w[j] /= d
			}
		}
		if c.wScale != 0 {
			for j := range w {
				w[j] *= c.wScale
			}
		}
	}
}

// limitGroups keeps, when experts are routed in groups, only the nGroupUsed groups whose
// two best scores sum highest (ties to the lower group), setting the others' scores to
// -Inf, as llama.cpp's build_moe_ffn does.
func (c *config) limitGroups(score []float32) {
	if c.nGroup <= 1 || c.nGroupUsed >= c.nGroup {
		return
	}
	per := c.nExpert / c.nGroup
	sums := make([]float32, c.nGroup)
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
	var keep []int
	for len(keep) < c.nGroupUsed {
		best := -1
		for g := range sums {
			if !taken(keep, g) && (best < 0 || sums[g] > sums[best]) {
				best = g
			}
		}
		keep = append(keep, best)
	}
	for g := 0; g < c.nGroup; g++ {
		if !taken(keep, g) {
			for e := g * per; e < (g+1)*per; e++ {
				score[e] = float32(math.Inf(-1))
			}
		}
	}
}

func taken(s []int, e int) bool {
	for _, x := range s {
		if x == e {
			return true
		}
	}
	return false
}

// deviceExperts is an optional backend op (the CUDA backend has it): route x's rows
// from their router logits and run the chosen experts (gate, up and down stacked),
// their outputs weighted and summed into dst, all on the device, computing what
// moeFFN's host path computes. ids, wts (one entry per (token, slot) pair) and g, u, d
// (pair rows) are scratch. It reports false, having done nothing, for cases it does
// not take; the host path runs then.
type deviceExperts interface {
	RoutedExperts(dst, x, logits, gate, up, down, probsB, ids, wts, g, u, d backend.Tensor,
		nGroup, nGroupUsed int, sigmoid, norm bool, scale float32) bool
}

// normRouter is an optional backend op (the CUDA backend has it): one row's router
// logits from the residual sum a + b and the norm's weights nw, with the bits of the
// norm followed by the router's product of the normed row, reading only a and b, so
// that a backend may run it beside the norm. It reports false, having queued nothing,
// for cases it does not take.
type normRouter interface {
	NormRouter(logits, a, b, nw, router backend.Tensor, eps float32) bool
}

// ffnNorm queues ffn_inp = cur + inpL and its norm (ffn_norm) and returns the normed
// row: cur itself, or for one row of a MoE layer on a backend with normRouter a row of
// its own (moe_xn), beside which the router's logits (moe_logits) are computed from
// cur and inpL (haveLogits), so that the router does not wait for the norm.
func (m *Model) ffnNorm(w *layer, cur, inpL, ffnInp backend.Tensor, n int) (xn backend.Tensor, haveLogits bool) {
	be, eps := m.be, m.p.RMSEps
	nr, ok := be.(normRouter)
	if w.moe == nil || n != 1 || !ok {
		be.Add(ffnInp, cur, inpL)
		be.RMSNorm(cur, ffnInp, w.ffnNorm, eps)
		return cur, false
	}
	xn, logits := m.scratch.Get("moe_xn", n), m.scratch.Get("moe_logits", n)
	backend.Beside(be, n, func() { haveLogits = nr.NormRouter(logits, cur, inpL, w.ffnNorm, w.moe.gateInp, eps) }, func() {
		be.Add(ffnInp, cur, inpL)
		be.RMSNorm(xn, ffnInp, w.ffnNorm, eps)
	})
	if haveLogits {
		m.normRouted++
	}
	return xn, haveLogits
}

// moeFFN writes into dst [n, NEmbd] the routed experts' weighted sum of cur's rows (the
// normed FFN input; cur may be dst) plus the shared experts' output. The router logits
// (already in moe_logits when haveLogits) are read back to the host, the (token,
// expert) pairs gathered by expert, each expert's SwiGLU FFN run on its rows, the rows
// weighted, and each token's rows summed in slot order, as llama.cpp sums them; or a
// backend with deviceExperts does all that without the read back.
func (m *Model) moeFFN(ctx context.Context, w *moeWeights, cur, dst backend.Tensor, n int, haveLogits bool) error {
	be, s, pr, c := m.be, m.scratch, m.pairs, m.cfg
	X, k, E := c.nExpert, c.nUsed, m.p.NEmbd
	h := &m.host
	// The shared experts first: their products take cur as rounded right after the
	// norm (a backend may round it in the norm's launch), before the router's F32
	// product comes between. They read only cur, and only the final Add reads their
	// output, so a backend may run them beside the router and the routed experts.
	var shexp backend.Tensor
	logits := s.Get("moe_logits", n)
	out := dst // without shared experts the sum goes straight to dst (cur read before)
	if w.shared != nil {
		out = s.Get("moe_out", n)
	}
	routed := false
	backend.Beside(be, n, func() { shexp = m.sharedFFN(w, cur, n) }, func() {
		if !haveLogits {
			be.MatMul(logits, w.gateInp, cur)
		}
		if de, ok := be.(deviceExperts); ok {
			P := n * k
			routed = de.RoutedExperts(out, cur, logits, w.gateAll, w.upAll, w.downAll, w.probsBT, pr.Get("ids", P), pr.Get("wsel", P),
				pr.Get("gate", P), pr.Get("up", P), pr.Get("down", P), c.nGroup, c.nGroupUsed, c.sigmoid, c.wNorm, c.wScale)
		}
	})
	if routed {
		if shexp != nil {
			be.Add(dst, out, shexp) // ffn_out = moe_out + ffn_shexp
		}
		return nil
	}
	h.logits = grow(h.logits, n*X)
	if err := be.ReadF32(ctx, logits, h.logits); err != nil {
		return fmt.Errorf("router logits: %w", err)
	}
	P := n * k
	sel, wts := make([]int, P), make([]float32, P)
	c.route(h.logits, w.probsB, sel, wts)

	// Counting sort of the pairs by expert, tokens in order within an expert.
	start := make([]int, X+1)
	for _, e := range sel {
		start[e+1]++
	}
	for e := 0; e < X; e++ {
		start[e+1] += start[e]
	}
	next := append([]int(nil), start[:X]...)
	h.ids, h.slots = grow(h.ids, P), grow(h.slots, P)
	h.weights = grow(h.weights, P*E)
	for q, e := range sel {
		at := next[e]
		next[e]++
		tok, slot := q/k, q%k
		h.ids[at] = int32(tok)
		h.slots[slot*n+tok] = int32(at)
		row := h.weights[at*E : (at+1)*E]
		for j := range row {
			row[j] = wts[q]
		}
	}
	ids, wt := pr.Get("ids", P), pr.Get("w", P)
	be.WriteI32(ids, h.ids)
	be.WriteF32(wt, h.weights)
	x, gate, up, down := pr.Get("x", P), pr.Get("gate", P), pr.Get("up", P), pr.Get("down", P)
	be.GetRows(x, cur, ids)
	// Every expert's rows in one grouped product for gate and up, one for down.
	h.up, h.down = h.up[:0], h.down[:0]
	for e := 0; e < X; e++ {
		a, cnt := start[e], start[e+1]-start[e]
		if cnt == 0 {
			continue
		}
		h.up = append(h.up, backend.Group{Dst: be.View(gate, a, cnt), W: w.gate[e], Row0: a},
			backend.Group{Dst: be.View(up, a, cnt), W: w.up[e], Row0: a})
		h.down = append(h.down, backend.Group{Dst: be.View(down, a, cnt), W: w.down[e], Row0: a})
	}
	backend.MatMulGroups(be, x, h.up)
	be.SwiGLU(gate, gate, up)
	backend.MatMulGroups(be, gate, h.down)
	be.Mul(down, down, wt)

	tmp := s.Get("moe_tmp", n)
	for j := 0; j < k; j++ {
		idx := s.Get(m.slotNames[j], n)
		be.WriteI32(idx, h.slots[j*n:(j+1)*n])
		if j == 0 {
			be.GetRows(out, down, idx)
			continue
		}
		be.GetRows(tmp, down, idx)
		be.Add(out, out, tmp)
	}
	if shexp != nil {
		be.Add(dst, out, shexp) // ffn_out = moe_out + ffn_shexp
	}
	return nil
}

// sharedFFN computes the shared experts' FFN of cur into shexp_out and returns it (nil
// without shared experts).
func (m *Model) sharedFFN(w *moeWeights, cur backend.Tensor, n int) backend.Tensor {
	if w.shared == nil {
		return nil
	}
	be, s := m.be, m.scratch
	g, u, out := s.Get("shexp_gate", n), s.Get("shexp_up", n), s.Get("shexp_out", n)
	backend.MatMulShared(be, cur, []backend.Proj{{Dst: g, W: w.shared.Gate}, {Dst: u, W: w.shared.Up}})
	be.SwiGLU(g, g, u)
	be.MatMul(out, w.shared.Down, g) // ffn_shexp
	return out
}

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}
