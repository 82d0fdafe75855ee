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

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/doctor"
)

var (
	hclBlock    = regexp.MustCompile("(?s)```hcl\n(.*?)```")
	catalogDecl = regexp.MustCompile(`catalog "([^"]+)"\s*{\s*type\s*=\s*"([a-z]+)"`)
	warehouseOf = regexp.MustCompile(`warehouse\s*=\s*"([a-z0-9]+)://`)
	envCall     = regexp.MustCompile(`env\("([A-Za-z0-9_]+)"\)`)
)

// validateOnly reports whether a snippet of docs/catalogs.md is checked by
// the loader only: Glue and a Hive metastore have no server in the suite,
// nor have GCS and Azure with production credentials (the page says so);
// the GCS and Azure snippets on the emulators (127.0.0.1) run in full.
func validateOnly(typ, snippet string) bool {
	if typ == "glue" || typ == "hive" {
		return true
	}
	m := warehouseOf.FindStringSubmatch(snippet)
	return m != nil && (m[1] == "gs" || strings.HasPrefix(m[1], "abfs") || strings.HasPrefix(m[1], "wasb")) &&
		!strings.Contains(snippet, "127.0.0.1")
}

// TestDocsCatalogSnippets loads every configuration snippet of
// docs/catalogs.md with the loader and checks of `icewright validate`, and
// those whose servers the suite has (scripts/services.sh) then create a
// table, plan it and pass `icewright doctor`, so the documentation cannot
// rot. Every catalog type and store the page promises must be there.
func TestDocsCatalogSnippets(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "docs", "catalogs.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := hclBlock.FindAllStringSubmatch(string(doc), -1)
	types, stores := map[string]bool{}, map[string]bool{}
	for _, blk := range blocks {
		if m := catalogDecl.FindStringSubmatch(blk[1]); m != nil {
			types[m[2]] = true
		}
		if m := warehouseOf.FindStringSubmatch(blk[1]); m != nil {
			stores[m[1]] = true
		} else {
			stores["file"] = true // a relative warehouse is a local directory
		}
	}
	for _, want := range []string{"sql", "rest", "glue", "hive", "hadoop"} {
		if !types[want] {
			t.Errorf("docs/catalogs.md has no snippet of a %s catalog", want)
		}
	}
	for _, want := range []string{"file", "s3", "gs", "abfss"} {
		if !stores[want] {
			t.Errorf("docs/catalogs.md has no snippet with a %s:// warehouse", want)
		}
	}
	for _, blk := range blocks {
		snippet := blk[1]
		m := catalogDecl.FindStringSubmatch(snippet)
		if m == nil {
			t.Fatalf("snippet without a catalog block:\n%s", snippet)
		}
		name, typ := m[1], m[2]
		t.Run(name, func(t *testing.T) {
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
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			if validateOnly(typ, snippet) {
				// The variables a snippet reads are the user's secrets:
				// any value validates.
				env := os.Environ()
				for _, v := range envCall.FindAllStringSubmatch(snippet, -1) {
					if _, ok := os.LookupEnv(v[1]); !ok {
						env = append(env, v[1]+"=placeholder")
					}
				}
				cfg, diags := config.Load(dir, config.LoadOptions{Env: env})
				if cfg != nil {
					diags = append(diags, providers.ConfigDiagnostics(cfg, time.Now())...)
				}
				if diags.HasErrors() {
					t.Fatalf("snippet does not validate:\n%s\n%s", src, diags.Error())
				}
				return
			}
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
			case strings.Contains(snippet, "s3://"):
				s3 := testenv.S3(t)
				if !strings.Contains(snippet, "s3.access-key-id") {
					// The snippet leaves the keys to the AWS default
					// chain: here, its first link, the environment.
					t.Setenv("AWS_ACCESS_KEY_ID", s3.AccessKey)
					t.Setenv("AWS_SECRET_ACCESS_KEY", s3.SecretKey)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if strings.Contains(snippet, "sqlite:lake/catalog.db") {
				if err := os.MkdirAll(filepath.Join(dir, "lake", "warehouse"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "lake", "catalog.db"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
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

			rep, err := doctor.Run(ctx, sess, doctor.Options{Catalog: name, Selectors: []string{name + "." + ns + ".*"}})
			if err != nil {
				t.Fatal(err)
			}
			checked := map[string]bool{}
			for _, f := range rep.Findings {
				checked[f.Check] = true
				if f.Status == diff.DoctorFail {
					t.Errorf("doctor: %s %s: %s", f.Check, f.Status, f.Message)
				}
				// The page says what doctor names for keys from the chain.
				if f.Check == "credentials" && strings.Contains(snippet, "s3://") && !strings.Contains(snippet, "s3.access-key-id") &&
					!strings.Contains(string(doc), "`"+f.Message+"`") {
					t.Errorf("doctor's credential line %q is not the one docs/catalogs.md quotes", f.Message)
				}
			}
			for _, c := range []string{"reachable", "credentials", "write", "list", "read", "delete", "clock", "format"} {
				if !checked[c] {
					t.Errorf("doctor made no %s check: %+v", c, rep.Findings)
				}
			}
		})
	}
}

// TestReadmeRepeatsCatalogSnippets keeps the README's "Catalogs and storage"
// section in step with the snippets TestDocsCatalogSnippets tests: every
// hcl block there must be one of docs/catalogs.md's verbatim, so the README
// shows only tested configuration (it shows the three run end to end; the
// page has the rest).
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
	tested := map[string]bool{}
	for _, blk := range hclBlock.FindAllStringSubmatch(string(doc), -1) {
		tested[blk[1]] = true
	}
	shown := hclBlock.FindAllStringSubmatch(section, -1)
	if len(shown) == 0 {
		t.Fatal("README's Catalogs and storage section shows no hcl snippet")
	}
	for _, blk := range shown {
		if !tested[blk[1]] {
			t.Errorf("README's Catalogs and storage section shows a snippet docs/catalogs.md does not test:\n%s", blk[1])
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
