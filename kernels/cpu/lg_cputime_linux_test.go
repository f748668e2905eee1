package cpu_test

import (
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
