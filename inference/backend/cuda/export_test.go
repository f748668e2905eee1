package cuda

import "ember/inference/quant"

// NoSharedAttention makes b use the attention kernels that keep no scores in shared
// memory (those that long contexts use), so that tests cover them.
func NoSharedAttention(b *Backend) { b.attnSmem = 0 }

// NoBranch makes b queue Beside's runs as one chain, as $EMBER_CUDA_NO_BRANCH does.
func NoBranch(b *Backend) { b.br.off = true }

// BranchedGraphs is the graphs b built with branches.
func BranchedGraphs(b *Backend) int { return b.st.dags }

// Cubins is how many of b's modules were loaded from machine code made for the GPU.
func Cubins(b *Backend) int { return b.cubins }

// Modules is how many modules b loaded, and which of their kernels wait on the grid
// before them (programmatic dependent launch) by module.
func Modules(b *Backend) (int, map[string]map[string]bool) {
	out := map[string]map[string]bool{}
	for _, m := range b.modules {
		out[m.name] = m.pdl
	}
	return len(b.modules), out
}

// RouteKernel is the fused routing kernel the backend picks for x experts of type t
// (plain: softmax, no selection biases or group limits, at most 32 chosen, the guess
// on) under $EMBER_CUDA_ROUTE_WIDE's value wide, and the rows a warp's task takes.
func RouteKernel(t quant.Type, x int, plain bool, wide string) (string, int) {
	return routeKernel(t, x, plain, routeWideFromEnv(wide))
}

// RoutePlain is routePlain: whether RoutedExperts takes a token's routing as plain.
func RoutePlain(sigmoid, bias bool, nGroup, nGroupUsed, k int, noGuess bool) bool {
	return routePlain(sigmoid, bias, nGroup, nGroupUsed, k, noGuess)
}
