package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"ember/kernels/cpu"
)

// Row-op speeds on one 8192-wide row (a prefill of 512 tokens runs each op over 512 of
// them per layer); Gelem/s counts elements.

func elemBench(b *testing.B, name string, n int, f func(k cpu.Kernels)) {
	for _, isa := range cpu.Supported() {
		k := cpu.New(isa)
		b.Run(fmt.Sprintf("%s/%v", name, isa), func(b *testing.B) {
			lgLoop(b, float64(n), "Gelem/s", func(int) { f(k) })
		})
	}
}

func BenchmarkElem(b *testing.B) {
	const n = 8192
	rng := rand.New(rand.NewPCG(41, 42))
	x, w, y := elemRand(rng, n, 3), elemRand(rng, n, 1), make([]float32, n)
	h := make([]uint16, n)
	cs := make([]float32, 128)
	for i := 0; i < 64; i++ {
		cs[2*i], cs[2*i+1] = float32(math.Cos(float64(i))), float32(math.Sin(float64(i)))
	}
	elemBench(b, "SwiGLU", n, func(k cpu.Kernels) { k.SwiGLU(x, w, y) })
	elemBench(b, "RMSNorm", n, func(k cpu.Kernels) { k.RMSNorm(x, w, y, 1e-6) })
	elemBench(b, "Add", n, func(k cpu.Kernels) { k.Add(x, w, y) })
	elemBench(b, "Mul", n, func(k cpu.Kernels) { k.Mul(x, w, y) })
	elemBench(b, "F32ToF16", n, func(k cpu.Kernels) { k.F32ToF16(x, h) })
	elemBench(b, "F16ToF32", n, func(k cpu.Kernels) { k.F16ToF32(h, y) })
	elemBench(b, "RoPE/neox", n, func(k cpu.Kernels) { k.RoPE(y, 128, 128, true, cs) })
	elemBench(b, "RoPE/norm", n, func(k cpu.Kernels) { k.RoPE(y, 128, 128, false, cs) })
}

// BenchmarkElemAttention: one query head over 512 cached positions, head dim 64 (f16 K
// and V rows of 8 heads, as a cache lays them out); GB/s counts the K and V bytes read.
func BenchmarkElemAttention(b *testing.B) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, sh := range [][2]int{{512, 64}, {512, 128}, {4096, 128}} {
		nkv, hd := sh[0], sh[1]
		stride := 8 * hd
		kc, vc := elemRandF16(rng, nkv*stride), elemRandF16(rng, nkv*stride)
		q := elemRand(rng, hd, 1)
		out := make([]float32, hd)
		scratch := make([]float32, nkv+hd)
		for _, isa := range cpu.Supported() {
			k := cpu.New(isa)
			b.Run(fmt.Sprintf("nkv=%d/hd=%d/%v", nkv, hd, isa), func(b *testing.B) {
				lgLoop(b, float64(2*nkv*hd*2), "GB/s", func(int) {
					k.Attention(q, kc, stride, vc, stride, nil, nkv, hd, hd, 0.125, out, scratch)
				})
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/head")
			})
		}
	}
}

// BenchmarkElemAttentionSizes: the single-head f16-cache attention at decode's shapes on
// the x86 SIMD paths, over nkv cached positions of head dim hd in a cache of 8 KV heads
// as a cache lays them out; each iteration takes the next KV head. GB/s counts the K and
// V bytes of the head; us/op is per call.
func BenchmarkElemAttentionSizes(b *testing.B) {
	const heads = 8
	isas := supportedAmong(cpu.AVX2, cpu.AVX512, cpu.AVX512VNNI)
	if len(isas) == 0 {
		b.Skip("no x86 SIMD path on this machine")
	}
	for _, nkv := range []int{512, 4096, 16384} {
		for _, hd := range []int{64, 128} {
			rng := rand.New(rand.NewPCG(45, uint64(nkv+hd)))
			stride := heads * hd
			kc, vc := elemRandF16(rng, nkv*stride), elemRandF16(rng, nkv*stride)
			q := elemRand(rng, hd, 1)
			out := make([]float32, hd)
			scratch := make([]float32, nkv+hd)
			for _, isa := range isas {
				k := cpu.New(isa)
				b.Run(fmt.Sprintf("nkv=%d/hd=%d/%v", nkv, hd, isa), func(b *testing.B) {
					lgLoop(b, float64(2*nkv*hd*2), "GB/s", func(i int) {
						h := i % heads * hd
						k.Attention(q, kc[h:], stride, vc[h:], stride, nil, nkv, hd, hd, 0.088, out, scratch)
					})
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/op")
				})
			}
		}
	}
}
