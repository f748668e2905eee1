//go:build linux

package cpu_test

import (
	"os"
	"syscall"
	"time"
)

// lgThreadCPU is the CPU time of the calling OS thread (lock it first), so that benchmarks
// on a shared, loaded machine can also report speed per CPU second.
func lgThreadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// lgEdgeBytes returns n bytes that end right before an inaccessible page, so a kernel that
// reads past the end of its input crashes the test, and a function that frees them.
func lgEdgeBytes(n int) ([]byte, func()) {
	pg := os.Getpagesize()
	size := (n+pg-1)/pg*pg + pg
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		panic(err)
	}
	if err := syscall.Mprotect(m[size-pg:], syscall.PROT_NONE); err != nil {
		panic(err)
	}
	return m[size-pg-n : size-pg : size-pg], func() { syscall.Munmap(m) }
}
