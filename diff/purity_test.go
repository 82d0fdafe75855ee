package diff

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// diff must stay pure (DESIGN §7): no iceberg-go, no arrow, no I/O.
func TestNoForbiddenImports(t *testing.T) {
	forbidden := []string{"github.com/apache/iceberg-go", "github.com/apache/arrow-go", "os", "net", "io/fs", "database/sql", "path/filepath"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked only %d files; is the test running in the package directory?", checked)
	}
}
