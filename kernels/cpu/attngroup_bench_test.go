package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"ember/kernels/cpu"
)

// BenchmarkAttentionGroup: the g = 4 query heads of a KV head (Llama-3's grouping) over
// nkv cached positions, head dims 128, in one grouped call (group) and in 4 single-head
// calls (single), over F16 and Q8_0 caches of 8 KV heads as a cache lays them out. Each
// iteration takes the next KV head, as a decode step does: of one layer (mem=warm: the
// layer's cache, 4 to 16 MiB in F16, may stay in the last-level cache) or of the next of
// layers that add up to 128 MiB of F16 (mem=cold: from DRAM). ns/op is for the 4 heads;
// GB/s counts the K and V bytes of the KV head once.
func BenchmarkAttentionGroup(b *testing.B) {
	const g, hd, heads = 4, 128, 8
	const rb = hd / aq8QK * aq8Block
	for _, nkv := range []int{1024, 4096} {
		rng := rand.New(rand.NewPCG(75, 76))
		layer := nkv * heads // rows of a layer
		kq, vq, k16, v16 := aq8BenchRows(rng, layer, hd)
		layers := max(1, (128<<20)/(2*len(k16)*2))
		kqc, vqc := agLayers(kq, layers), agLayers(vq, layers)
		k16c, v16c := agLayers(k16, layers), agLayers(v16, layers)
		q := elemRand(rng, g*hd, 1)
		out := make([]float32, g*hd)
		scratch := make([]float32, cpu.AttentionGroupScratchLen(g, nkv, hd))
		const scale = 0.088
		for _, isa := range cpu.Supported() {
			k := cpu.New(isa)
			for _, cold := range []bool{false, true} {
				n, mem := heads, "warm"
				if cold {
					n, mem = heads*layers, "cold"
				}
				run := func(name string, bytes int, f func(h int)) {
					b.Run(fmt.Sprintf("%s/nkv=%d/g=%d/mem=%s/%v", name, nkv, g, mem, isa), func(b *testing.B) {
						lgLoop(b, float64(bytes), "GB/s", func(i int) { f(i % n) })
					})
				}
				// KV head h: row r of its layer h/heads at element or byte offset (h%heads)*row
				// of the layer's row r
				f16 := func(c []uint16, h int) []uint16 { return c[h/heads*layer*hd+h%heads*hd:] }
				q8 := func(c []byte, h int) []byte { return c[h/heads*layer*rb+h%heads*rb:] }
				run("f16/group", 2*nkv*hd*2, func(h int) {
					k.AttentionGroup(q, g, f16(k16c, h), heads*hd, f16(v16c, h), heads*hd, nil, nkv, hd, hd, scale, out, scratch)
				})
				run("f16/single", 2*nkv*hd*2, func(h int) {
					for i := 0; i < g; i++ {
						k.Attention(q[i*hd:], f16(k16c, h), heads*hd, f16(v16c, h), heads*hd, nil, nkv, hd, hd, scale, out[i*hd:], scratch)
					}
				})
				run("q8_0/group", 2*nkv*rb, func(h int) {
					k.AttentionQ8Group(q, g, q8(kqc, h), heads*rb, q8(vqc, h), heads*rb, nil, nkv, hd, hd, scale, out, scratch)
				})
				run("q8_0/single", 2*nkv*rb, func(h int) {
					for i := 0; i < g; i++ {
						k.AttentionQ8(q[i*hd:], q8(kqc, h), heads*rb, q8(vqc, h), heads*rb, nil, nkv, hd, hd, scale, out[i*hd:], scratch)
					}
				})
			}
		}
	}
}

// agLayers is n copies of a layer's cache, one after another.
func agLayers[T any](c []T, n int) []T {
	out := make([]T, 0, n*len(c))
	for range n {
		out = append(out, c...)
	}
	return out
}
