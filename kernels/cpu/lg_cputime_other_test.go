//go:build !linux

package cpu_test

import "time"

// lgThreadCPU is not measured outside Linux.
func lgThreadCPU() time.Duration { return 0 }
