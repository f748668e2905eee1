package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestKernelsStartWithPDLEntry: the CUDA backend gives a kernel a programmatic graph
// edge when its PTX holds griddepcontrol.wait, which is only safe when the wait comes
// before anything else the kernel does: every kernel's body must open with pdl_entry(),
// or with pdl_defer() (common.cuh) in a file whose kernels then call pdl_wait() after
// reading only weights (matmul.cu's batch-1 products: mv1_ready in mv1.cuh).
func TestKernelsStartWithPDLEntry(t *testing.T) {
	files, err := filepath.Glob("*.cu")
	if err != nil || len(files) == 0 {
		t.Fatalf("no .cu files: %v", err)
	}
	global := regexp.MustCompile(`__global__`)
	include := regexp.MustCompile(`#include "([a-z0-9_]+\.cuh)"`)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		// pdl_wait() may be in a header the file includes, directly or through another
		// (mv1.cuh for matmul.cu, through mmvgen.cuh).
		withHeaders := src
		seen := map[string]bool{}
		for todo := []string{src}; len(todo) > 0; todo = todo[1:] {
			for _, m := range include.FindAllStringSubmatch(todo[0], -1) {
				if seen[m[1]] {
					continue
				}
				seen[m[1]] = true
				h, err := os.ReadFile(m[1])
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				withHeaders += string(h)
				todo = append(todo, string(h))
			}
		}
		for _, loc := range global.FindAllStringIndex(src, -1) {
			open := strings.IndexByte(src[loc[1]:], '{')
			if open < 0 {
				t.Fatalf("%s: a kernel with no body", f)
			}
			body := strings.TrimLeft(src[loc[1]+open+1:], " \t\\\n")
			deferred := strings.HasPrefix(body, "pdl_defer();")
			if deferred && !strings.Contains(withHeaders, "pdl_wait();") {
				t.Errorf("%s: a kernel opens with pdl_defer() but neither the file nor its headers call pdl_wait()", f)
			}
			if !strings.HasPrefix(body, "pdl_entry();") && !deferred {
				line := strings.Count(src[:loc[0]], "\n") + 1
				t.Errorf("%s:%d: kernel body does not start with pdl_entry() or pdl_defer()", f, line)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("found only %d kernels", n)
	}
}
