package cuda

// LastKernel is the name of the kernel b launched or queued last.
func LastKernel(b *Backend) string { return b.last }
