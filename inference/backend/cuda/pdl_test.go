package cuda

import (
	"testing"

	kcuda "ember/kernels/cuda"
)

func TestPDLKernels(t *testing.T) {
	ptx := []byte(`.version 8.0
.visible .entry waits(
	.param .u64 a
)
{
	griddepcontrol.wait;
	ret;
}
.visible .entry plain(
	.param .u64 a
)
{
	ret;
}
.visible .entry waits2()
{
	griddepcontrol.wait;
	griddepcontrol.launch_dependents;
	ret;
}
`)
	got := pdlKernels(ptx)
	if !got["waits"] || got["plain"] || !got["waits2"] || len(got) != 2 {
		t.Fatalf("pdlKernels = %v", got)
	}
}

// TestEmbeddedKernelsWait: every kernel of the embedded PTX waits on the grid
// dependency (the sources open every kernel with pdl_entry; the PTX must be from them).
func TestEmbeddedKernelsWait(t *testing.T) {
	for _, name := range kcuda.Modules {
		ptx, err := kcuda.PTX(name)
		if err != nil {
			t.Fatal(err)
		}
		entries := ptxEntry.FindAllSubmatch(ptx, -1)
		pdl := pdlKernels(ptx)
		if len(entries) == 0 {
			t.Fatalf("module %s: no kernels", name)
		}
		for _, e := range entries {
			if !pdl[string(e[1])] {
				t.Errorf("module %s: kernel %s does not wait on the grid dependency", name, e[1])
			}
		}
	}
}
