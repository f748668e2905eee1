package cuda

// Prefill attention on tensor cores (attention_tc64, attention_tc128 in
// kernels/cuda/attention_tc.cu). attention_smem scores one (query row, KV head) per block
// on CUDA cores, 390 us a layer for a 512-token prompt of Llama-3.1-8B; the tensor-core
// kernel takes tiles of 64 query vectors (64/G rows times the G query heads of one KV
// head) of one sequence and computes both products with f16 mma, two passes over the
// keys so that the probabilities round to f16 against the exact max and sum, as the
// reference rounds them.
//
// The rows of a tile must read one sequence's keys, and the sequences live on the device:
// the kernel cuts each chunk of 64/G consecutive rows at the rows where the sequence
// changes, and the host launches zs blocks per chunk, one per run (a block takes runs z,
// z+zs, ... of its chunk). Rows of few sequences (a prompt, or a few prompts and decode
// rows) are what it is for: many decode rows of many sequences would make one-row tiles
// that read every key twice, so those stay on the other kernels.
const (
	// prefillQ is the query vectors of a block (TC_Q in attention_tc.cu).
	prefillQ = 64
	// prefillThreads is the threads of a block (TC_THREADS).
	prefillThreads = 128
	// prefillMinRows is the fewest query rows the tensor-core kernel is chosen for.
	prefillMinRows = 64
	// prefillRowsPerSeq is the fewest rows per sequence of the batch (on average) it is
	// chosen for.
	prefillRowsPerSeq = 16
)

// attTC is the tensor-core (prefill) attention's state on a Backend.
type attTC struct {
	mode splitMode // auto: by prefillMinRows and prefillRowsPerSeq; on: whenever the shapes allow
	// smem records, for attention_tc64 and attention_tc128, whether their dynamic shared
	// memory limit was raised (1) or could not be (-1); 0 before the first launch.
	smem [2]int8
}

// prefillSmem is the dynamic shared memory of a block for head dim d: a Q tile and two
// stages of K and V tiles, all f16.
func prefillSmem(d int) int { return 2 * d * (prefillQ + 4*64) }

// attentionPrefill launches the tensor-core kernel when it applies and reports whether
// it did; args are the attention kernels' common arguments, g the query heads per KV
// head and seqs the sequences the rows may belong to (the block table's rows, 1 without
// a table).
func (b *Backend) attentionPrefill(args []uint64, rows, nkv, g, hd, vhd, seqs int) bool {
	if b.prefill.mode == splitOff || hd != vhd || (hd != 64 && hd != 128) || g > gqaMax || rows <= 0 {
		return false
	}
	if b.prefill.mode == splitAuto && (rows < prefillMinRows || rows < prefillRowsPerSeq*seqs) {
		return false
	}
	name, slot := "attention_tc64", 0
	if hd == 128 {
		name, slot = "attention_tc128", 1
	}
	smem := prefillSmem(hd)
	if b.prefill.smem[slot] == 0 {
		b.prefill.smem[slot] = 1
		if b.raiseSmem(b.kernel(name), smem) != nil {
			b.prefill.smem[slot] = -1
		}
	}
	if b.prefill.smem[slot] < 0 {
		return false
	}
	rt := prefillQ / g
	zs := max(1, min(rt, seqs))
	args = append(args, i64(rows), i64(zs))
	b.launch(name, nkv*zs, (rows+rt-1)/rt, prefillThreads, smem, args...)
	return true
}
