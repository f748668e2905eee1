//go:build !linux

package cpu_test

// kqGuardedBytes returns n bytes (no guard page on this system) and a no-op release.
func kqGuardedBytes(n int) ([]byte, func()) { return make([]byte, n), func() {} }

// kqThreadCPU is not available here.
func kqThreadCPU() float64 { return 0 }
