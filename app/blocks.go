package app

import (
	"context"
	"path/filepath"

	"ember/app/server"
	"ember/store"
)

// DefaultBlockCacheBytes caps the persistent prefix cache's files.
const DefaultBlockCacheBytes = 4 << 30

// OpenBlockCache opens the persistent prefix cache of l's model in dataDir/kvcache: KV
// blocks saved by one run of the engine and loaded by the next (engine.Options.Blocks).
// Blocks are keyed by the model file's fingerprint and the backend (or the split of
// layers over backends) that computed them.
func OpenBlockCache(ctx context.Context, dataDir string, l *Loaded, capBytes int64) (*store.BlockCache, error) {
	fp := server.Fingerprint(l.File) + "/" + l.computeKey()
	return store.OpenBlockCache(ctx, filepath.Join(dataDir, "kvcache"), fp, capBytes)
}
