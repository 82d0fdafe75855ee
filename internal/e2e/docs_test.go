package e2e

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/apply"
	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/internal/testenv"
	"github.com/iceops/iceops/providers"
)

var (
	hclBlock    = regexp.MustCompile("(?s)```hcl\n(.*?)```")
	catalogDecl = regexp.MustCompile(`catalog "([^"]+)"\s*{\s*type\s*=\s*"([a-z]+)"`)
)

// TestDocsCatalogSnippets loads every configuration snippet of
// docs/catalogs.md and plans a table through it on the servers of
// scripts/services.sh, so the documentation cannot rot.
func TestDocsCatalogSnippets(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "docs", "catalogs.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := hclBlock.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) != 5 {
		t.Fatalf("docs/catalogs.md has %d hcl blocks, want 5 (sqlite, postgres, rest, gcs, azure)", len(blocks))
	}
	for _, blk := range blocks {
		snippet := blk[1]
		m := catalogDecl.FindStringSubmatch(snippet)
		if m == nil {
			t.Fatalf("snippet without a catalog block:\n%s", snippet)
		}
		name, typ := m[1], m[2]
		t.Run(name, func(t *testing.T) {
			switch {
			case typ == "rest":
				testenv.REST(t)
			case strings.Contains(snippet, "postgres://"):
				testenv.Postgres(t)
				testenv.S3(t)
			case strings.Contains(snippet, "gs://"):
				testenv.GCS(t) // creates the bucket
			case strings.Contains(snippet, "abfs://"):
				testenv.Azure(t) // creates the container
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			if strings.Contains(snippet, "sqlite:lake/catalog.db") {
				if err := os.MkdirAll(filepath.Join(dir, "lake", "warehouse"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "lake", "catalog.db"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ns := testenv.UniqueName(t, "docs")
			src := snippet + `
policy "docs" {
  snapshot_retention {
    max_age       = "7d"
    min_snapshots = 1
  }
}

tables "` + name + `.` + ns + `.*" {
  policy = policy.docs
}
`
			if err := os.WriteFile(filepath.Join(dir, "main.iceops.hcl"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, diags := config.Load(dir, config.LoadOptions{Env: os.Environ()})
			if diags.HasErrors() {
				t.Fatalf("snippet does not load:\n%s\n%s", src, diags.Error())
			}
			sess := providers.Open(cfg, providers.Options{Env: os.Environ()})
			defer sess.Close()
			cat, err := sess.Catalog(ctx, name)
			if err != nil {
				t.Fatalf("open catalog %s from the snippet: %v", name, err)
			}
			createNamespace(ctx, t, cat, ns)
			tbl, err := cat.CreateTable(ctx, table.Identifier{ns, "t"}, eventsSchema)
			if err != nil {
				t.Fatalf("create a table through the snippet's catalog: %v", err)
			}
			appendRows(ctx, t, tbl, 0, 10)
			p := planOnly(ctx, t, cfg, time.Now)
			if len(p.Errors) > 0 {
				t.Fatalf("plan errors: %+v", p.Errors)
			}
			findTable(t, p, name+"."+ns+".t")
		})
	}
}

// TestReadmeRepeatsCatalogSnippets keeps the README's "Catalogs and storage"
// section in step with the snippets TestDocsCatalogSnippets runs: each must
// appear there verbatim, so the README shows only tested configuration.
func TestReadmeRepeatsCatalogSnippets(t *testing.T) {
	root := testenv.RepoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "catalogs.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Catalogs and storage")
	if !ok {
		t.Fatal(`README.md has no "## Catalogs and storage" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := hclBlock.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) == 0 {
		t.Fatal("docs/catalogs.md has no hcl blocks")
	}
	for _, blk := range blocks {
		if !strings.Contains(section, "```hcl\n"+blk[1]+"```") {
			t.Errorf("README's Catalogs and storage section lacks this tested snippet:\n%s", blk[1])
		}
	}
}

// jsonFields are the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// docSection is the text of the "## title" section of a document.
func docSection(t *testing.T, doc, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("docs/plan-format.md has no %q section", "## "+title)
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// documents reports whether section names a JSON field in backticks, alone
// or as the last part of a path (`tables[].actions[].x`, `x[]`).
func documents(section, field string) bool {
	return regexp.MustCompile("`(?:[a-z_]+(?:\\[\\])?\\.)*" + regexp.QuoteMeta(field) + "(?:\\[\\])?`").MatchString(section)
}

// TestPlanFormatCoversEveryField: docs/plan-format.md documents every field
// of the plan document, every action kind with its destructiveness and
// payload fields, and every field of the apply -json document, so a field
// added to a struct without a word in the document fails here.
func TestPlanFormatCoversEveryField(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "docs", "plan-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)

	plan := docSection(t, doc, "JSON")
	for _, typ := range []reflect.Type{reflect.TypeOf(diff.Plan{}), reflect.TypeOf(diff.TablePlan{}), reflect.TypeOf(diff.Summary{})} {
		for _, f := range jsonFields(typ) {
			if !documents(plan, f) {
				t.Errorf("the JSON section does not document %s.%s", typ.Name(), f)
			}
		}
	}
	for _, kind := range diff.Kinds() {
		row := regexp.MustCompile("(?m)^\\| `" + string(kind) + "` \\| (yes|no) \\|(.*)$").FindStringSubmatch(plan)
		if row == nil {
			t.Errorf("the action table has no row for %s", kind)
			continue
		}
		if want := map[bool]string{true: "yes", false: "no"}[kind.Destructive()]; row[1] != want {
			t.Errorf("the action table says %s is destructive: %s, want %s", kind, row[1], want)
		}
		for _, f := range jsonFields(kind.PayloadType()) {
			if !documents(row[2], f) {
				t.Errorf("the action table's %s row does not document %s", kind, f)
			}
		}
	}

	results := docSection(t, doc, "apply -json")
	for _, typ := range []reflect.Type{reflect.TypeOf(apply.Results{}), reflect.TypeOf(apply.TableResult{}),
		reflect.TypeOf(apply.ActionResult{}), reflect.TypeOf(apply.ResultSummary{})} {
		for _, f := range jsonFields(typ) {
			if !documents(results, f) {
				t.Errorf("the apply -json section does not document %s.%s", typ.Name(), f)
			}
		}
	}
	if !strings.Contains(results, "| `interrupted` | bool |") || !strings.Contains(results, "always present") {
		t.Error("the apply -json section does not say interrupted is always present")
	}
}

// TestPlanFormatListsEveryWarningCode: each lint code (config.Lints) has
// its row in docs/plan-format.md with its name, so a code users can put
// in ignore_warnings is never undocumented.
func TestPlanFormatListsEveryWarningCode(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "docs", "plan-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := docSection(t, string(raw), "JSON")
	for _, l := range config.Lints() {
		if !strings.Contains(section, "| `"+l.Code+"` | `"+l.Name+"` |") {
			t.Errorf("the warning codes table has no row for %s (%s)", l.Code, l.Name)
		}
	}
}
