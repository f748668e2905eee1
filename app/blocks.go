package app

import (
	"context"
	"path/filepath"
	"strings"

	"ember/app/server"
	"ember/inference/engine"
	"ember/inference/quant"
	"ember/store"
)

// DefaultBlockCacheBytes caps the persistent prefix cache's files.
const DefaultBlockCacheBytes = 4 << 30

// OpenBlockCache opens the persistent prefix cache of l's model in dataDir/kvcache: KV
// blocks saved by one run of the engine and loaded by the next (engine.Options.Blocks).
// Blocks are keyed by the model file's fingerprint, the backend (or the split of layers
// over backends) that computed them and the KV cache's type (engine.Options.KVType; an
// F16 cache's keys name none).
func OpenBlockCache(ctx context.Context, dataDir string, l *Loaded, kvType string, capBytes int64) (*store.BlockCache, error) {
	fp := server.Fingerprint(l.File) + "/" + l.computeKey()
	if t, err := engine.ParseKVType(kvType); err != nil {
		return nil, err
	} else if t != quant.F16 {
		fp += "/" + strings.ToLower(kvType)
	}
	return store.OpenBlockCache(ctx, filepath.Join(dataDir, "kvcache"), fp, capBytes)
}
