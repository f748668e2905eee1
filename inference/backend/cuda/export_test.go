package cuda

// NoSharedAttention makes b use the attention kernels that keep no scores in shared
// memory (those that long contexts use), so that tests cover them.
func NoSharedAttention(b *Backend) { b.attnSmem = 0 }
