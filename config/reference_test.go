package config

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
)

var updateReference = flag.Bool("update", false, "rewrite docs/configuration.md from the decoder's tables")

const referencePath = "../docs/configuration.md"

// TestReference fails when docs/configuration.md is not what Reference
// renders now; `go generate ./config` (or go test -run TestReference
// -update) rewrites it.
func TestReference(t *testing.T) {
	want := Reference()
	if *updateReference {
		if err := os.WriteFile(referencePath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is stale: run go generate ./config", filepath.Clean(referencePath))
	}
}

// referenceSections reads the doc back: for each "## " or "### " heading,
// the attributes its tables list.
func referenceSections(t *testing.T, doc string) map[string]map[string]bool {
	t.Helper()
	row := regexp.MustCompile("^\\| `([a-z_0-9]+)` \\|")
	out := map[string]map[string]bool{}
	section := ""
	for _, line := range strings.Split(doc, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
		} else if h, ok := strings.CutPrefix(line, "### "); ok {
			section = h
		} else if m := row.FindStringSubmatch(line); m != nil {
			if out[section] == nil {
				out[section] = map[string]bool{}
			}
			out[section][m[1]] = true
		}
	}
	return out
}

// TestReferenceHasEveryAttribute walks the schemas validate decodes with
// (not the doc tables) and wants every block and attribute in the
// committed docs/configuration.md, with something said about it.
func TestReferenceHasEveryAttribute(t *testing.T) {
	raw, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	sections := referenceSections(t, doc)
	want := func(section string, schema *hcl.BodySchema) {
		t.Helper()
		for _, a := range schema.Attributes {
			if !sections[section][a.Name] {
				t.Errorf("docs/configuration.md: section %q does not list %s", section, a.Name)
			}
		}
	}
	for _, b := range topSchema.Blocks {
		if !strings.Contains(doc, "\n## "+b.Type+"\n") && !strings.Contains(doc, "\n## policy, table, tables\n") {
			t.Errorf("docs/configuration.md has no section for the %s block", b.Type)
		}
	}
	settings, _ := gohcl.ImpliedBodySchema(settingsHCL{})
	want("icewright", settings)
	want("variable", variableSchema)
	want("catalog", catalogSchema)
	for _, kind := range []bodyKind{bodyPolicy, bodyTable, bodyTables} {
		top, nested := (&loader{}).bodySchemas(kind)
		for _, a := range top.Attributes {
			if !sections["Top-level attributes"][a.Name] && !sections["policy, table, tables"][a.Name] {
				t.Errorf("docs/configuration.md does not list %s of a %s block", a.Name, bodyKindNames[kind])
			}
		}
		for _, b := range top.Blocks {
			want(b.Type, nested[b.Type])
		}
	}
	fns := functions("", nil, nil)
	for name := range fns {
		if !strings.Contains(doc, "| `"+name+"(") {
			t.Errorf("docs/configuration.md does not list the function %s", name)
		}
	}
	for _, named := range []string{"zorder_columns", "include_non_iceberg_files", "prefix_mismatch", "equal_authorities",
		"min_files_for_ratio", "remove_properties", "max_ref_age", "required_version", EnvVarPrefix} {
		if !strings.Contains(doc, named) {
			t.Errorf("docs/configuration.md does not mention %s", named)
		}
	}
	for _, f := range policyFields() {
		if strings.TrimSpace(f.doc) == "" {
			t.Errorf("%s has no doc in policyFields", f.path())
		}
	}
}
