package cuda

import "os"

// Q5PEnv names an environment variable: when 0, the batch-1 routed products of a widened
// Q5_0 weight (DeepSeek-V2-Lite's routed downs: Q5_0 in the file, Q8_0 on the device,
// widen.go) read the widened rows (mmv_id_q8_0, 34 bytes a 32-value block). Otherwise
// they read a packed copy, 22 bytes a block (mmv_id_q5p, with mmv_id_q8_0's bits;
// q5p_pack makes the copy on the device the first time, when the device can spare it).
// Session 102 (H100): 7.69 us a launch against 8.66, V2-Lite's step 1.1% shorter.
const Q5PEnv = "EMBER_CUDA_Q5P"

// q5pConf is the packed copies' switch and tally.
type q5pConf struct {
	on           bool
	count, bytes int
}

func q5pFromEnv() q5pConf { return q5pConf{on: os.Getenv(Q5PEnv) != "0"} }

// q5pStride is a packed row's bytes for cols values: 22 a block, 16-byte aligned.
func q5pStride(cols int) int { return align16(22 * cols / 32) }

// q5pBytes is the size of w's packed copy.
func q5pBytes(w *tensor) int { return w.rows * q5pStride(w.cols) }

// q5pCopy returns w's packed copy (queueing q5p_pack the first time), or 0 when the
// switch is off, w is not a widened Q5_0 weight, or the device cannot spare the copy.
func (b *Backend) q5pCopy(w *tensor) uint64 {
	if !b.q5.on || !w.widened {
		return 0
	}
	return b.packCopy(w, &w.q5p, q5pBytes(w), "q5p_pack", w.cols/32, &b.q5.count, &b.q5.bytes)
}

// Q5PCopies reports the packed Q5_0 copies made so far and the device memory they hold.
func (b *Backend) Q5PCopies() (count, bytes int) { return b.q5.count, b.q5.bytes }
