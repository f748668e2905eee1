//go:build !linux

package cpu_test

import "time"

// lgThreadCPU is not measured outside Linux.
func lgThreadCPU() time.Duration { return 0 }

// lgEdgeBytes has no guard page outside Linux.
func lgEdgeBytes(n int) ([]byte, func()) { return make([]byte, n), func() {} }
