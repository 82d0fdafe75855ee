package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// writeDir writes files into a fresh directory and returns it.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// diagLines renders diagnostics as "file:line:col: severity: summary" with
// the file's base name, so tests assert positions exactly.
func diagLines(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		pos := "-"
		if d.Subject != nil {
			pos = fmt.Sprintf("%s:%d:%d", filepath.Base(d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column)
		}
		out = append(out, fmt.Sprintf("%s: %s: %s", pos, sev, d.Summary))
	}
	return out
}

const baseCatalog = `
catalog "lake" {
  type      = "sql"
  uri       = "sqlite:lake/catalog.db"
  warehouse = "lake/warehouse"
}
`

func mustLoad(t *testing.T, files map[string]string, opts LoadOptions) *Config {
	t.Helper()
	cfg, diags := Load(writeDir(t, files), opts)
	if diags.HasErrors() {
		t.Fatalf("Load: %v", diagLines(diags))
	}
	return cfg
}

func TestLoadDesignExample(t *testing.T) {
	cfg, diags := Load("testdata", LoadOptions{Version: "0.1.0"})
	if diags.HasErrors() {
		t.Fatalf("Load: %v", diagLines(diags))
	}
	// The example is valid but deliberately short on retention: both
	// max_age values are under Trino's floor and get a warning each.
	want := []string{
		"design.icewright.hcl:36:21: warning: Snapshot retention below Trino's 7-day floor",
		"design.icewright.hcl:70:34: warning: Snapshot retention below Trino's 7-day floor",
	}
	if got := diagLines(diags); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cfg.Settings.Parallelism != 4 || cfg.Settings.RequiredVersion != ">= 0.1" {
		t.Errorf("settings = %+v", cfg.Settings)
	}
	if v := cfg.Variables["retention"]; v == nil || v.Value != "5d" || v.Type != "string" {
		t.Errorf("variable retention = %+v", v)
	}
	c := cfg.CatalogByName("lake")
	abs, _ := filepath.Abs("testdata")
	if c == nil || c.URI != "sqlite:"+filepath.Join(abs, "lake/catalog.db") || c.Warehouse != "file://"+filepath.Join(abs, "lake/warehouse") {
		t.Fatalf("catalog = %+v", c)
	}
	if v, ok := c.Properties["s3.endpoint"]; !ok || v != "" {
		t.Errorf("s3.endpoint = %q, %v; want the empty string from an unset env()", v, ok)
	}
	if !strings.HasPrefix(cfg.Digest, "sha256:") || len(cfg.Digest) != len("sha256:")+64 {
		t.Errorf("digest = %q", cfg.Digest)
	}

	e, ok := cfg.Resolve("lake.analytics.clicks")
	if !ok {
		t.Fatal("lake.analytics.clicks is not managed")
	}
	if e.MatchedBy != `table "lake.analytics.clicks"` || e.PolicyName != "events" {
		t.Errorf("matched by %q with policy %q", e.MatchedBy, e.PolicyName)
	}
	r := e.SnapshotRetention
	if r.MaxAge.Value != 48*time.Hour || r.MaxAge.Block != `table "lake.analytics.clicks"` || r.MaxAge.Origin.Start.Line != 70 {
		t.Errorf("max_age = %+v, want 2d from the table block at line 70", r.MaxAge)
	}
	// The override keeps the policy's other retention attributes.
	if r.MinSnapshots.Value != 3 || r.MinSnapshots.Block != `policy "base"` || r.MaxRefAge.Value != 30*24*time.Hour {
		t.Errorf("retention = %+v", r)
	}
	if s := e.Compaction.Strategy; s.Value != "sort" || s.Block != `policy "events"` {
		t.Errorf("strategy = %+v, want sort from policy events", s)
	}
	if n := e.Compaction.MinInputFiles; n.Value != 5 || n.Block != `policy "base"` {
		t.Errorf("min_input_files = %+v, want 5 inherited from base", n)
	}
	if len(e.SortOrder.Value) != 2 || e.SortOrder.Value[0].String() != "event_ts DESC NULLS LAST" || e.SortOrder.Value[1].Transform != "bucket[16]" {
		t.Errorf("sort order = %+v", e.SortOrder.Value)
	}
	wantProps := map[string]string{
		"write.target-file-size-bytes":         "536870912",
		"history.expire.max-snapshot-age-ms":   "172800000",
		"history.expire.min-snapshots-to-keep": "3",
		"history.expire.max-ref-age-ms":        "2592000000",
		"write.parquet.compression-codec":      "zstd",
	}
	if len(e.DerivedProperties) != len(wantProps) {
		t.Errorf("derived properties = %v", e.DerivedProperties)
	}
	for k, v := range wantProps {
		if got := e.DerivedProperties[k]; got.Value != v || !got.Set || got.Origin.Filename == "" {
			t.Errorf("derived %s = %+v, want %s with an origin", k, got, v)
		}
	}

	// A table of the selector gets policy events with the policy's 5d.
	e, ok = cfg.Resolve("lake.analytics.views")
	if !ok || e.MatchedBy != `tables "lake.analytics.*"` || e.SnapshotRetention.MaxAge.Value != 5*24*time.Hour {
		t.Errorf("lake.analytics.views: %v %+v", ok, e)
	}
	for _, addr := range []string{"lake.analytics.tmp_x", "lake.sales.orders", "other.analytics.clicks", "lake.analytics.eu.clicks", "bad"} {
		if e, ok := cfg.Resolve(addr); ok || e != nil {
			t.Errorf("Resolve(%q) = %v, %v; want an unmanaged table", addr, e, ok)
		}
	}
}

func TestExplainDesign(t *testing.T) {
	cfg, diags := Load("testdata", LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diagLines(diags))
	}
	e, _ := cfg.Resolve("lake.analytics.clicks")
	lines := map[string]ExplainLine{}
	for _, l := range e.Explain() {
		lines[l.Name] = l
	}
	check := func(name, value, block string, line int) {
		t.Helper()
		l, ok := lines[name]
		if !ok {
			t.Errorf("no explain line %s", name)
			return
		}
		if l.Value != value || l.Block != block || l.Origin.Start.Line != line || l.Default != (block == "") {
			t.Errorf("%s = %+v, want %s from %s line %d", name, l, value, block, line)
		}
	}
	check("snapshot_retention.max_age", `"2d"`, `table "lake.analytics.clicks"`, 70)
	check("compaction.strategy", `"sort"`, `policy "events"`, 60)
	check("target_file_size", `"512MiB"`, `policy "base"`, 25)
	check("compaction.max_file_size", `"921MiB"`, `policy "base"`, 31)
	check("orphan_files.exclude", `["metadata/*flink*"]`, `policy "base"`, 44)
	check(`properties["write.parquet.compression-codec"]`, `"zstd"`, `policy "base"`, 53)
	check("sort_order", `["event_ts DESC NULLS LAST", "bucket(16, user_id) ASC NULLS FIRST"]`, `policy "events"`, 59)
	check("orphan_files.min_files_for_ratio", "100", "", 0)
	check("compaction.max_bytes_per_run", "0", "", 0)
}

func TestDiagnostics(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		want   []string // file:line:col: severity: summary
		detail string   // a substring of the first diagnostic's detail
	}{
		{
			name: "unknown attribute suggests the nearest",
			src: baseCatalog + `
policy "p" {
  snapshot_retention {
    min_snapshot = 3
  }
}`,
			want:   []string{"main.icewright.hcl:10:5: error: Unsupported argument"},
			detail: `Did you mean "min_snapshots"?`,
		},
		{
			name: "unknown block suggests the nearest",
			src: baseCatalog + `
policy "p" {
  snapshot_retension {
  }
}`,
			want:   []string{"main.icewright.hcl:9:3: error: Unsupported block type"},
			detail: `Did you mean "snapshot_retention"?`,
		},
		{
			name: "unknown top-level block",
			src:  baseCatalog + "\npolicies \"p\" {}\n",
			want: []string{"main.icewright.hcl:8:1: error: Unsupported block type"},
		},
		{
			name: "bad size",
			src: baseCatalog + `
policy "p" {
  target_file_size = "12 parsecs"
}`,
			want:   []string{"main.icewright.hcl:9:22: error: Invalid size"},
			detail: `unknown size unit "parsecs"`,
		},
		{
			name: "bad duration",
			src: baseCatalog + `
policy "p" {
  snapshot_retention { max_age = "5 fortnights" }
}`,
			want: []string{"main.icewright.hcl:9:34: error: Invalid duration"},
		},
		{
			name: "older_than below 24h",
			src: baseCatalog + `
policy "p" {
  orphan_files {
    older_than = "1h"
  }
}`,
			want:   []string{"main.icewright.hcl:10:18: error: Orphan-file age guard below 24 hours"},
			detail: "older_than is 1h",
		},
		{
			name: "orphan sweep interval below an hour",
			src: baseCatalog + `
policy "p" {
  orphan_files {
    every = "10m"
  }
}`,
			want:   []string{"main.icewright.hcl:10:13: error: Orphan sweep interval too short"},
			detail: "orphan_files.every is 10m; it must be at least 1h",
		},
		{
			name: "wrong type",
			src: baseCatalog + `
policy "p" {
  snapshot_retention { min_snapshots = "three" }
}`,
			want: []string{"main.icewright.hcl:9:40: error: Incorrect attribute value type"},
		},
		{
			name: "negative price",
			src: baseCatalog + `
policy "p" {
  pricing {
    put_per_1000 = -0.005
  }
}`,
			want:   []string{"main.icewright.hcl:10:20: error: Invalid price"},
			detail: "cannot be negative",
		},
		{
			name: "unknown pricing storage suggests the nearest",
			src: baseCatalog + `
policy "p" {
  pricing { storage = "gs" }
}`,
			want:   []string{"main.icewright.hcl:9:23: error: Invalid pricing storage"},
			detail: `use one of "s3", "gcs", "azure", "none"`,
		},
		{
			name: "undeclared policy",
			src: baseCatalog + `
policy "base" {}
table "lake.a.b" {
  policy = policy.bsae
}`,
			want:   []string{"main.icewright.hcl:10:12: error: Reference to undeclared policy"},
			detail: "Did you mean policy.base?",
		},
		{
			name: "policy reference that is not a traversal",
			src: baseCatalog + `
policy "base" {}
table "lake.a.b" {
  policy = "base"
}`,
			want: []string{"main.icewright.hcl:10:12: error: Invalid policy reference"},
		},
		{
			name: "extends cycle names the chain",
			src: baseCatalog + `
policy "a" {
  extends = policy.c
}
policy "b" {
  extends = policy.a
}
policy "c" {
  extends = policy.b
}`,
			want:   []string{"main.icewright.hcl:9:13: error: Policy inheritance cycle"},
			detail: "policy a extends c extends b extends a",
		},
		{
			name: "self extends",
			src: baseCatalog + `
policy "a" {
  extends = policy.a
}`,
			want:   []string{"main.icewright.hcl:9:13: error: Policy inheritance cycle"},
			detail: "policy a extends a",
		},
		{
			name: "overlapping selectors name both blocks",
			src: baseCatalog + `
tables "lake.analytics.*" {}
tables "lake.*.clicks" {}
`,
			want:   []string{"main.icewright.hcl:9:8: error: Overlapping table selectors"},
			detail: `tables "lake.*.clicks" and tables "lake.analytics.*" (declared at`,
		},
		{
			name: "undeclared catalog",
			src: baseCatalog + `
table "warehouse.a.b" {}
tables "lak.x.*" {}
`,
			want: []string{
				"main.icewright.hcl:8:7: error: Undeclared catalog",
				"main.icewright.hcl:9:8: error: Undeclared catalog",
			},
			detail: `no catalog "warehouse" is declared`,
		},
		{
			name: "unknown sort term points at the element",
			src: baseCatalog + `
policy "p" {
  sort_order = ["ts desc", "frobnicate(ts)"]
}`,
			want: []string{"main.icewright.hcl:9:28: error: Unknown sort term"},
		},
		{
			name: "unknown strategy",
			src: baseCatalog + `
policy "p" {
  compaction { strategy = "binpak" }
}`,
			want:   []string{"main.icewright.hcl:9:27: error: Invalid compaction strategy"},
			detail: `Did you mean "binpack"?`,
		},
		{
			name: "required variable",
			src:  baseCatalog + "\nvariable \"region\" {\n  type = string\n}\n",
			want: []string{"main.icewright.hcl:8:1: error: No value for required variable"},
		},
		{
			name: "table address without a namespace",
			src:  baseCatalog + "\ntable \"lake.b\" {}\n",
			want: []string{"main.icewright.hcl:8:7: error: Invalid table address"},
		},
		{
			name: "duplicate policy",
			src:  baseCatalog + "\npolicy \"p\" {}\npolicy \"p\" {}\n",
			want: []string{"main.icewright.hcl:9:1: error: Duplicate policy"},
		},
		{
			name: "zorder without columns",
			src: baseCatalog + `
table "lake.a.b" {
  compaction { strategy = "zorder" }
}`,
			want: []string{"main.icewright.hcl:9:16: error: Z-order needs columns"},
		},
		{
			name: "min file size above target",
			src: baseCatalog + `
table "lake.a.b" {
  target_file_size = "128MiB"
  compaction { min_file_size = "256MiB" }
}`,
			want: []string{"main.icewright.hcl:10:16: error: min_file_size not below the target"},
		},
		{
			name: "property set and removed",
			src: baseCatalog + `
table "lake.a.b" {
  properties        = { "k" = "v" }
  remove_properties = ["k"]
}`,
			want: []string{"main.icewright.hcl:10:3: error: Property both set and removed"},
		},
		{
			name: "undefined function",
			src: baseCatalog + `
policy "p" { target_file_size = nope("1") }`,
			want: []string{"main.icewright.hcl:8:33: error: Call to unknown function"},
		},
		{
			name: "unsupported icewright version",
			src:  "icewright {\n  required_version = \">= 2.0\"\n}\n" + baseCatalog,
			want: []string{"main.icewright.hcl:2:22: error: Unsupported icewright version"},
		},
		{
			name: "syntax error",
			src:  baseCatalog + "\npolicy \"p\" {\n  target_file_size = \n}\n",
			want: []string{"main.icewright.hcl:9:22: error: Invalid expression"},
		},
		{
			name: "pattern that matches no address",
			src:  baseCatalog + "\ntables \"lake.*\" {}\n",
			want: []string{"main.icewright.hcl:8:8: error: Table pattern matches no table"},
		},
		{
			name: "selector that excludes everything",
			src:  baseCatalog + "\ntables \"lake.a.*\" {\n  exclude = [\"lake.**\"]\n}\n",
			want: []string{"main.icewright.hcl:8:8: warning: Selector excludes every table it matches"},
		},
		{
			name: "gc disabled with an orphan policy",
			src: baseCatalog + `
policy "p" {
  orphan_files {}
  properties = { "gc.enabled" = "false" }
}
tables "lake.a.*" { policy = policy.p }`,
			want: []string{"main.icewright.hcl:10:18: warning: gc.enabled=false with an expiry or orphan policy"},
		},
		{
			name: "catalog type",
			src:  "catalog \"lake\" {\n  type = \"sqll\"\n  uri  = \"sqlite:x.db\"\n}\n",
			want: []string{"main.icewright.hcl:2:10: error: Invalid catalog type"},
		},
		{
			name: "duplicate catalog and table",
			src:  baseCatalog + baseCatalog + "\ntable \"lake.a.b\" {}\ntable \"lake.a.b\" {}\n",
			want: []string{"main.icewright.hcl:8:1: error: Duplicate catalog", "main.icewright.hcl:15:1: error: Duplicate table block"},
		},
		{
			name: "invalid exclude pattern",
			src:  baseCatalog + "\ntables \"lake.a.*\" {\n  exclude = [\"lake.a.b\", \"lake..x\"]\n}\n",
			want: []string{"main.icewright.hcl:9:26: error: Invalid exclude pattern"},
		},
		{
			name: "ratio out of range",
			src:  baseCatalog + "\npolicy \"p\" {\n  orphan_files { max_orphan_ratio = 1.5 }\n}\n",
			want: []string{"main.icewright.hcl:9:37: error: Invalid max_orphan_ratio"},
		},
		{
			name: "storage root that is a prefix",
			src:  baseCatalog + "\npolicy \"p\" {\n  orphan_files { allow_storage_roots = [\"s3://b\", \"s3://b/t\"] }\n}\n",
			want: []string{"main.icewright.hcl:9:40: error: Invalid storage root"},
		},
		{
			name: "file not found",
			src:  baseCatalog + "\npolicy \"p\" {\n  properties = { \"k\" = file(\"nope.txt\") }\n}\n",
			want: []string{"main.icewright.hcl:9:24: error: Error in function call"},
		},
		{
			name: "property owned by an attribute",
			src:  baseCatalog + "\npolicy \"p\" {\n  properties = { \"write.target-file-size-bytes\" = \"1\" }\n}\n",
			want: []string{"main.icewright.hcl:9:18: warning: Property set by a policy attribute"},
		},
		{
			name: "size as a fraction of a byte",
			src:  baseCatalog + "\npolicy \"p\" {\n  target_file_size = 1.5\n}\n",
			want: []string{"main.icewright.hcl:9:22: error: Invalid size"},
		},
		{
			name: "duration as a number",
			src:  baseCatalog + "\npolicy \"p\" {\n  snapshot_retention { max_age = 86400 }\n}\n",
			want: []string{"main.icewright.hcl:9:34: error: Incorrect attribute value type"},
		},
		// Warnings: the configuration still loads.
		{
			name: "lint warnings",
			src: baseCatalog + `
table "lake.a.b" {
  target_file_size = "16MiB"
  compaction { strategy = "sort" }
  snapshot_retention { max_age = "3d" }
}`,
			want: []string{
				"main.icewright.hcl:9:22: warning: Target file size outside 64MiB–2GiB",
				"main.icewright.hcl:10:16: warning: Sort strategy without a sort order",
				"main.icewright.hcl:11:34: warning: Snapshot retention below Trino's 7-day floor",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Load(writeDir(t, map[string]string{"main.icewright.hcl": tt.src}), LoadOptions{Version: "0.1.0"})
			got := diagLines(diags)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("diagnostics:\n%s\nwant:\n%s\n%v", strings.Join(got, "\n"), strings.Join(tt.want, "\n"), diags)
			}
			if tt.detail != "" && !strings.Contains(diags[0].Detail, tt.detail) {
				t.Errorf("detail %q does not contain %q", diags[0].Detail, tt.detail)
			}
			for _, d := range diags {
				if d.Subject == nil {
					t.Errorf("diagnostic %q has no subject", d.Summary)
				}
			}
		})
	}
}

// TestSeveralErrorsAtOnce checks that one Load reports every problem, across
// files, instead of stopping at the first.
func TestSeveralErrorsAtOnce(t *testing.T) {
	_, diags := Load(writeDir(t, map[string]string{
		"a.icewright.hcl": baseCatalog + `
policy "p" {
  target_file_size = "12 parsecs"
  orphan_files { older_than = "1h" }
}`,
		"b.icewright.hcl": `
table "lake.a.b" {
  policy = policy.missing
  snapshot_retention { min_snapshot = 3 }
}`,
		"ignored.hcl": "this is not read {",
	}), LoadOptions{})
	want := []string{
		"a.icewright.hcl:9:22: error: Invalid size",
		"a.icewright.hcl:10:31: error: Orphan-file age guard below 24 hours",
		"b.icewright.hcl:3:12: error: Reference to undeclared policy",
		"b.icewright.hcl:4:24: error: Unsupported argument",
	}
	if got := diagLines(diags); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNoConfigurationFiles(t *testing.T) {
	_, diags := Load(writeDir(t, map[string]string{"main.tf": ""}), LoadOptions{})
	if !diags.HasErrors() || diags[0].Summary != "No configuration files" {
		t.Fatalf("diags = %v", diags)
	}
	_, diags = Load(filepath.Join(t.TempDir(), "missing"), LoadOptions{})
	if !diags.HasErrors() {
		t.Fatal("a missing directory loaded without error")
	}
}

func TestVariablePrecedence(t *testing.T) {
	src := baseCatalog + `
variable "retention" {
  type    = string
  default = "8d"
}
variable "min" {
  type    = number
  default = 1
}
variable "schemes" {
  type    = map(string)
  default = {}
}
variable "secret" {
  sensitive   = true
  description = "a password"
}
policy "p" {
  snapshot_retention {
    max_age       = var.retention
    min_snapshots = var.min
  }
  orphan_files {
    equal_schemes = var.schemes
  }
}
table "lake.a.b" { policy = policy.p }
`
	files := map[string]string{
		"main.icewright.hcl": src,
		"prod.vars":          "retention = \"9d\"\nmin = 4\n",
		"late.vars":          "min = 5\nunknown = 1\n",
	}
	tests := []struct {
		name     string
		opts     LoadOptions
		maxAge   time.Duration
		min      int
		warnings int
	}{
		{"defaults", LoadOptions{Vars: []string{"secret=x"}}, 8 * 24 * time.Hour, 1, 0},
		{"env beats default", LoadOptions{Env: []string{"ICEWRIGHT_VAR_retention=10d", "ICEWRIGHT_VAR_secret=x"}}, 10 * 24 * time.Hour, 1, 0},
		{"var-file beats env", LoadOptions{Env: []string{"ICEWRIGHT_VAR_retention=10d", "ICEWRIGHT_VAR_secret=x"}, VarFiles: []string{"prod.vars"}}, 9 * 24 * time.Hour, 4, 0},
		{"later var-file wins", LoadOptions{Vars: []string{"secret=x"}, VarFiles: []string{"prod.vars", "late.vars"}}, 9 * 24 * time.Hour, 5, 1},
		{"-var beats everything", LoadOptions{Env: []string{"ICEWRIGHT_VAR_retention=10d"}, VarFiles: []string{"prod.vars"}, Vars: []string{"retention=11d", "min=6", "secret=x"}}, 11 * 24 * time.Hour, 6, 0},
	}
	var digests []string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeDir(t, files)
			cfg, diags := Load(dir, tt.opts)
			if diags.HasErrors() {
				t.Fatal(diagLines(diags))
			}
			if n := len(diags); n != tt.warnings {
				t.Errorf("%d warnings, want %d: %v", n, tt.warnings, diagLines(diags))
			}
			e, ok := cfg.Resolve("lake.a.b")
			if !ok {
				t.Fatal("not managed")
			}
			if got := e.SnapshotRetention.MaxAge.Value; got != tt.maxAge {
				t.Errorf("max_age = %v, want %v", got, tt.maxAge)
			}
			if got := e.SnapshotRetention.MinSnapshots.Value; got != tt.min {
				t.Errorf("min_snapshots = %v, want %v", got, tt.min)
			}
			if v := cfg.Variables["min"].Value; v != int64(tt.min) {
				t.Errorf("variable min = %#v", v)
			}
			if s := cfg.Variables["secret"]; !s.Sensitive || s.Description != "a password" || s.Type != "any" {
				t.Errorf("variable secret = %+v", s)
			}
			digests = append(digests, cfg.Digest)
		})
	}
	// Different variable values are different configurations.
	seen := map[string]bool{}
	for _, d := range digests {
		if seen[d] {
			t.Errorf("two runs with different variables share digest %s", d)
		}
		seen[d] = true
	}
}

func TestVariableErrors(t *testing.T) {
	src := baseCatalog + `
variable "n" {
  type    = number
  default = 3
}
variable "l" {
  type    = list(string)
  default = []
}
`
	tests := []struct {
		name string
		opts LoadOptions
		want string
	}{
		{"undeclared -var", LoadOptions{Vars: []string{"m=1"}}, "Value for undeclared variable"},
		{"-var without =", LoadOptions{Vars: []string{"n"}}, "Invalid -var option"},
		{"wrong type from -var", LoadOptions{Vars: []string{"n=three"}}, "Invalid value for variable"},
		{"wrong type from env", LoadOptions{Env: []string{"ICEWRIGHT_VAR_n=three"}}, "Invalid value for variable"},
		{"bad list expression", LoadOptions{Vars: []string{"l=[a"}}, "Invalid value for variable"},
		{"missing var-file", LoadOptions{VarFiles: []string{"nope.vars"}}, "Cannot read variables file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Load(writeDir(t, map[string]string{"main.icewright.hcl": src}), tt.opts)
			if !diags.HasErrors() || diags[0].Summary != tt.want {
				t.Fatalf("diags = %v, want %q", diagLines(diags), tt.want)
			}
		})
	}
	// A list variable from -var is parsed as an expression.
	cfg := mustLoad(t, map[string]string{"main.icewright.hcl": src}, LoadOptions{Vars: []string{`l=["a", "b"]`}})
	if got := fmt.Sprint(cfg.Variables["l"].Value); got != "[a b]" {
		t.Errorf("l = %s", got)
	}
}

func TestFunctionsAndLocals(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"main.icewright.hcl": `
locals {
  codec  = lower(local.upper_codec)
  upper_codec = "ZSTD"
  size   = format("%dMiB", max(64, 128))
  target = join("", [local.size])
}
catalog "lake" {
  type      = "rest"
  uri       = env("CATALOG_URI", "http://default")
  warehouse = "s3://bucket/wh"
  properties = merge({ "token" = env("TOKEN") }, jsondecode(file("props.json")), {
    "root" = path.root
    "missing" = env("NOT_SET", "")
  })
}
policy "p" {
  target_file_size = local.target
  properties = {
    "write.parquet.compression-codec" = local.codec
    "n" = tostring(length(split(",", "a,b,c")))
  }
}
tables "lake.**" { policy = policy.p }
`,
		"props.json": `{"s3.region": "eu-west-1"}`,
	})
	cfg, diags := Load(dir, LoadOptions{Env: []string{"TOKEN=t0k", "HOME=/x"}})
	if diags.HasErrors() {
		t.Fatal(diagLines(diags))
	}
	c := cfg.CatalogByName("lake")
	abs, _ := filepath.Abs(dir)
	want := map[string]string{"token": "t0k", "s3.region": "eu-west-1", "root": abs, "missing": ""}
	if fmt.Sprint(c.Properties) != fmt.Sprint(want) {
		t.Errorf("properties = %v, want %v", c.Properties, want)
	}
	if c.URI != "http://default" || c.Warehouse != "s3://bucket/wh" || c.Type != "rest" {
		t.Errorf("catalog = %+v", c)
	}
	e, ok := cfg.Resolve("lake.x.y.z")
	if !ok {
		t.Fatal("lake.x.y.z not managed by lake.**")
	}
	if e.TargetFileSize.Value != 128<<20 || e.Properties["write.parquet.compression-codec"].Value != "zstd" || e.Properties["n"].Value != "3" {
		t.Errorf("effective = %+v", e.PolicyBody)
	}
}

func TestLocalsCycle(t *testing.T) {
	_, diags := Load(writeDir(t, map[string]string{"main.icewright.hcl": `
locals {
  a = local.b
  b = local.a
}`}), LoadOptions{})
	if !diags.HasErrors() || diags[0].Summary != "Cycle in local values" {
		t.Fatalf("diags = %v", diagLines(diags))
	}
}

func TestResolveURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"sqlite:lake/catalog.db", "sqlite:/cfg/lake/catalog.db"},
		{"sqlite:./catalog.db", "sqlite:/cfg/catalog.db"},
		{"sqlite:../x/catalog.db", "sqlite:/x/catalog.db"},
		{"sqlite:/abs/catalog.db", "sqlite:/abs/catalog.db"},
		{"sqlite:////abs/catalog.db", "sqlite:/abs/catalog.db"},
		{"sqlite:///rel/catalog.db", "sqlite:/cfg/rel/catalog.db"},
		{"sqlite:lake.db?_busy_timeout=5000", "sqlite:/cfg/lake.db?_busy_timeout=5000"},
		{"sqlite::memory:", "sqlite::memory:"},
		{"postgres://u:p@h:5432/db", "postgres://u:p@h:5432/db"},
		{"https://rest.example.com/api", "https://rest.example.com/api"},
	}
	for _, tt := range tests {
		got, err := resolveURI(tt.in, "/cfg")
		if err != nil || got != tt.want {
			t.Errorf("resolveURI(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"sqlite:", "sqlite://host/x.db", "sqlite:///"} {
		if got, err := resolveURI(bad, "/cfg"); err == nil {
			t.Errorf("resolveURI(%q) = %q, want an error", bad, got)
		}
	}
}

func TestResolveWarehouse(t *testing.T) {
	tests := []struct{ in, want string }{
		{"lake/warehouse", "file:///cfg/lake/warehouse"},
		{"/data/wh", "file:///data/wh"},
		{"s3://bucket/wh", "s3://bucket/wh"},
		{"gs://bucket/wh", "gs://bucket/wh"},
		{"abfs://c@acct.dfs.core.windows.net/wh", "abfs://c@acct.dfs.core.windows.net/wh"},
		{"file:///data/wh", "file:///data/wh"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ResolveWarehouse(tt.in, "/cfg"); got != tt.want {
			t.Errorf("ResolveWarehouse(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestVersionSatisfies(t *testing.T) {
	tests := []struct {
		version, constraint string
		want                bool
	}{
		{"0.1.0", ">= 0.1", true},
		{"0.1.0", "> 0.1", false},
		{"0.2.3", ">= 0.1, < 0.3", true},
		{"0.3.0", ">= 0.1, < 0.3", false},
		{"1.4.0", "~> 1.2", true},
		{"2.0.0", "~> 1.2", false},
		{"1.2.9", "~> 1.2.3", true},
		{"1.3.0", "~> 1.2.3", false},
		{"1.0.0", "= 1.0", true},
		{"1.0.0", "!= 1.0", false},
		{"dev", ">= 9", true},
		{"", ">= 9", true},
		{"v0.4.0-rc1", ">= 0.4", true},
	}
	for _, tt := range tests {
		got, err := versionSatisfies(tt.version, tt.constraint)
		if err != nil || got != tt.want {
			t.Errorf("versionSatisfies(%q, %q) = %v, %v; want %v", tt.version, tt.constraint, got, err, tt.want)
		}
	}
	if _, err := versionSatisfies("0.1.0", ">= banana"); err == nil {
		t.Error("a bad constraint was accepted")
	}
}

func TestDigestIgnoresOrderButNotContent(t *testing.T) {
	files := map[string]string{"a.icewright.hcl": baseCatalog, "b.icewright.hcl": "policy \"p\" {}\n"}
	d1 := mustLoad(t, files, LoadOptions{}).Digest
	d2 := mustLoad(t, files, LoadOptions{Env: []string{"TOKEN=other"}}).Digest
	if d1 != d2 {
		t.Error("digest depends on the directory or the environment")
	}
	files["b.icewright.hcl"] = "policy \"q\" {}\n"
	if d3 := mustLoad(t, files, LoadOptions{}).Digest; d3 == d1 {
		t.Error("digest did not change with the content")
	}
}

// TestDecodeAllAttributes sets every policy attribute once and checks the
// decoded value, so a field added to policyFields without decoding support
// (or with the wrong kind) fails here.
func TestDecodeAllAttributes(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.icewright.hcl": `
catalog "lake" {
  type      = "sql"
  uri       = "sqlite:////abs/catalog.db?mode=rwc"
  warehouse = "/abs/wh"
}
engine "spark" { remote = "sc://spark:15002" }
policy "p" {
  target_file_size  = 536870912
  sort_order        = ["truncate(4, name) desc nulls first", "hour(ts)"]
  remove_properties = ["old.key"]
  properties        = { "write.format.default" = "parquet" }
  compaction {
    strategy              = "zorder"
    zorder_columns        = ["a", "b"]
    min_input_files       = 2
    min_file_size         = "100MiB"
    max_file_size         = "1GiB"
    delete_file_threshold = 1
    partial_progress      = true
    max_concurrent_groups = 4
    memory                = "2GiB"
    max_bytes_per_run     = "1TB"
    max_cost              = 12.5
    max_cpu_hours         = 2
    where                 = "ts > 0"
    engine                = "spark"
    engine_above          = "64GiB"
  }
  snapshot_retention {
    max_age       = "2w"
    min_snapshots = 2
    max_ref_age   = "1w2d"
  }
  orphan_files {
    older_than                = "36h"
    max_orphan_ratio          = 1
    min_files_for_ratio       = 0
    exclude                   = ["**/_SUCCESS"]
    include_non_iceberg_files = true
    quarantine                = "7d"
    equal_schemes             = { "s3a,s3n" = "s3" }
    equal_authorities         = { "bucket.s3.amazonaws.com" = "bucket" }
    prefix_mismatch           = "ignore"
    allow_storage_roots       = ["s3://lake-data"]
    every                     = "12h"
  }
  manifests {
    max_count   = 10
    target_size = "16MiB"
  }
  pricing {
    storage          = "gcs"
    storage_gb_month = 0.02
    put_per_1000     = 0.005
    get_per_1000     = 0.0004
    cpu_hour         = 0.05
    scans_per_month  = 100
  }
}
table "lake.a.b" { policy = policy.p }
`}, LoadOptions{})
	if c := cfg.CatalogByName("lake"); c.URI != "sqlite:/abs/catalog.db?mode=rwc" || c.Warehouse != "file:///abs/wh" {
		t.Errorf("catalog = %+v", c)
	}
	e, ok := cfg.Resolve("lake.a.b")
	if !ok {
		t.Fatal("not managed")
	}
	got := map[string]string{}
	for _, l := range e.Explain() {
		if l.Default {
			t.Errorf("%s is a default, but the policy sets it", l.Name)
		}
		if l.Block != `policy "p"` || l.Origin.Start.Line == 0 {
			t.Errorf("%s comes from %q at %v", l.Name, l.Block, l.Origin)
		}
		got[l.Name] = l.Value
	}
	want := map[string]string{
		"target_file_size":                       `"512MiB"`,
		"sort_order":                             `["truncate(4, name) DESC NULLS FIRST", "hour(ts) ASC NULLS FIRST"]`,
		"remove_properties":                      `["old.key"]`,
		`properties["write.format.default"]`:     `"parquet"`,
		"compaction.strategy":                    `"zorder"`,
		"compaction.zorder_columns":              `["a", "b"]`,
		"compaction.min_input_files":             `2`,
		"compaction.min_file_size":               `"100MiB"`,
		"compaction.max_file_size":               `"1GiB"`,
		"compaction.delete_file_threshold":       `1`,
		"compaction.partial_progress":            `true`,
		"compaction.memory":                      `"2GiB"`,
		"compaction.max_concurrent_groups":       `4`,
		"compaction.max_bytes_per_run":           `"1TB"`,
		"compaction.max_cost":                    `12.5`,
		"compaction.max_cpu_hours":               `2`,
		"compaction.where":                       `"ts > 0"`,
		"compaction.engine":                      `"spark"`,
		"compaction.engine_above":                `"64GiB"`,
		"snapshot_retention.max_age":             `"14d"`,
		"snapshot_retention.min_snapshots":       `2`,
		"snapshot_retention.max_ref_age":         `"9d"`,
		"orphan_files.older_than":                `"36h"`,
		"orphan_files.max_orphan_ratio":          `1`,
		"orphan_files.min_files_for_ratio":       `0`,
		"orphan_files.exclude":                   `["**/_SUCCESS"]`,
		"orphan_files.include_non_iceberg_files": `true`,
		"orphan_files.quarantine":                `"7d"`,
		"orphan_files.equal_schemes":             `{ "s3a" = "s3", "s3n" = "s3" }`,
		"orphan_files.equal_authorities":         `{ "bucket.s3.amazonaws.com" = "bucket" }`,
		"orphan_files.prefix_mismatch":           `"ignore"`,
		"orphan_files.allow_storage_roots":       `["s3://lake-data"]`,
		"orphan_files.every":                     `"12h"`,
		"manifests.max_count":                    `10`,
		"manifests.target_size":                  `"16MiB"`,
		"pricing.storage":                        `"gcs"`,
		"pricing.storage_gb_month":               `0.02`,
		"pricing.put_per_1000":                   `0.005`,
		"pricing.get_per_1000":                   `0.0004`,
		"pricing.cpu_hour":                       `0.05`,
		"pricing.scans_per_month":                `100`,
	}
	if len(got) != len(want) {
		t.Errorf("explain has %d lines, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %s, want %s", k, got[k], v)
		}
	}
	if e.Compaction.MaxBytesPerRun.Value != 1_000_000_000_000 || e.OrphanFiles.Quarantine.Value != 7*24*time.Hour {
		t.Errorf("typed values: %+v", e.PolicyBody)
	}
}

// allow_storage_roots takes whole buckets, containers and file systems only.
func TestCheckStorageRoots(t *testing.T) {
	for r, ok := range map[string]bool{
		"s3://b": true, "s3://b/": true, "gs://b": true, "abfs://c@acct.dfs.core.windows.net": true,
		"file:///": true, "file://": true,
		"s3://b/t": false, "s3://": false, "file:///x": false, "b": false, "/": false,
	} {
		if got := checkStorageRoots([]string{r}) == nil; got != ok {
			t.Errorf("%q: valid = %v, want %v", r, got, ok)
		}
	}
}

// TestEnvUnset: env() of an unset variable is an error naming it, at load
// time; a default, even "", allows it unset, and a variable set to "" is
// set.
func TestEnvUnset(t *testing.T) {
	for _, tc := range []struct {
		expr, env, want, err string
	}{
		{expr: `env("PGPW")`, err: `the environment variable PGPW is not set (env("PGPW", "") allows it unset)`},
		{expr: `env("PGPW", "")`, want: ""},
		{expr: `env("PGPW", "d")`, want: "d"},
		{expr: `env("PGPW")`, env: "PGPW=", want: ""},
		{expr: `env("PGPW")`, env: "PGPW=s3cret", want: "s3cret"},
	} {
		dir := writeDir(t, map[string]string{"main.icewright.hcl": `
catalog "pg" {
  type = "sql"
  uri  = "postgres://u:${` + tc.expr + `}@h/db"
}
`})
		var env []string
		if tc.env != "" {
			env = []string{tc.env}
		}
		cfg, diags := Load(dir, LoadOptions{Env: env})
		if tc.err != "" {
			if len(diags) != 1 || !strings.Contains(diags[0].Detail, tc.err) || diags[0].Subject == nil || diags[0].Subject.Start.Line != 4 {
				t.Errorf("%s unset: %v, want one error at line 4 with %q", tc.expr, diags, tc.err)
			}
			continue
		}
		if diags.HasErrors() {
			t.Fatalf("%s with %q: %v", tc.expr, tc.env, diagLines(diags))
		}
		if got := cfg.CatalogByName("pg").URI; got != "postgres://u:"+tc.want+"@h/db" {
			t.Errorf("%s with %q: uri %q", tc.expr, tc.env, got)
		}
	}
}

// TestEnvUnsetUnknown: with UnsetEnvUnknown (validate), an unset env()
// without a default is an unknown value, not an error: the variables are
// named in UnsetEnv, and a mistake that does not depend on them is still
// reported (issue 43).
func TestEnvUnsetUnknown(t *testing.T) {
	dir := writeDir(t, map[string]string{"main.icewright.hcl": `
catalog "pg" {
  type = "sql"
  uri  = "postgres://u:${env("PGPW")}@h/db"
  properties = {
    "credential" = env("CRED")
    "region"     = env("REGION", "eu")
  }
}
`})
	cfg, diags := Load(dir, LoadOptions{UnsetEnvUnknown: true})
	if diags.HasErrors() {
		t.Fatalf("unset env() in validate: %v", diags)
	}
	if got := strings.Join(cfg.UnsetEnv, ","); got != "CRED,PGPW" {
		t.Errorf("UnsetEnv = %q, want CRED,PGPW", got)
	}
	dir = writeDir(t, map[string]string{"main.icewright.hcl": `
catalog "pg" {
  type = "sql"
  uri  = env("PGURI")
}
policy "p" {
  target_file_size = "12 parsecs"
}
`})
	_, diags = Load(dir, LoadOptions{UnsetEnvUnknown: true})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "parsecs") {
		t.Errorf("a bad size beside an unset env(): %v, want its error", diags)
	}
	if _, diags = Load(dir, LoadOptions{}); !strings.Contains(diags.Error(), "PGURI is not set") {
		t.Errorf("without UnsetEnvUnknown: %v, want the unset variable's error", diags)
	}
}
