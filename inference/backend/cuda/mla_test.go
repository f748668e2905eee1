package cuda

import (
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestLatentKVQueue: LatentKV queues one mla_kv launch (a block a token, the RoPE table
// in dynamic shared memory, the cache's row stride in halves) for an F16 cache whose
// rows are the rope dims then the latent, and declines, queueing nothing, a cache of
// another type or width, RoPE over other dims, and fusion turned off.
func TestLatentKVQueue(t *testing.T) {
	const n, kvd, rd = 3, 512, 64
	r := backend.RoPE{HeadDim: rd + kvd, Dims: rd, Base: 10000}
	for _, c := range []struct {
		name      string
		cacheType quant.Type
		cacheCols int
		r         backend.RoPE
		off, want bool
	}{
		{"takes", quant.F16, rd + kvd, r, false, true},
		{"f32 cache", quant.F32, rd + kvd, r, false, false},
		{"cache width", quant.F16, rd + kvd + 8, r, false, false},
		{"rope dims", quant.F16, rd + kvd, backend.RoPE{HeadDim: rd + kvd, Dims: 32, Base: 10000}, false, false},
		{"fusion off", quant.F16, rd + kvd, r, true, false},
	} {
		q := newMMQQueue("mla_kv")
		q.fuse.cfg.off = c.off
		cache := q.tensor(t, c.cacheType, 100, c.cacheCols)
		kv, kpe, norm := q.tensor(t, quant.F32, n, kvd), q.tensor(t, quant.F32, n, rd), q.tensor(t, quant.F32, 1, kvd)
		pos, slots := q.tensor(t, quant.I32, n, 1), q.tensor(t, quant.I32, n, 1)
		got := q.LatentKV(cache, kv, kpe, norm, 1e-6, pos, slots, c.r)
		ls := q.launches()
		if got != c.want || len(ls) != map[bool]int{true: 1}[c.want] {
			t.Errorf("%s: LatentKV %v with %d launches, want %v", c.name, got, len(ls), c.want)
			continue
		}
		if !c.want {
			continue
		}
		l := ls[0]
		if l.name != "mla_kv" || l.gx != n || l.bx != 256 || l.sm != 4*rd || l.args[1] != uint64(rd+kvd) || l.args[4] != kvd || l.args[11] != rd {
			t.Errorf("%s: launch %s grid %d, %d threads, %d bytes, args %v", c.name, l.name, l.gx, l.bx, l.sm, l.args[:12])
		}
	}
}
