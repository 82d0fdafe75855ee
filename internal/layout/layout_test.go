// Package layout holds the import and output rules of docs/design.md §7 as
// tests, so that a forbidden import or a print below cmd fails CI instead of
// waiting for a reviewer.
package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/icewright/icewright"

// rule says, for the packages under dir (the directory itself and, with
// tree, every package below it), which of our packages they may import and
// which third-party prefixes they must not.
type rule struct {
	dir       string
	tree      bool
	ours      []string // allowed imports of this module (prefixes), besides the tree itself
	forbidden []string // import prefixes never allowed
	// alone are packages of ours (in ours) that may be imported
	// themselves but none of their subpackages.
	alone []string
	// gaps are imports that break the rule today and are tracked to be
	// removed (docs/design.md §7, "Known gaps"). A gap that no longer
	// exists fails the test too, so the list only shrinks.
	gaps []string
}

var (
	iceberg  = "github.com/apache/iceberg-go"
	arrow    = "github.com/apache/arrow-go"
	colour   = "github.com/fatih/color"
	ioPkgs   = []string{"os", "net", "io/fs", "database/sql", "path/filepath", "os/exec", "os/signal"}
	external = []string{iceberg, arrow, colour}
)

var rules = []rule{
	{dir: "config", ours: nil, forbidden: append([]string{iceberg, arrow, colour}, "net", "database/sql")},
	{dir: "diff", ours: []string{"config"}, forbidden: append(append([]string{}, external...), ioPkgs...)},
	// The plan file reads and writes files, but knows no table format.
	{dir: "diff/planfile", ours: []string{"diff", "config"}, forbidden: external},
	{dir: "providers", tree: true, ours: []string{"diff", "config", "internal/lakehouse", "internal/testenv"}, forbidden: []string{colour, module + "/apply", module + "/cmd"}},
	// The fixtures and the embedded sqlite catalog shared by catalogs,
	// demo, testkit, e2e and bench import nothing of ours, so any of them
	// can use them without a cycle.
	{dir: "internal/lakehouse", ours: nil, forbidden: []string{colour}},
	// The one manifest walk, the sorter and the referenced set read
	// manifests through iceberg-go and nothing else: no arrow-go, no
	// catalog, no network or database of their own.
	// It decodes the plan's manifests with manifestread, which imports
	// nothing of ours either (arrow-go only for the decimal type iceberg-go
	// names a partition value with).
	{dir: "providers/internal/reach", ours: []string{"providers/internal/manifestread"}, forbidden: []string{arrow, colour, iceberg + "/catalog", "net", "database/sql"}},
	{dir: "providers/internal/manifestread", ours: nil, forbidden: []string{colour, iceberg + "/catalog", iceberg + "/table", "net", "database/sql", "os"}},
	// The domains below the session: each reads and changes tables through
	// iceberg-go and providers/internal, knows no other domain and never
	// the session (providers), which calls it; none writes data files.
	// Each action kind's home (providers/kind) knows the kind seam and the
	// compaction engine below it, no other kind.
	{dir: "providers/expiry", ours: []string{"diff", "config", "providers/internal", "providers/kind"}, forbidden: []string{arrow, colour}},
	{dir: "providers/orphans", ours: []string{"diff", "config", "providers/catalogs", "providers/internal", "providers/kind"}, forbidden: []string{arrow, colour}},
	{dir: "providers/kind", ours: []string{"diff", "config", "providers/compaction", "providers/engine", "providers/internal"}, forbidden: []string{arrow, colour}},
	{dir: "providers/tablemeta", ours: []string{"diff", "providers/compaction", "providers/internal", "providers/kind"}, forbidden: []string{arrow, colour}},
	{dir: "providers/dangling", ours: []string{"diff", "config", "providers/compaction", "providers/internal", "providers/kind"}, forbidden: []string{arrow, colour}},
	{dir: "providers/ageing", ours: []string{"diff", "config", "providers/compaction", "providers/internal", "providers/kind"}, forbidden: []string{arrow, colour}},
	{dir: "providers/manifests", ours: []string{"diff", "providers/compaction", "providers/internal", "providers/kind"}, forbidden: []string{arrow, colour}},
	// compact runs a manifest rewrite first when row ids are missing, and
	// checks files against a sort order as tablemeta builds it.
	{dir: "providers/compact", ours: []string{"diff", "config", "providers/compaction", "providers/engine", "providers/internal", "providers/kind", "providers/manifests", "providers/tablemeta", "providers/tablestate"}, forbidden: []string{arrow, colour}},
	{dir: "providers/tablestate", ours: []string{"diff", "providers/compaction"}, forbidden: []string{arrow, colour}},
	{dir: "providers/lease", ours: []string{"providers/internal"}, forbidden: []string{arrow, colour}},
	// apply reaches the engines only through providers' seam (Executor,
	// MemoryLimiter), never a providers subpackage: not the domains
	// (orphans, expiry, compaction, catalogs, demo), not internal.
	{dir: "apply", ours: []string{"diff", "config", "providers"}, alone: []string{"providers"}, forbidden: []string{colour, arrow, iceberg}},
	// The views render plain data: diff's plan, observed and report types,
	// apply's results, and config's ranges and masking rule (config is below
	// diff and owns the one secret rule). No providers package: the reports
	// of inspect, restore and demo are diff types.
	{dir: "cmd/icewright/internal/views", ours: []string{"diff", "apply", "config"}, forbidden: []string{iceberg, arrow, module + "/providers"}},
}

// noPrint are the packages below cmd: they return values or call hooks and
// never print or exit (docs/design.md §7). Test helpers are not in the list.
var noPrint = []string{"config", "diff", "diff/planfile", "apply", "providers", "providers/compaction", "providers/internal/expirydiff", "providers/internal/bound", "providers/internal/objdel", "providers/internal/meter", "providers/internal/reach", "providers/internal/store", "providers/expiry", "providers/orphans", "providers/demo", "providers/catalogs", "providers/kind", "providers/tablemeta", "providers/dangling", "providers/ageing", "providers/manifests", "providers/compact", "providers/tablestate", "providers/lease"}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", wd)
		}
	}
}

// goFiles parses the non-test Go files of one package directory.
func goFiles(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		files = append(files, f)
	}
	return files
}

// packageDirs is dir, and with tree every directory below it holding Go
// files (testdata excluded).
func packageDirs(t *testing.T, root, dir string, tree bool) []string {
	t.Helper()
	if !tree {
		return []string{filepath.Join(root, dir)}
	}
	var dirs []string
	err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			if m, _ := filepath.Glob(filepath.Join(p, "*.go")); len(m) > 0 {
				dirs = append(dirs, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func hasPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// belowAlone reports whether path is a subpackage of one of alone's
// packages of this module.
func belowAlone(path string, alone []string) bool {
	for _, a := range alone {
		if strings.HasPrefix(path, module+"/"+a+"/") {
			return true
		}
	}
	return false
}

// testOnly are packages that exist for tests (fixtures, servers): a
// production package must not import them.
var testOnly = []string{module + "/providers/testkit", module + "/internal/testenv"}

func TestImportRules(t *testing.T) {
	root := repoRoot(t)
	for _, r := range rules {
		t.Run(r.dir, func(t *testing.T) {
			dirs := packageDirs(t, root, r.dir, r.tree)
			if len(dirs) == 0 {
				t.Fatalf("no package in %s", r.dir)
			}
			ours := []string{module + "/" + r.dir}
			for _, o := range r.ours {
				ours = append(ours, module+"/"+o)
			}
			seenGap := map[string]bool{}
			for _, dir := range dirs {
				rel, _ := filepath.Rel(root, dir)
				helper := hasPrefix(module+"/"+filepath.ToSlash(rel), testOnly)
				for _, f := range goFiles(t, dir) {
					for _, imp := range f.Imports {
						path, _ := strconv.Unquote(imp.Path.Value)
						switch {
						case hasPrefix(path, r.gaps):
							seenGap[path] = true
						case hasPrefix(path, r.forbidden):
							t.Errorf("%s imports %s (forbidden in %s, docs/design.md §7)", rel, path, r.dir)
						case belowAlone(path, r.alone):
							t.Errorf("%s imports %s: %s may import %v but none of their subpackages (docs/design.md §7)", rel, path, r.dir, r.alone)
						case strings.HasPrefix(path, module+"/") && !hasPrefix(path, ours):
							t.Errorf("%s imports %s: %s may import only %v of this module (docs/design.md §7)", rel, path, r.dir, r.ours)
						case !helper && hasPrefix(path, testOnly):
							t.Errorf("%s imports the test helper %s", rel, path)
						}
					}
				}
			}
			for _, g := range r.gaps {
				if !seenGap[g] {
					t.Errorf("known gap %q of %s is gone: remove it from the rule (and from docs/design.md §7)", g, r.dir)
				}
			}
		})
	}
}

// TestOnlyViewsColour: fatih/color is imported by the views alone.
func TestOnlyViewsColour(t *testing.T) {
	root := repoRoot(t)
	var importers []string
	for _, dir := range packageDirs(t, root, ".", true) {
		for _, f := range goFiles(t, dir) {
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); path == colour {
					rel, _ := filepath.Rel(root, dir)
					importers = append(importers, filepath.ToSlash(rel))
				}
			}
		}
	}
	sort.Strings(importers)
	for _, p := range importers {
		if p != "cmd/icewright/internal/views" {
			t.Errorf("%s imports fatih/color; only cmd/icewright/internal/views may", p)
		}
	}
	if len(importers) == 0 {
		t.Error("no package imports fatih/color: is the walk looking at the repository?")
	}
}

// TestOnlySparkPackageSpeaksSpark: the Spark Connect client is imported by
// providers/engine/spark alone (docs/design.md §5.4: the engine seam), so no
// other package can come to depend on Spark.
func TestOnlySparkPackageSpeaksSpark(t *testing.T) {
	const client = "github.com/apache/spark-connect-go"
	root := repoRoot(t)
	var importers []string
	for _, dir := range packageDirs(t, root, ".", true) {
		for _, f := range goFiles(t, dir) {
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, client) {
					rel, _ := filepath.Rel(root, dir)
					importers = append(importers, filepath.ToSlash(rel))
				}
			}
		}
	}
	for _, p := range importers {
		if p != "providers/engine/spark" {
			t.Errorf("%s imports %s; only providers/engine/spark may", p, client)
		}
	}
	if len(importers) == 0 {
		t.Error("no package imports the Spark Connect client: is the walk looking at the repository?")
	}
}

// TestOnlyImageBuilderLinksRegistryCode: go-containerregistry is imported by
// internal/ociimage alone, and that by its command alone (scripts/release.sh
// runs it), so the icewright binary never grows by the image builder.
func TestOnlyImageBuilderLinksRegistryCode(t *testing.T) {
	root := repoRoot(t)
	allowed := map[string]string{
		"github.com/google/go-containerregistry": "internal/ociimage",
		module + "/internal/ociimage":            "internal/ociimage/mkimage",
	}
	found := map[string]bool{}
	for _, dir := range packageDirs(t, root, ".", true) {
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		for _, f := range goFiles(t, dir) {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for prefix, only := range allowed {
					if path == prefix || strings.HasPrefix(path, prefix+"/") {
						found[prefix] = true
						if rel != only {
							t.Errorf("%s imports %s; only %s may (docs/design.md §7)", rel, path, only)
						}
					}
				}
			}
		}
	}
	for prefix := range allowed {
		if !found[prefix] {
			t.Errorf("no package imports %s: is the walk looking at the repository?", prefix)
		}
	}
}

// TestNothingBelowCmdPrintsOrExits: no os.Exit, log.Fatal/Print, fmt.Print*
// or os.Stdout/os.Stderr in the packages below cmd.
func TestNothingBelowCmdPrintsOrExits(t *testing.T) {
	root := repoRoot(t)
	banned := map[string]map[string]bool{
		"os":  {"Exit": true, "Stdout": true, "Stderr": true},
		"fmt": {"Print": true, "Println": true, "Printf": true},
		"log": {"Fatal": true, "Fatalf": true, "Fatalln": true, "Print": true, "Printf": true, "Println": true, "Panic": true, "Panicf": true},
	}
	for _, dir := range noPrint {
		files := goFiles(t, filepath.Join(root, dir))
		if len(files) == 0 {
			t.Errorf("no Go files in %s", dir)
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && banned[id.Name][sel.Sel.Name] {
					t.Errorf("%s uses %s.%s: packages below cmd return values or call hooks (docs/design.md §7)", dir, id.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
}
