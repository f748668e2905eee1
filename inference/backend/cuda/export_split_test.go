package cuda

// SplitAttention makes b split every attention whose shapes the split kernels take
// (attention_split.go), however few positions or many rows, so that tests cover them;
// with on false, b never splits.
func SplitAttention(b *Backend, on bool) {
	b.split.mode = splitOff
	if on {
		b.split.mode = splitOn
	}
}
