package layout

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The table of docs/design.md §7 names every package of the module with what
// it may import of ours. The tests below hold the table to the code, so the
// document cannot drift from `go list`: every package has a row, and every
// import of ours a package makes is one its row allows.

// designRow is one package row of the §7 table.
type designRow struct {
	pkgs []string // the packages the first cell names
	// allowed are the packages of ours the third cell allows (each with its
	// subpackages); all is set for "everything below", subs for "its
	// subpackages", none for "none of ours" (allowed is then empty).
	allowed   []string
	all, subs bool
	none      bool
}

var backticked = regexp.MustCompile("`([^`]+)`")

// designRows reads the table of docs/design.md §7. The third cell is the
// rule: the backticked names before the first ';' are the packages allowed
// (text after it explains and names nothing allowed).
func designRows(t *testing.T, root string) []designRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "## 7. Layout and import rules")
	if start < 0 {
		t.Fatal("docs/design.md has no section '## 7. Layout and import rules'")
	}
	var rows []designRow
	for _, line := range strings.Split(text[start:], "\n") {
		if !strings.HasPrefix(line, "| `") {
			if len(rows) > 0 && !strings.HasPrefix(line, "|") {
				break // the table ended
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			t.Fatalf("docs/design.md §7: a row without three cells: %s", line)
		}
		var r designRow
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			r.pkgs = append(r.pkgs, m[1])
		}
		rule := cells[2]
		if i := strings.Index(rule, ";"); i >= 0 {
			rule = rule[:i]
		}
		switch {
		case strings.Contains(rule, "everything below"):
			r.all = true
		case strings.HasPrefix(rule, "none"), strings.HasPrefix(rule, "(data)"), strings.Contains(rule, "tests only"):
			r.none = strings.HasPrefix(rule, "none")
			r.all = !r.none // data and test helpers are not held to a rule
		}
		if strings.Contains(rule, "its subpackages") {
			r.subs = true
		}
		if !r.all && !r.none {
			for _, m := range backticked.FindAllStringSubmatch(rule, -1) {
				r.allowed = append(r.allowed, m[1])
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatal("docs/design.md §7 has no package table")
	}
	return rows
}

// modulePackages are the production packages of the module (directories with
// a non-test Go file), as import paths relative to the module, with the
// imports of ours their non-test files make. bench and examples are tools
// and samples, not the product, and are left out; so are packages that hold
// only tests and a doc.go.
func modulePackages(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, dir := range packageDirs(t, root, ".", true) {
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		if rel == "." || hasPrefix(rel, []string{"bench", "examples"}) {
			continue
		}
		files := goFiles(t, dir)
		if len(files) == 0 {
			continue
		}
		onlyDoc := true
		for _, f := range files {
			if len(f.Decls) > 0 {
				onlyDoc = false
			}
		}
		if onlyDoc {
			continue
		}
		seen := map[string]bool{}
		for _, f := range files {
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(path, module+"/") && !seen[path] {
					seen[path] = true
					out[rel] = append(out[rel], strings.TrimPrefix(path, module+"/"))
				}
			}
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
	}
	return out
}

// TestDesignTableNamesEveryPackage: every production package has a row of
// its own in docs/design.md §7, and every row names a package that exists.
func TestDesignTableNamesEveryPackage(t *testing.T) {
	root := repoRoot(t)
	rows := designRows(t, root)
	pkgs := modulePackages(t, root)
	named := map[string]bool{}
	for _, r := range rows {
		for _, p := range r.pkgs {
			named[p] = true
			if _, ok := pkgs[p]; !ok && p != "internal/testdata/tables" {
				t.Errorf("docs/design.md §7 has a row for %s, which is no package of the module", p)
			}
		}
	}
	var missing []string
	for p := range pkgs {
		if !named[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	for _, p := range missing {
		t.Errorf("package %s has no row in docs/design.md §7 (its room and what it may import)", p)
	}
}

// TestDesignTableMatchesImports: what every package imports of ours is what
// its row of docs/design.md §7 allows (the row's package itself, and what
// it lists with their subpackages).
func TestDesignTableMatchesImports(t *testing.T) {
	root := repoRoot(t)
	pkgs := modulePackages(t, root)
	for _, r := range designRows(t, root) {
		if r.all {
			continue
		}
		for _, p := range r.pkgs {
			imports, ok := pkgs[p]
			if !ok {
				continue // TestDesignTableNamesEveryPackage says so
			}
			allowed := append([]string{}, r.allowed...)
			if r.subs {
				allowed = append(allowed, p)
			}
			for _, imp := range imports {
				if !hasPrefix(imp, allowed) {
					t.Errorf("%s imports %s, which its row of docs/design.md §7 does not allow (it allows %v)", p, imp, rowRule(r))
				}
			}
		}
	}
}

func rowRule(r designRow) string {
	if r.none {
		return "none of ours"
	}
	s := strings.Join(r.allowed, ", ")
	if r.subs {
		s += ", its subpackages"
	}
	return s
}

// TestDesignRowsParse guards the parser above on the row forms the table
// uses, so that a rewording of a cell does not silently disable a check.
func TestDesignRowsParse(t *testing.T) {
	root := repoRoot(t)
	byPkg := map[string]designRow{}
	for _, r := range designRows(t, root) {
		for _, p := range r.pkgs {
			byPkg[p] = r
		}
	}
	want := map[string]string{
		"config":                       "none of ours",
		"diff":                         "config",
		"providers/compaction":         "providers/internal/bound, providers/internal/reach, diff",
		"providers/internal/reach":     "providers/internal/manifestread",
		"cmd/icewright/internal/views": "diff, apply, config",
	}
	for p, rule := range want {
		r, ok := byPkg[p]
		if !ok {
			t.Errorf("no row for %s", p)
			continue
		}
		if got := rowRule(r); got != rule {
			t.Errorf("row of %s parses as %q, want %q", p, got, rule)
		}
	}
	if r := byPkg["cmd/icewright"]; !r.all {
		t.Errorf("row of cmd/icewright should allow everything below: %+v", r)
	}
	if r := byPkg["providers"]; !r.subs {
		t.Errorf("row of providers should allow its subpackages: %+v", r)
	}
}
