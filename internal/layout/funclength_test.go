package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the longest a non-test function may be without a
// reason (issue 42, item 4): the lines below the one that opens it, its
// closing brace included.
const maxFuncLines = 100

// longFuncs are the non-test functions allowed over maxFuncLines, as
// "path/to/file.go Func" (methods "Type.Method"), each with the reason it
// is better read whole. A function that is no longer long, or no longer
// exists, fails the test too, so the list only shrinks.
var longFuncs = map[string]string{
	"config/decode.go convertField": "one switch over the field kinds, a case each; split, it would be the same cases in more places",
	// Being moved by the rest of issue 42 (one package per action kind):
	// each is split there.
}

// TestNoLongFunctions lists every non-test function of the module over
// maxFuncLines and fails for each one not in longFuncs.
func TestNoLongFunctions(t *testing.T) {
	root := repoRoot(t)
	long := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line; n > maxFuncLines {
				long[filepath.ToSlash(rel)+" "+funcName(fd)] = n
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range long {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := longFuncs[name]; !ok {
			t.Errorf("%s is %d lines (over %d): split it into named steps, or add it to longFuncs with the reason it is better read whole", name, long[name], maxFuncLines)
		}
	}
	for name, why := range longFuncs {
		if strings.TrimSpace(why) == "" {
			t.Errorf("longFuncs: %s has no reason", name)
		}
		if _, ok := long[name]; !ok {
			t.Errorf("longFuncs: %s is no longer over %d lines (or is gone): remove it from the list", name, maxFuncLines)
		}
	}
}

// funcName is "Func", or "Type.Method" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}
