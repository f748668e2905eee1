package cuda

// PrefillAttention makes b use the tensor-core prefill attention (attention_prefill.go)
// for every attention whose shapes it takes, however few rows or many sequences; with on
// false, b never uses it.
func PrefillAttention(b *Backend, on bool) {
	b.prefill.mode = splitOff
	if on {
		b.prefill.mode = splitOn
	}
}
