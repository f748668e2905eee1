package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"ember/inference/quant"
	"ember/kernels/cpu"
)

// lgBenchWeights returns copies of a rows x k weight matrix of type t, together at least
// 160 MB, so that a gemv over them (one copy per call, in turn) reads memory, not cache.
func lgBenchWeights(b *testing.B, t quant.Type, rows, k int, minBytes int) (w []byte, rb, copies int) {
	rng := rand.New(rand.NewPCG(7, 8))
	rb = lgRowBytes(t, k)
	one := make([]byte, rows*rb)
	row := make([]float32, k)
	for r := 0; r < rows; r++ {
		for j := range row {
			row[j] = float32(rng.NormFloat64())
		}
		if err := quant.Quantize(t, row, one[r*rb:(r+1)*rb]); err != nil {
			b.Fatal(err)
		}
	}
	copies = max(1, (minBytes+len(one)-1)/len(one))
	w = make([]byte, 0, copies*len(one))
	for c := 0; c < copies; c++ {
		w = append(w, one...)
	}
	return w, rb, copies
}

func lgBenchActs(b *testing.B, t quant.Type, nx, k int) ([]byte, int) {
	rng := rand.New(rand.NewPCG(9, 10))
	x := make([]float32, nx*k)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	xrb := lgRowBytes(t, k)
	xq := make([]byte, nx*xrb)
	if err := quant.Quantize(t, x, xq); err != nil {
		b.Fatal(err)
	}
	return xq, xrb
}

// lgLoop runs f b.N times on a locked thread and reports units/s of wall time as name,
// and per second of the thread's CPU time as name+"(cpu)" (the machine may be shared).
func lgLoop(b *testing.B, units float64, name string, f func(i int)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := lgThreadCPU()
	for i := 0; b.Loop(); i++ {
		f(i)
	}
	cpu := lgThreadCPU() - c0
	b.ReportMetric(units*float64(b.N)/b.Elapsed().Seconds()/1e9, name)
	if cpu > time.Millisecond {
		b.ReportMetric(units*float64(b.N)/cpu.Seconds()/1e9, name+"(cpu)")
	}
}

// BenchmarkLGGemv: one activation row against 4096x4096 weights that do not fit in cache;
// GB/s counts weight bytes.
func BenchmarkLGGemv(b *testing.B) {
	const rows, k = 4096, 4096
	for _, wt := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.F16, quant.BF16, quant.F32} {
		vt, _ := wt.VecDotType()
		w, wrb, copies := lgBenchWeights(b, wt, rows, k, 160<<20)
		xq, xrb := lgBenchActs(b, vt, 1, k)
		dst := make([]float32, rows)
		for _, kern := range pathKernels() {
			name := kern.ISA().String()
			if kern.BF16() {
				name += "+bf16"
			}
			b.Run(fmt.Sprintf("%v/%v", wt, name), func(b *testing.B) {
				mat := rows * wrb
				lgLoop(b, float64(mat), "GB/s", func(i int) {
					c := i % copies
					kern.Gemm(int(wt), w[c*mat:(c+1)*mat], wrb, xq, xrb, 1, k, 0, rows, dst, rows)
				})
			})
		}
	}
}

// BenchmarkLGGemm: prefill, 512 activation rows against 1024x4096 weights; GOPS counts
// 2*nx*rows*k.
func BenchmarkLGGemm(b *testing.B) {
	const nx, rows, k = 512, 1024, 4096
	for _, wt := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.F16, quant.BF16, quant.F32} {
		vt, _ := wt.VecDotType()
		w, wrb, _ := lgBenchWeights(b, wt, rows, k, 0)
		xq, xrb := lgBenchActs(b, vt, nx, k)
		dst := make([]float32, nx*rows)
		for _, kern := range pathKernels() {
			if kern.ISA() == cpu.Scalar && wt.BlockSize() == 1 && testing.Short() {
				continue
			}
			b.Run(fmt.Sprintf("%v/%v", wt, kern.Name()), func(b *testing.B) {
				lgLoop(b, 2*float64(nx)*rows*k, "GOPS", func(int) {
					kern.Gemm(int(wt), w, wrb, xq, xrb, nx, k, 0, rows, dst, rows)
				})
			})
		}
	}
}

// BenchmarkLGGemmSmallBatch: 2..16 activation rows (batched decode) against 4096x4096.
func BenchmarkLGGemmSmallBatch(b *testing.B) {
	const rows, k = 4096, 4096
	for _, wt := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.BF16, quant.F16} {
		vt, _ := wt.VecDotType()
		w, wrb, copies := lgBenchWeights(b, wt, rows, k, 160<<20)
		for _, nx := range []int{2, 3, 4, 8, 12, 16} {
			xq, xrb := lgBenchActs(b, vt, nx, k)
			dst := make([]float32, nx*rows)
			for _, kern := range pathKernels()[1:] {
				b.Run(fmt.Sprintf("%v/nx=%d/%v", wt, nx, kern.Name()), func(b *testing.B) {
					mat := rows * wrb
					lgLoop(b, float64(mat), "GB/s", func(i int) {
						c := i % copies
						kern.Gemm(int(wt), w[c*mat:(c+1)*mat], wrb, xq, xrb, nx, k, 0, rows, dst, rows)
					})
				})
			}
		}
	}
}

func BenchmarkLGQuantize(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(11, 12))
	x := make([]float32, 64*n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	for _, vt := range []quant.Type{quant.Q8_0, quant.Q8_1, quant.F16, quant.BF16} {
		y := make([]byte, 64*lgRowBytes(vt, n))
		for _, isa := range cpu.Supported() {
			kern := cpu.New(isa)
			b.Run(fmt.Sprintf("%v/%v", vt, isa), func(b *testing.B) {
				lgLoop(b, float64(len(x)), "Gelem/s", func(int) { kern.QuantizeRows(int(vt), x, y, 64, n) })
			})
		}
	}
}
