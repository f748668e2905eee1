package cuda

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"ember/inference/quant"
)

// TestRowsPerBlockMatchesMV1 reads the rows a warp of the batch-1 kernels from
// kernels/cuda/mv1.cuh and checks that the grids the host computes (rowsPerBlock,
// idRowsPerBlock: four warps a block) cover the same rows: a kernel that takes more
// rows a block than the host counts would compute rows twice, fewer would leave rows
// unwritten, and only a GPU would show it.
func TestRowsPerBlockMatchesMV1(t *testing.T) {
	def := func(name string) int { return kernelDefine(t, "mv1.cuh", name) }
	cases := []struct {
		name string
		got  int
		def  string
	}{
		{"Q4_K", rowsPerBlock(quant.Q4_K, 1, 4096), "Q4K_R1"},
		{"Q6_K", rowsPerBlock(quant.Q6_K, 1, 4096), "Q6K_R1"},
		{"Q8_0", rowsPerBlock(quant.Q8_0, 1, 4096), "Q80_R1"},
		{"Q4_0", rowsPerBlock(quant.Q4_0, 1, 4096), "Q50_R1"},
		{"Q5_0", rowsPerBlock(quant.Q5_0, 1, 4096), "Q50_R1"},
		{"mmv_id Q8_0", idRowsPerBlock(quant.Q8_0, 4096), "Q80_ID_R1"},
		{"mmv_id Q4_K", idRowsPerBlock(quant.Q4_K, 4096), "Q4K_R1"},
	}
	for _, c := range cases {
		if want := 4 * def(c.def); c.got != want {
			t.Errorf("%s: the host counts %d rows a block, mv1.cuh's %s makes %d", c.name, c.got, c.def, want)
		}
	}
}

// kernelDefine is the integer a "#define NAME N" line of kernels/cuda/file gives: the
// tests that tie a host constant to the kernel's read it so.
func kernelDefine(t *testing.T, file, name string) int {
	t.Helper()
	src, err := os.ReadFile("../../../kernels/cuda/" + file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^#define ` + name + ` (\d+)`).FindSubmatch(src)
	if m == nil {
		t.Fatalf("%s defines no %s", file, name)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
