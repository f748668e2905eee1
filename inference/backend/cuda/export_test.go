package cuda

// NoSharedAttention makes b use the attention kernels that keep no scores in shared
// memory (those that long contexts use), so that tests cover them.
func NoSharedAttention(b *Backend) { b.attnSmem = 0 }

// NoBranch makes b queue Beside's runs as one chain, as $EMBER_CUDA_NO_BRANCH does.
func NoBranch(b *Backend) { b.br.off = true }

// BranchedGraphs is the graphs b built with branches.
func BranchedGraphs(b *Backend) int { return b.st.dags }
