//go:build linux

package cpu_test

import (
	"os"
	"syscall"
)

// kqGuardedBytes returns n bytes that end right before a PROT_NONE page, so a kernel
// that reads past its input faults, and the function that unmaps them.
func kqGuardedBytes(n int) ([]byte, func()) {
	pg := os.Getpagesize()
	size := (n+pg-1)/pg*pg + pg
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		panic(err)
	}
	if err := syscall.Mprotect(m[size-pg:], syscall.PROT_NONE); err != nil {
		panic(err)
	}
	b := m[size-pg-n : size-pg : size-pg]
	return b, func() { syscall.Munmap(m) }
}

// kqThreadCPU returns the CPU time the calling OS thread has used, in seconds (lock the
// goroutine to its thread first). On a shared machine it is a steadier clock than the
// wall clock for single-threaded kernels.
func kqThreadCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) * 1e-9
}
