package cuda

// NoFusion makes b run every op as its own launches (fuse.go), as $EMBER_CUDA_NO_FUSE
// does, so that tests can compare the fused kernels with the separate ones.
func NoFusion(b *Backend) { b.fuse = fusable{cfg: fuseCfg{read: true, off: true}} }

// Launches is the number of kernels b has launched or queued so far.
func Launches(b *Backend) int { return b.st.kernels + len(b.queue.fns) }
