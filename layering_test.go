package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// layers is ARCHITECTURE.md's table, with its layers split where a package of a layer
// needs another of the same layer (gguf uses quant's type table; backendtest runs ref;
// synth reuses convert): a package may import only packages of a lower number. A
// package missing here fails the test, so the table stays complete.
var layers = map[string]int{
	"inference/quant":               0,
	"inference/kvcache":             0,
	"inference/sample":              0,
	"inference/jsonprefix":          0,
	"inference/prompt":              0,
	"inference/reasoning":           0,
	"kernels/cpu":                   0,
	"kernels/cuda":                  0,
	"kernels/metal":                 0,
	"store":                         0,
	"assets":                        0,
	"inference/gguf":                1,
	"inference/tokenizer":           2,
	"inference/backend":             2,
	"inference/convert":             2,
	"inference/backend/ref":         3,
	"inference/backend/cpu":         3,
	"inference/backend/cuda":        3,
	"inference/backend/metal":       3,
	"inference/model":               3,
	"inference/synth":               3,
	"inference/backend/backendtest": 4,
	"inference/model/llama":         4,
	"inference/model/qwen2":         4,
	"inference/model/deepseek2":     4,
	"inference/model/goldentest":    4,
	"inference/model/archs":         5,
	"inference/engine":              6,
	"app/reply":                     7, // the API packages' reply shaping, over the engine's events
	"app/enginetest":                7,
	"app/openai":                    8,
	"app/ollama":                    8,
	"app/server":                    8,
	"ui":                            8,
	"app":                           9,
	"":                              10, // the root: main
}

// cgoAllowed are the only packages of ours that may use cgo.
var cgoAllowed = map[string]bool{
	"kernels/cpu": true, "inference/backend/cuda": true, "inference/backend/metal": true,
	"inference/backend/cpu": true,
}

type pkgInfo struct {
	path    string
	imports []string
	cgo     bool
}

func listPackages(t *testing.T, tags string) []pkgInfo {
	t.Helper()
	args := []string{"list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{len .CgoFiles}}"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, "./...")
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "|", 3)
		if len(parts) != 3 {
			continue
		}
		p := pkgInfo{path: rel(parts[0]), cgo: parts[2] != "0"}
		for _, imp := range strings.Fields(parts[1]) {
			if imp == "ember" || strings.HasPrefix(imp, "ember/") {
				p.imports = append(p.imports, rel(imp))
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, "ember"), "/")
}

func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, tags := range []string{"", "nogui"} {
		for _, p := range listPackages(t, tags) {
			if strings.HasPrefix(p.path, "tools/") || strings.HasSuffix(p.path, "/internal") {
				continue
			}
			lp, ok := layers[p.path]
			if !ok {
				t.Errorf("package %q is not in the layering table (layering_test.go, ARCHITECTURE.md)", p.path)
				continue
			}
			if p.cgo && !cgoAllowed[p.path] {
				t.Errorf("package %q uses cgo; only %v may", p.path, keys(cgoAllowed))
			}
			for _, imp := range p.imports {
				li, ok := layers[imp]
				if !ok {
					continue // reported for that package itself
				}
				if li >= lp {
					t.Errorf("%q (layer %d) imports %q (layer %d): only lower layers may be imported", p.path, lp, imp, li)
				}
				if strings.HasPrefix(p.path, "inference/") && (imp == "app" || strings.HasPrefix(imp, "app/") || imp == "ui" || imp == "store") {
					t.Errorf("%q imports %q: nothing in inference/ may import app, ui or store", p.path, imp)
				}
				if p.path == "ui" && imp != "assets" {
					t.Errorf("ui imports %q: ui may import only assets", imp)
				}
			}
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
