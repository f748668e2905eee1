package cpu_test

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"runtime"
	"testing"

	"ember/inference/quant"
	"ember/kernels/cpu"
)

// kqBenchWeights is rows x k weights of t: random quants and sub-block scales with
// modest f16 scales (speed does not depend on the values).
func kqBenchWeights(t quant.Type, rows, k int) []byte {
	rng := rand.New(rand.NewSource(5))
	w := make([]byte, rows*(k/256)*t.TypeSize())
	rng.Read(w)
	for b := 0; b < len(w)/t.TypeSize(); b++ {
		for _, off := range kqHalves(t) {
			binary.LittleEndian.PutUint16(w[b*t.TypeSize()+off:], quant.FP32ToFP16(0.01*float32(rng.Float64())))
		}
	}
	return w
}

// kqBench runs nx x rows x k products and reports, besides ns/op, GOPS (2*nx*rows*k per
// second) or the weight bytes' GB/s, and the same per second of the thread's CPU time
// (-cpu suffix), which other processes on a shared machine do not disturb.
func kqBench(b *testing.B, t quant.Type, kern cpu.Kernels, nx, rows, k int, gops bool) {
	w := kqBenchWeights(t, rows, k)
	rng := rand.New(rand.NewSource(6))
	xq := kqQuantRow(b, quant.Q8_K, kqFloats(rng, nx*k))
	dst := make([]float32, nx*rows)
	wrb, xrb := len(w)/rows, len(xq)/nx
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if !gops {
		b.SetBytes(int64(len(w)))
	}
	kern.Gemm(int(t), w, wrb, xq, xrb, nx, k, 0, rows, dst, rows)
	b.ResetTimer()
	c0 := kqThreadCPU()
	for i := 0; i < b.N; i++ {
		kern.Gemm(int(t), w, wrb, xq, xrb, nx, k, 0, rows, dst, rows)
	}
	cpuS := kqThreadCPU() - c0
	wall := b.Elapsed().Seconds()
	work := float64(len(w))
	unit := "GB/s"
	if gops {
		work, unit = 2*float64(nx)*float64(rows)*float64(k), "GOPS"
		b.ReportMetric(work*float64(b.N)/wall/1e9, unit)
	}
	if cpuS > 0 {
		b.ReportMetric(work*float64(b.N)/cpuS/1e9, unit+"-cpu")
	}
}

func BenchmarkGemvKQ(b *testing.B) {
	for _, t := range kqTypes {
		for _, kern := range pathKernels() {
			b.Run(fmt.Sprintf("%v/%v", t, kern.Name()), func(b *testing.B) { kqBench(b, t, kern, 1, 4096, 4096, false) })
		}
	}
}

func BenchmarkGemmKQ(b *testing.B) {
	for _, t := range kqTypes {
		for _, kern := range pathKernels() {
			b.Run(fmt.Sprintf("%v/%v", t, kern.Name()), func(b *testing.B) { kqBench(b, t, kern, 512, 1024, 4096, true) })
		}
	}
}

// BenchmarkGemvKQStream is the decode product on a matrix far larger than the caches
// (16384 x 8192: 44 MB of Q2_K to 110 MB of Q6_K), so the weights stream from memory; the
// 4096 x 4096 matrices of BenchmarkGemvKQ fit in a large L3.
func BenchmarkGemvKQStream(b *testing.B) {
	for _, t := range kqTypes {
		for _, isa := range cpu.Supported() {
			b.Run(fmt.Sprintf("%v/%v", t, isa), func(b *testing.B) { kqBench(b, t, cpu.New(isa), 1, 16384, 8192, false) })
		}
	}
}

// BenchmarkGemmKQSmallBatch is batched decode's product: a few activation rows (one per
// sequence) against a weight matrix, single-threaded, in GOPS.
func BenchmarkGemmKQSmallBatch(b *testing.B) {
	for _, t := range []quant.Type{quant.Q4_K, quant.Q6_K} {
		for _, nx := range []int{1, 2, 4, 8, 16} {
			for _, kern := range pathKernels()[1:] { // not the scalar path
				b.Run(fmt.Sprintf("%v/%v/nx=%d", t, kern.Name(), nx), func(b *testing.B) { kqBench(b, t, kern, nx, 4096, 4096, true) })
			}
		}
	}
}

// BenchmarkGemmKQSmallBatchStream is BenchmarkGemmKQSmallBatch over a weight matrix far
// past the caches (32768 x 4096: 75 MB in Q4_K), as a model's weights are in batched
// decode: the weight blocks come from memory.
func BenchmarkGemmKQSmallBatchStream(b *testing.B) {
	for _, t := range []quant.Type{quant.Q4_K, quant.Q6_K} {
		for _, nx := range []int{4, 8, 16} {
			for _, kern := range pathKernels()[1:] {
				b.Run(fmt.Sprintf("%v/%v/nx=%d", t, kern.Name(), nx), func(b *testing.B) { kqBench(b, t, kern, nx, 32768, 4096, true) })
			}
		}
	}
}
