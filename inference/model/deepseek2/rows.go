package deepseek2

import (
	"ember/inference/backend"
	"ember/inference/model"
	"ember/inference/quant"
)

// gather returns the rows idx of raw (rb bytes each) as new bytes; -1 is a zero row,
// which every supported block type dequantizes to zeros (its scales are zero).
func gather(raw []byte, rb int, idx []int) []byte {
	out := make([]byte, len(idx)*rb)
	for i, r := range idx {
		if r >= 0 {
			copy(out[i*rb:(i+1)*rb], raw[r*rb:(r+1)*rb])
		}
	}
	return out
}

// rowBytes is the byte length of a row of cols elements of t (0 on error, which the
// loader reports when it binds the rows).
func rowBytes(t quant.Type, cols int) int {
	n, err := quant.RowBytes(t, uint64(cols))
	if err != nil {
		return 0
	}
	return int(n)
}

// queryByParts binds attn_q (H heads of nope then rope rows, qIn columns) with its rows
// gathered as every head's nope rows, then every head's rope rows: the two query
// products of a decode step are then one matrix each (views of it).
func queryByParts(l *model.Loader, name string, qIn, H, nope, rope int) backend.Tensor {
	qk := nope + rope
	t, raw := l.Raw(name, qIn, H*qk)
	if raw == nil {
		return nil
	}
	idx := make([]int, 0, H*qk)
	for _, part := range [][2]int{{0, nope}, {nope, qk}} {
		for h := 0; h < H; h++ {
			for j := part[0]; j < part[1]; j++ {
				idx = append(idx, h*qk+j)
			}
		}
	}
	return l.Bytes(name, t, H*qk, qIn, gather(raw, rowBytes(t, qIn), idx))
}
