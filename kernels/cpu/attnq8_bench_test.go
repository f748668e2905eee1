package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"ember/inference/quant"
	"ember/kernels/cpu"
)

// BenchmarkAttentionQ8: one query head over 1024 cached positions, head dim 128, with a
// Q8_0 cache (AttentionQ8) and an F16 cache (Attention), rows of 8 KV heads as a cache
// lays them out; GB/s counts the K and V bytes read (Q8_0: 34 bytes per 32 values, F16:
// 64).
func BenchmarkAttentionQ8(b *testing.B) {
	const nkv, hd, heads = 1024, 128, 8
	rng := rand.New(rand.NewPCG(69, 70))
	rb := hd / aq8QK * aq8Block
	stride := heads * rb
	kq, vq, k16, v16 := aq8BenchRows(rng, nkv*heads, hd)
	q := elemRand(rng, hd, 1)
	out := make([]float32, hd)
	scratch := make([]float32, cpu.AttentionQ8ScratchLen(nkv, hd))
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		b.Run(fmt.Sprintf("q8_0/nkv=%d/hd=%d/%v", nkv, hd, isa), func(b *testing.B) {
			lgLoop(b, float64(2*nkv*rb), "GB/s", func(int) {
				k.AttentionQ8(q, kq, stride, vq, stride, nil, nkv, hd, hd, 0.088, out, scratch)
			})
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/head")
		})
		b.Run(fmt.Sprintf("f16/nkv=%d/hd=%d/%v", nkv, hd, isa), func(b *testing.B) {
			lgLoop(b, float64(2*nkv*hd*2), "GB/s", func(int) {
				k.Attention(q, k16, heads*hd, v16, heads*hd, nil, nkv, hd, hd, 0.088, out, scratch)
			})
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/head")
		})
	}
}

// aq8BenchRows makes n random K and V rows of hd values, packed, as Q8_0 (kq, vq) and as
// F16 (k16, v16).
func aq8BenchRows(rng *rand.Rand, n, hd int) (kq, vq []byte, k16, v16 []uint16) {
	rb := hd / aq8QK * aq8Block
	kq, vq = make([]byte, n*rb), make([]byte, n*rb)
	k16, v16 = make([]uint16, n*hd), make([]uint16, n*hd)
	for r := 0; r < n; r++ {
		kx, vx := elemRand(rng, hd, 1), elemRand(rng, hd, 1)
		copy(kq[r*rb:], aq8Quantize(kx))
		copy(vq[r*rb:], aq8Quantize(vx))
		for d := 0; d < hd; d++ {
			k16[r*hd+d], v16[r*hd+d] = quant.FP32ToFP16(kx[d]), quant.FP32ToFP16(vx[d])
		}
	}
	return kq, vq, k16, v16
}

// BenchmarkAttentionQ8Sizes: the Q8_0-cache kernels at decode's shapes on the x86 SIMD
// paths: g = 1 (AttentionQ8, what the CPU backend calls per head) and g = 4
// (AttentionQ8Group, Llama-3's grouping) over nkv cached positions of head dim hd, in a
// cache of 8 KV heads as a cache lays them out; each iteration takes the next KV head.
// GB/s counts the K and V bytes of the KV head once; us/op is per call.
func BenchmarkAttentionQ8Sizes(b *testing.B) {
	const heads = 8
	isas := supportedAmong(cpu.AVX2, cpu.AVX512, cpu.AVX512VNNI)
	if len(isas) == 0 {
		b.Skip("no x86 SIMD path on this machine")
	}
	for _, nkv := range []int{512, 4096, 16384} {
		for _, hd := range []int{64, 128} {
			rng := rand.New(rand.NewPCG(77, uint64(nkv+hd)))
			rb := hd / aq8QK * aq8Block
			stride := heads * rb
			kq, vq, _, _ := aq8BenchRows(rng, nkv*heads, hd)
			for _, g := range []int{1, 4} {
				q := elemRand(rng, g*hd, 1)
				out := make([]float32, g*hd)
				scratch := make([]float32, cpu.AttentionGroupScratchLen(g, nkv, hd))
				for _, isa := range isas {
					k := cpu.New(isa)
					b.Run(fmt.Sprintf("nkv=%d/hd=%d/g=%d/%v", nkv, hd, g, isa), func(b *testing.B) {
						lgLoop(b, float64(2*nkv*rb), "GB/s", func(i int) {
							h := i % heads * rb
							k.AttentionQ8Group(q, g, kq[h:], stride, vq[h:], stride, nil, nkv, hd, hd, 0.088, out, scratch)
						})
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/op")
					})
				}
			}
		}
	}
}
