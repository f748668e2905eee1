package kvcache

import (
	"crypto/sha256"
	"encoding/binary"
)

// BlockHash identifies a full block of tokens together with everything before it: the
// hash of block i chains the hash of block i-1, so equal hashes mean (up to a 64-bit
// collision) equal token prefixes. The root, before the first block, is 0.
//
// The value is a stable format: the persistent prefix cache indexes its files in SQLite
// by it, so HashBlock must not change without a migration there.
type BlockHash uint64

// HashBlock returns the chain hash of one block of token ids that follows parent: the
// first 8 bytes, read little-endian, of SHA-256 over parent as 8 bytes little-endian
// followed by each token id as 4 bytes little-endian. The block size is implied by
// len(block); callers hash only full blocks.
func HashBlock(parent BlockHash, block []int32) BlockHash {
	h, _ := hashBlock(nil, parent, block)
	return h
}

// ChainHashes returns the chain hash of every full block of tokens, blocks of blockSize
// token positions: out[i] covers tokens[0 : (i+1)*blockSize]. A trailing partial block
// has no hash. It returns nil if blockSize < 1.
func ChainHashes(tokens []int32, blockSize int) []BlockHash {
	if blockSize < 1 {
		return nil
	}
	out := make([]BlockHash, 0, len(tokens)/blockSize)
	var buf []byte
	var h BlockHash
	for i := 0; i+blockSize <= len(tokens); i += blockSize {
		h, buf = hashBlock(buf, h, tokens[i:i+blockSize])
		out = append(out, h)
	}
	return out
}

// hashBlock is HashBlock with a scratch buffer that it returns for reuse, so hashing a
// chain allocates once.
func hashBlock(buf []byte, parent BlockHash, block []int32) (BlockHash, []byte) {
	buf = binary.LittleEndian.AppendUint64(buf[:0], uint64(parent))
	for _, t := range block {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(t))
	}
	sum := sha256.Sum256(buf)
	return BlockHash(binary.LittleEndian.Uint64(sum[:8])), buf
}
