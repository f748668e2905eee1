package cuda

import (
	"slices"
	"testing"

	"ember/inference/backend"
	"ember/inference/quant"
)

// TestMLAKVRoPEQueue: DeepSeek-V2's latent-cache branch of a decode step, the cache row
// (LatentKV: mla_kv) then q_pe's rotation into the query rows' rope dims (RoPE, then
// SetRows of the rotated rows: rope2_set), queues one mla_kv_rope launch of the
// cache row's blocks and the rotation's (256 threads); not with $EMBER_CUDA_NO_MLA_ROPE,
// nor with another RoPE (other frequencies), nor when a launch came between.
func TestMLAKVRoPEQueue(t *testing.T) {
	const H, rope, lat, ch = 16, 64, 512, 64
	r := backend.RoPE{Style: backend.RoPENormal, Dims: rope, HeadDim: rope + lat, Base: 10000}
	for _, c := range []struct {
		name         string
		noMR, env    bool // env: noMR from NoMLARoPEEnv, read by LatentKV (no op before it)
		other        bool
		between      bool
		want         []string
		blocks, thrs int
	}{
		{"fused", false, false, false, false, []string{"mla_kv_rope"}, 1 + H, 256},
		{"off", true, false, false, false, []string{"mla_kv", "rope2_set"}, 0, 0},
		{"off by the environment", false, true, false, false, []string{"mla_kv", "rope2_set"}, 0, 0},
		{"another RoPE", false, false, true, false, []string{"mla_kv", "rope2_set"}, 0, 0},
		{"a launch between", false, false, false, true, []string{"mla_kv", "add_f32", "rope2_set"}, 0, 0},
	} {
		q := newQueueOnly(false)
		q.fuse.cfg.noMR = c.noMR
		if c.env {
			t.Setenv(NoMLARoPEEnv, "1")
			q.fuse.cfg.read = false
		}
		for _, n := range []string{"mla_kv", "mla_kv_rope"} {
			q.kernels[n] = &kernel{name: n}
		}
		cache, kv, kpe := q.tensor(quant.F16, 64, rope+lat), q.f32(1, lat), q.f32(1, rope)
		norm, pos, slots := q.f32(1, lat), q.tensor(quant.I32, 1, 1), q.tensor(quant.I32, 1, 1)
		qpe, qh := q.f32(H, rope), q.f32(H, rope+lat)
		hpos, qrows := q.tensor(quant.I32, H, 1), q.tensor(quant.I32, H, 1)
		if !q.LatentKV(cache, kv, kpe, norm, 1e-6, pos, slots, r) {
			t.Fatalf("%s: LatentKV declined", c.name)
		}
		if c.between {
			x := q.f32(1, 8)
			q.Add(x, x, x)
		}
		rq := r
		rq.HeadDim = rope
		if c.other {
			rq.Base = 500000
		}
		q.RoPE(qpe, hpos, rq)
		q.SetRows(q.Reshape(qh, H*(rope+lat)/ch, ch), qpe, qrows)
		d := slices.Clone(q.queue.dims)
		got := q.names()
		wantQueue(t, c.name, got, c.want...)
		if c.blocks > 0 && len(got) == 1 && (int(d[0]) != c.blocks || int(d[3]) != c.thrs) {
			t.Errorf("%s: grid %d blocks of %d threads, want %d of %d", c.name, d[0], d[3], c.blocks, c.thrs)
		}
	}
}
