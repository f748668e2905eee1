package cuda

import (
	"encoding/binary"
	"os"
)

// WidenEnv names an environment variable: unless it is 0, Weight stores Q5_0 weights as
// Q8_0 rows holding the same values (widenQ5) while the device can spare the extra bytes
// (spare: at least half its memory, and f16KeepFree, free after them). A Q5_0 block's
// values are 5-bit integers times its scale, which Q8_0's int8 values and the same
// scale hold exactly; Q5_0 and Q8_0 products
// both take Q8_0 activation rows and sum each block as an integer times the two scales,
// so only the order of the per-block sums may differ. Q8_0's 34 bytes a block against 22
// are read by mv1_q8_0's one 16-byte load a lane instead of mv1_q5_0's five 2-byte ones:
// DeepSeek-V2-Lite's routed downs (K = 1,408 rules out the K-quants, so a Q4_K_M file
// holds them as Q5_0) ran at ~1.05 TB/s as Q5_0 (mmv_id_q5_0) against ~2.0 as Q8_0
// (mmv_id_q8_0) under ncu in session 43; widened, V2-Lite's tg128 went from ~595 to ~608
// tok/s on an H200 (session 45, NOTES.md).
const WidenEnv = "EMBER_CUDA_WIDEN"

// widenQ5 rewrites Q5_0 blocks (22 bytes: the f16 scale d, qh's 32 high bits, 16 bytes
// of low nibbles) as Q8_0 blocks (34 bytes: d, then 32 int8 values), both in GGUF order:
// value j < 16 is (qs[j] & 15 | bit j of qh << 4) - 16, value j + 16 is (qs[j] >> 4 | bit
// j + 16 of qh << 4) - 16. src holds whole blocks (rows of whole blocks).
func widenQ5(src []byte) []byte {
	nb := len(src) / 22
	out := make([]byte, 34*nb)
	for ib := 0; ib < nb; ib++ {
		in, o := src[22*ib:22*ib+22], out[34*ib:34*ib+34]
		o[0], o[1] = in[0], in[1]
		qh := binary.LittleEndian.Uint32(in[2:6])
		for j := 0; j < 16; j++ {
			lo, hi := int(in[6+j]&15)|int(qh>>j&1)<<4, int(in[6+j]>>4)|int(qh>>(j+16)&1)<<4
			o[2+j], o[18+j] = byte(int8(lo-16)), byte(int8(hi-16))
		}
	}
	return out
}

// widenFromEnv reads WidenEnv: on unless "0".
func widenFromEnv() bool { return os.Getenv(WidenEnv) != "0" }
