package cuda

import (
	"fmt"

	"ember/inference/backend"
	"ember/inference/quant"
)

// HostMoEEnv names an environment variable: when set, RoutedExperts declines every case,
// so a mixture-of-experts model routes on the host (reading its router logits back).
const HostMoEEnv = "EMBER_CUDA_HOST_MOE"

// moeMaxExperts bounds the experts RoutedExperts takes (MOE_MAX_EXPERTS in moe.cu). Up
// to moeMaxPairs (token, slot) pairs each pair's dots run as mat-vecs (mmv_id); past it
// the pairs are grouped by expert on the device (moe_group) and each expert's rows run
// on the tensor cores (mmq_id), reading its weights once, up to moeMaxGrouped pairs;
// larger batches (or weights mmq does not take) route on the host.
const moeMaxExperts, moeMaxPairs, moeMaxGrouped = 256, 64, 1 << 16

// MoETileEnv names an environment variable that fixes the grouped experts' tile width
// (8, 16 or 64 pairs: mmq_id8_, mmq_id16_, mmq_id_) instead of moeTile's choice.
const MoETileEnv = "EMBER_CUDA_MOE_TILE"

// RouteGridEnv names an environment variable that sets mmv_route_q4_k's grid (blocks in
// all, at most four an SM; default three an SM, what its registers let be resident),
// for timing other grids, whole blocks an SM or between: grids under three an SM leave
// room on some SMs for the shared experts' kernels while the routed blocks route.
const RouteGridEnv = "EMBER_CUDA_ROUTE_GRID"

// RouteSpecEnv names an environment variable: unless it is "off", mmv_route_q4_k
// (mmv_route_q5_k) starts loading the experts it guesses from the logits alone (the
// largest, which softmax's routing picks unless probabilities tie) while it routes, and
// loads again where the routing chose otherwise (moe.cu's moe_guess).
const RouteSpecEnv = "EMBER_CUDA_ROUTE_SPEC"

// moeTile is the tile width of the grouped experts' products for P pairs over X experts:
// a tile takes one expert's pairs, and a 64-pair tile costs the tensor cores a full
// tile's work however few pairs it holds, so batches of a few pairs an expert (decode of
// many sequences) take narrower tiles, and prompts (tens of pairs an expert) wide ones.
// On the H200, DeepSeek-V2-Lite decoding 64 sequences (6 pairs an expert) did 4,278
// tok/s in 16-pair tiles, 4,109 in 8-pair ones and 3,349 in 64-pair ones.
func (b *Backend) moeTile(P, X int) int {
	if b.moeTN != 0 {
		return b.moeTN
	}
	switch avg := P / max(X, 1); {
	case avg <= 3:
		return 8
	case avg <= 24:
		return 16
	}
	return mmqTN
}

// RoutedExperts routes the rows of x from their router logits and runs the chosen
// experts' SwiGLU FFNs, their outputs weighted and summed into dst, all on the device:
// no read back of the logits, so a decode step of a mixture-of-experts model stays one
// batch of launches (a CUDA graph). It is the optional op that
// inference/model/deepseek2 declares, and computes what its host path does (routing as
// deepseek2's route, each dot as MatMul's mat-vec, products and sums in slot order).
//
// x [n, E] and dst [n, E] F32 (dst may alias x); logits [n, nExpert] F32; gate and up
// [nExpert*F, E] and down [nExpert*E, F] are the experts' weights stacked; probsB
// [1, nExpert] F32 or nil adds to the probabilities for selection only; ids (I32) and
// wts (F32) have one entry per (token, slot) pair, and g, u [pairs, F] and d [pairs, E]
// F32 are scratch. It reports false, having queued nothing, for a case it does not take
// (more than moeMaxPairs pairs or moeMaxExperts experts, $EMBER_CUDA_HOST_MOE).
func (b *Backend) RoutedExperts(dst, x, logits, gate, up, down, probsB, ids, wts, g, u, d backend.Tensor,
	nGroup, nGroupUsed int, sigmoid, norm bool, scale float32) bool {
	b.evict.moe = true // from here on the dense products load evict-first (evict.go)
	if b.hostMoE {
		return false
	}
	xt, lt, dt := want(x, quant.F32), want(logits, quant.F32), want(dst, quant.F32)
	it, wt := want(ids, quant.I32), want(wts, quant.F32)
	n, E, X := xt.rows, xt.cols, lt.cols
	P := it.rows * it.cols
	if n == 0 || P%n != 0 || X > moeMaxExperts {
		return false
	}
	k := P / n
	gw, uw, dw := get(gate), get(up), get(down)
	grouped := P > moeMaxPairs
	if grouped && (P > moeMaxGrouped || !b.mmqTakes(gw) || !b.mmqTakes(uw) || !b.mmqTakes(dw)) {
		return false
	}
	F := gw.rows / X
	gt, ut, pd := want(g, quant.F32), want(u, quant.F32), want(d, quant.F32)
	if k > X || lt.rows != n || wt.rows*wt.cols != P || dt.rows != n || dt.cols != E ||
		gw.rows != X*F || gw.cols != E || uw.rows != X*F || uw.cols != E || dw.rows != X*E || dw.cols != F ||
		gt.rows != P || gt.cols != F || ut.rows != P || ut.cols != F || pd.rows != P || pd.cols != E {
		panic(fmt.Sprintf("cuda: RoutedExperts: x %dx%d, logits %dx%d, %d pairs, gate %dx%d, up %dx%d, down %dx%d, g %dx%d, u %dx%d, d %dx%d",
			n, E, lt.rows, X, P, gw.rows, gw.cols, uw.rows, uw.cols, dw.rows, dw.cols, gt.rows, gt.cols, ut.rows, ut.cols, pd.rows, pd.cols))
	}
	var bias *tensor
	if probsB != nil {
		if bias = want(probsB, quant.F32); bias.rows*bias.cols != X {
			panic(fmt.Sprintf("cuda: RoutedExperts: %d biases for %d experts", bias.rows*bias.cols, X))
		}
	}
	route := []uint64{ptr(it), ptr(wt), ptr(lt), ptr(bias), i64(X), i64(k), i64(nGroup), i64(nGroupUsed), i64(b2i(sigmoid)),
		i64(b2i(norm)), f32(scale)}
	fusedRoute := n == 1 && b.routeTakes(gw, uw)
	if !fusedRoute {
		b.launch("moe_topk", n, 1, 32, 0, route...)
	}
	// Gate and up of every pair from its token's row, then the pairs' SwiGLU and down.
	prod := func(d, w *tensor, xq uint64, xs, xdiv int) { b.mmvID(d, w, nil, nil, X, xq, xs, it, xdiv) }
	if grouped {
		tn := b.moeTile(P, X)
		if !b.mmqFits(gw.typ, tn) || !b.mmqFits(uw.typ, tn) || !b.mmqFits(dw.typ, tn) {
			tn = 16 // the GPU's shared memory holds no wider tile of one of them (compat.go)
		}
		grp := b.groupPairs(it, P, X, tn)
		prod = func(d, w *tensor, xq uint64, xs, xdiv int) { b.mmqID(d, w, X, xq, xs, grp, xdiv) }
	}
	xq, xs := b.quantize(xt, partner(gw.typ))
	if fusedRoute {
		b.mmvRoute(route, gt, gw, ut, uw, X, routePlain(sigmoid, bias != nil, nGroup, nGroupUsed, k, b.noGuess), xq)
	} else if !grouped && uw.typ == gw.typ && pairedMV(gw.typ) && uw.stride == gw.stride && !b.fuseOff() {
		b.mmvID(gt, gw, ut, uw, X, xq, xs, it, k) // gate and up in one launch
	} else {
		prod(gt, gw, xq, xs, k)
		if partner(uw.typ) != partner(gw.typ) {
			xq, xs = b.quantize(xt, partner(uw.typ))
		}
		prod(ut, uw, xq, xs, k)
	}
	b.SwiGLU(g, g, u)
	gq, gs := b.quantize(gt, partner(dw.typ))
	prod(pd, dw, gq, gs, 1)
	args := []uint64{ptr(dt), ptr(pd), ptr(wt), i64(k), i64(E), i64(n)}
	b.launch("moe_sum", blocks(n*E), 1, 256, 0, args...)
	b.mark(fusable{kind: fuseMoESum, dst: dt.ptr, rows: n, cols: E, args: args, mem: [2]span{spanOf(pd), spanOf(wt)}})
	return true
}

// routeTakes reports whether mmv_route_q4_k (mmv_route_q5_k) takes a decode token's
// routing and its experts' gate and up: Q4_K (Q5_K) gate and up of one layout, rows of
// at most 2,048 columns (one mv1 step), fusion on and RouteFuseEnv not 0.
func (b *Backend) routeTakes(gw, uw *tensor) bool {
	_, rows := routeKernel(gw.typ, 0, false, 0)
	return rows > 0 && uw.typ == gw.typ && uw.stride == gw.stride && gw.cols%256 == 0 && gw.cols <= 2048 &&
		!b.fuseOff() && b.fuse.cfg.rte
}

// RouteWideEnv names an environment variable: when set, Q4_K routing of at most 64
// experts runs on mmv_route_q4_k (the code for up to 256 experts), or with "64" on
// mmv_route_q4_k_64 (every routing option's code), rather than the narrowest kernel
// that takes it (the same bits), for timing them.
const RouteWideEnv = "EMBER_CUDA_ROUTE_WIDE"

// routeWideFromEnv is RouteWideEnv's value as routeKernel's wide: 0 unset, 1 "64", 2
// anything else.
func routeWideFromEnv(v string) int {
	switch v {
	case "":
		return 0
	case "64":
		return 1
	}
	return 2
}

// routePlain reports whether a token's routing is plain for routeKernel: softmax, no
// selection biases, no group limits (at most one group, or every group used), at most 32
// chosen, and the guess on (noGuess: RouteSpecEnv off).
func routePlain(sigmoid, bias bool, nGroup, nGroupUsed, k int, noGuess bool) bool {
	return !sigmoid && !bias && (nGroup <= 1 || nGroupUsed >= nGroup) && k <= 32 && !noGuess
}

// routeKernel is the fused routing kernel of t experts (x of them; plain: softmax, no
// selection biases or group limits, at most 32 chosen, the guess on) and the rows a
// warp's task takes there (mv1.cuh's Q4K_R1 and Q5K_R1); rows 0 for a type no such
// kernel takes. Q4_K's narrowest forms carry only their routing's code
// (mmv_route_q4_k_64s: plain routing of at most 64 experts; mmv_route_q4_k_64: any of at
// most 64), each faster in V2-Lite's decode chain than the wider one (NOTES.md, session
// 96; trims of other kernels gained nothing); Q5_K's plain one is mmv_route_q5_k_64s.
// wide (RouteWideEnv) 1 skips the first, 2 both; either skips Q5_K's.
func routeKernel(t quant.Type, x int, plain bool, wide int) (name string, rows int) {
	switch t {
	case quant.Q4_K:
		switch {
		case x <= 64 && plain && wide == 0:
			return "mmv_route_q4_k_64s", 4
		case x <= 64 && wide <= 1:
			return "mmv_route_q4_k_64", 4
		}
		return "mmv_route_q4_k", 4
	case quant.Q5_K:
		if x <= 64 && plain && wide == 0 {
			return "mmv_route_q5_k_64s", 2
		}
		return "mmv_route_q5_k", 2
	}
	return "", 0
}

// mmvRoute queues the fused routing kernel routeKernel picks (mmv_route_q4_k or
// mmv_route_q5_k, or a narrower form of them): moe_topk's routing of one token (route:
// moe_topk's arguments) and the gate and up products of its k experts from its Q8_K row
// xq into g and u ([k, F] each), as moe_topk and mmvID would; plain: softmax routing
// without selection biases or group limits, at most 32 chosen, the guess on. The grid is
// at most three blocks an SM, so that every block is resident and routes once.
func (b *Backend) mmvRoute(route []uint64, g, gw, u, uw *tensor, nExpert int, plain bool, xq uint64) {
	if xq == 0 {
		return
	}
	M, k := gw.rows/nExpert, g.rows
	if u.cols != g.cols {
		panic(fmt.Sprintf("cuda: mmvRoute: g %dx%d, u %dx%d", g.rows, g.cols, u.rows, u.cols))
	}
	sms := smsOr(b.dev.SMs)
	name, R := routeKernel(gw.typ, nExpert, plain, b.routeWide)
	tasks := 2 * k * ((M + R - 1) / R) // R rows a warp's task, four warps a block
	grid := 3 * sms
	if b.routeGrid > 0 {
		grid = min(b.routeGrid, 4*sms)
	}
	b.launch(name, min((tasks+3)/4, grid), 1, 128, 0, append(route, ptr(gw), ptr(uw), i64(gw.stride),
		i64(M*gw.stride), xq, ptr(g), ptr(u), i64(g.cols), i64(M), i64(gw.cols), i64(b2i(!b.noGuess)))...)
}

// mmvID runs mmv_id for the P = d.rows pairs: pair z multiplies expert ids[z]'s matrix
// (w.rows/nExpert rows of w) by quantized activation row z/xdiv into d's row z; and, in
// the same launch, by w2's into d2's when w2 is not nil (the up experts beside the gate
// ones: the same type and layout, a type pairedMV takes).
func (b *Backend) mmvID(d, w, d2, w2 *tensor, nExpert int, xq uint64, xstride int, ids *tensor, xdiv int) {
	if xq == 0 {
		return
	}
	s, ok := suffix[w.typ]
	if !ok {
		panic(fmt.Sprintf("cuda: RoutedExperts: no kernel for %v weights", w.typ))
	}
	M := w.rows / nExpert
	nrb := idRowBlocks(w.typ, M, w.cols)
	name, wp, ws := "mmv_id_"+s, ptr(w), w.stride
	second, gy := mmvSecond(nil, nil, 0, 0, 0), 1
	if w2 != nil {
		second, gy = mmvSecond(w2, d2, d2.cols, M, nrb), 2
	} else if p := b.q5pCopy(w); p != 0 {
		name, wp, ws = "mmv_id_q5p", p, q5pStride(w.cols) // w's packed Q5_0 copy (q5p.go)
	}
	b.launch(name, nrb*d.rows, gy, 128, mv1Smem(w.typ, w.cols), append([]uint64{wp, i64(ws), xq, i64(xstride),
		ptr(d), i64(d.cols), i64(M), i64(w.cols), 1, ptr(ids), i64(M * ws), i64(xdiv), i64(nrb), 1}, second...)...)
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// moeGroups are the device buffers of moe_group's output: the pair map, the tiles and
// their count, the most tiles there can be (the mmq_id grid's y size), and the tile
// width (pairs a tile at most).
type moeGroups struct {
	mp, tiles, ntiles uint64
	maxTiles, tn      int
}

// groupPairs queues moe_group for the P pairs of ids over X experts, in tiles of at most
// tn pairs.
func (b *Backend) groupPairs(ids *tensor, P, X, tn int) moeGroups {
	maxTiles := (P+tn-1)/tn + X
	mapBytes, tileBytes := align16(4*P), 16*maxTiles
	base := b.scratchFor(&b.moeGroup, mapBytes+tileBytes+16)
	g := moeGroups{mp: base, tiles: base + uint64(mapBytes), ntiles: base + uint64(mapBytes+tileBytes), maxTiles: maxTiles, tn: tn}
	if base != 0 {
		b.launch("moe_group", 1, 1, 1024, 0, g.mp, g.tiles, g.ntiles, ptr(ids), i64(P), i64(X), i64(tn))
	}
	return g
}
