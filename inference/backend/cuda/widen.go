package cuda

import "os"

// WidenEnv names an environment variable: unless it is 0, Weight stores Q5_0 weights as
// Q8_0 rows holding the same values (packWidenQ5, pack.go) while the device can spare
// the extra bytes (spare: at least half its memory, and f16KeepFree, free after them). A
// Q5_0 block's values are 5-bit integers times its scale, which Q8_0's int8 values and
// the same scale hold exactly; Q5_0 and Q8_0 products both take Q8_0 activation rows and
// sum each block as an integer times the two scales, so only the order of the per-block
// sums may differ. Q8_0's 34 bytes a block against 22 are read by mv1_q8_0's one 16-byte
// load a lane instead of mv1_q5_0's five 2-byte ones: DeepSeek-V2-Lite's routed downs
// (K = 1,408 rules out the K-quants, so a Q4_K_M file holds them as Q5_0) ran at ~1.05
// TB/s as Q5_0 (mmv_id_q5_0) against ~2.0 as Q8_0 (mmv_id_q8_0) under ncu in session 43;
// widened, V2-Lite's tg128 went from ~595 to ~608 tok/s on an H200 (session 45,
// NOTES.md).
const WidenEnv = "EMBER_CUDA_WIDEN"

// widenFromEnv reads WidenEnv: on unless "0".
func widenFromEnv() bool { return os.Getenv(WidenEnv) != "0" }
