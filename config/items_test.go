package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// getters are Config's readers that take a section and a name. Outside
// items.go hgfs reads settings through the Known items (Get, GetBool,
// GetInt, or these with k.Section, k.Name), never with literal keys.
var getters = map[string]bool{"String": true, "Bool": true, "Int": true, "List": true, "Lookup": true}

// TestNoLiteralKeys fails when a non-test Go file of the module reads a
// setting with a string literal section or name, bypassing the table in
// items.go (where its default and doc would be declared).
func TestNoLiteralKeys(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if filepath.ToSlash(rel) == "config/items.go" {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, call := range literalKeyReads(f) {
			t.Errorf("%s: %s reads a setting with a literal key; declare it in config/items.go and read it through its Known item", fset.Position(call.Pos()), render(call))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned only %d files under %s", files, root)
	}
}

// literalKeyReads returns f's calls X.M(a, b, ...) with M a getter, X
// not an imported package (flag.String), and a or b a string literal.
func literalKeyReads(f *ast.File) []*ast.CallExpr {
	pkgs := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		pkgs[name] = true
	}
	var out []*ast.CallExpr
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) < 2 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !getters[sel.Sel.Name] {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && pkgs[id.Name] {
			return true
		}
		for _, a := range call.Args[:2] {
			if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				out = append(out, call)
				break
			}
		}
		return true
	})
	return out
}

func render(call *ast.CallExpr) string {
	var b strings.Builder
	if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
		b.WriteString(sel.Sel.Name)
	}
	b.WriteString("(")
	for i, a := range call.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		if lit, ok := a.(*ast.BasicLit); ok {
			b.WriteString(lit.Value)
		} else {
			b.WriteString("…")
		}
	}
	b.WriteString(")")
	return b.String()
}

// TestLiteralKeyReadsFinds checks the scanner on a file that bypasses
// the table and one that does not.
func TestLiteralKeyReadsFinds(t *testing.T) {
	src := `package p
import "flag"
func f(c, o interface{}) {
	c.Int("ui", "timeout", 600)
	c.Bool(sec, "publish", true)
	c.Lookup("paths", name)
	c.GetInt(UITimeout)
	c.Bool(k.Section, k.Name, true)
	o.Bool("foreground")
	flag.String("n", "3", "runs")
}`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, call := range literalKeyReads(f) {
		got = append(got, render(call))
	}
	want := []string{`Int("ui", "timeout", 600)`, `Bool(…, "publish", …)`, `Lookup("paths", …)`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("found %q, want %q", got, want)
	}
}

// TestAllListsEveryItem fails when a Known declared in items.go is
// missing from All (so `hgfs config --known` would not list it).
func TestAllListsEveryItem(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "items.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	listed := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			for _, s := range d.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, v := range vs.Values {
					if cl, ok := v.(*ast.CompositeLit); ok {
						if id, ok := cl.Type.(*ast.Ident); ok && id.Name == "Known" {
							declared[vs.Names[i].Name] = true
						}
					}
				}
			}
		case *ast.FuncDecl:
			if d.Name.Name != "All" {
				continue
			}
			ast.Inspect(d.Body, func(n ast.Node) bool {
				if cl, ok := n.(*ast.CompositeLit); ok {
					for _, e := range cl.Elts {
						if id, ok := e.(*ast.Ident); ok {
							listed[id.Name] = true
						}
					}
				}
				return true
			})
		}
	}
	if len(declared) == 0 {
		t.Fatal("no Known items found in items.go")
	}
	var missing []string
	for name := range declared {
		if !listed[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("declared in items.go but not listed by All: %s", strings.Join(missing, ", "))
	}
	if len(listed) != len(All()) || len(declared) != len(All()) {
		t.Errorf("All lists %d items, names %d, items.go declares %d", len(All()), len(listed), len(declared))
	}
}
