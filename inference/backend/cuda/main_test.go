package cuda

import (
	"os"
	"testing"
)

// TestMain runs the package's tests with Q5_0 weights kept as Q5_0 ($EMBER_CUDA_WIDEN=0)
// unless the variable is set: widening is the default (widen.go), and without this the
// Q5_0 product tests would test the Q8_0 kernels twice and the Q5_0 ones, which GPUs
// without memory to spare still run, not at all. TestWidenQ5Products covers the default.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(WidenEnv); !ok {
		os.Setenv(WidenEnv, "0")
	}
	os.Exit(m.Run())
}
