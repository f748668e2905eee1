package cuda

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"

	kcuda "ember/kernels/cuda"
)

// TestKernelNamesExist (no GPU needed): every kernel the backend names by a literal is
// an entry of the embedded PTX: the first argument of launch, kernel and decKernel, a
// string assigned to a variable called name, a string returned by a function whose name
// ends in Kernel, and fusedFrom's kernels (a literal ending in _ is a prefix the code
// completes: some entry must start with it). A name no module holds fails only on a GPU
// ("kernel ... is in no module"), where a session's device time is short.
func TestKernelNamesExist(t *testing.T) {
	entries := map[string]bool{}
	entry := regexp.MustCompile(`\.entry\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
	for _, m := range kcuda.Modules {
		p, err := kcuda.PTX(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entry.FindAllSubmatch(p, -1) {
			entries[string(e[1])] = true
		}
	}
	if len(entries) < 50 {
		t.Fatalf("only %d kernel entries in the embedded PTX", len(entries))
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	check := func(n ast.Node, lit ast.Expr) {
		b, ok := lit.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return
		}
		s, err := strconv.Unquote(b.Value)
		if err != nil || s == "" {
			return
		}
		seen++
		if strings.HasSuffix(s, "_") { // a prefix the code completes (mmq_id16_ + type)
			for e := range entries {
				if strings.HasPrefix(e, s) {
					return
				}
			}
			t.Errorf("%s: no kernel of the embedded PTX starts with %q", fset.Position(n.Pos()), s)
			return
		}
		if !entries[s] {
			t.Errorf("%s: kernel %q is in no module's PTX", fset.Position(n.Pos()), s)
		}
	}
	for _, pkg := range pkgs {
		for name, f := range pkg.Files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					if sel, ok := x.Fun.(*ast.SelectorExpr); ok && len(x.Args) > 0 {
						switch sel.Sel.Name {
						case "launch", "kernel", "decKernel":
							check(x, x.Args[0])
						}
					}
				case *ast.AssignStmt:
					for i, l := range x.Lhs {
						if id, ok := l.(*ast.Ident); ok && id.Name == "name" && i < len(x.Rhs) {
							check(x, x.Rhs[i])
						}
					}
				case *ast.FuncDecl:
					if strings.HasSuffix(x.Name.Name, "Kernel") && x.Body != nil {
						ast.Inspect(x.Body, func(n ast.Node) bool {
							if r, ok := n.(*ast.ReturnStmt); ok {
								for _, e := range r.Results {
									check(r, e)
								}
							}
							return true
						})
					}
				case *ast.ValueSpec:
					for i, id := range x.Names {
						if id.Name != "fusedFrom" || i >= len(x.Values) {
							continue
						}
						if cl, ok := x.Values[i].(*ast.CompositeLit); ok {
							for _, e := range cl.Elts {
								if kv, ok := e.(*ast.KeyValueExpr); ok {
									check(kv, kv.Value)
								}
							}
						}
					}
				}
				return true
			})
		}
	}
	if seen < 40 {
		t.Errorf("only %d kernel names found in the sources: the test no longer sees them", seen)
	}
}
