package examples

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
)

// env is what the examples read through env(); CI has no real credentials,
// so stand-ins are passed the way the CLI passes os.Environ().
var env = []string{
	"ICEBERG_REST_CREDENTIAL=client:secret",
	"ICEBERG_REST_URI=https://catalog.example.com/api/catalog",
	"ICEBERG_WAREHOUSE=s3://lakehouse",
	"AWS_ACCESS_KEY_ID=AKIAEXAMPLE",
	"AWS_SECRET_ACCESS_KEY=example-secret",
	"AWS_SESSION_TOKEN=example-token",
	"ANALYTICS_PG_PASSWORD=pg-password",
	"MARKETING_REST_CREDENTIAL=client:secret",
}

func load(t *testing.T, dir string) *config.Config {
	t.Helper()
	cfg, diags := config.Load(dir, config.LoadOptions{Env: env, Version: "0.1.0"})
	for _, d := range diags {
		// Examples are what users copy: they must be free of warnings too.
		t.Errorf("%s: %s: %s", d.Subject, d.Summary, d.Detail)
	}
	if diags.HasErrors() {
		t.FailNow()
	}
	return cfg
}

// TestEveryExampleLoads guards against an example directory being added
// without a test of its own below.
func TestEveryExampleLoads(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		// ci holds pipelines, not a configuration; TestCIScript runs them.
		if !e.IsDir() || e.Name() == "ci" {
			continue
		}
		// kubernetes keeps its configuration in policies/ (the ConfigMap's
		// files), beside the manifests.
		cfgDir := e.Name()
		if e.Name() == "kubernetes" {
			cfgDir = filepath.Join(e.Name(), "policies")
		}
		matches, _ := filepath.Glob(filepath.Join(cfgDir, "*.icewright.hcl"))
		if len(matches) == 0 {
			t.Errorf("%s has no *.icewright.hcl file", e.Name())
			continue
		}
		if _, err := os.Stat(filepath.Join(e.Name(), "README.md")); err != nil {
			t.Errorf("%s has no README.md", e.Name())
		}
		t.Run(e.Name(), func(t *testing.T) {
			load(t, cfgDir)
			// `icewright fmt -check` must pass on what users copy.
			for _, m := range matches {
				src, err := os.ReadFile(m)
				if err != nil {
					t.Fatal(err)
				}
				out, diags := config.Format(src, m)
				if diags.HasErrors() {
					t.Fatalf("%s: %v", m, diags)
				}
				if string(out) != string(src) {
					t.Errorf("%s is not canonically formatted", m)
				}
			}
		})
		n++
	}
	if n < 3 {
		t.Fatalf("found %d examples, want at least quickstart, production and multi-team", n)
	}
}

func TestQuickstart(t *testing.T) {
	cfg := load(t, "quickstart")
	abs, err := filepath.Abs("quickstart")
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.CatalogByName("demo")
	if c == nil || c.URI != "sqlite:"+filepath.Join(abs, "demo", "lakehouse", "catalog.db") || c.Warehouse != "file://"+filepath.Join(abs, "demo", "lakehouse", "warehouse") {
		t.Fatalf("catalog = %+v", c)
	}
	e, ok := cfg.Resolve("demo.analytics.events")
	if !ok || e.TargetFileSize.Value != 128<<20 || e.SnapshotRetention.MinSnapshots.Value != 3 {
		t.Fatalf("demo.analytics.events = %v %+v", ok, e)
	}
	if _, ok := cfg.Resolve("other.analytics.events"); ok {
		t.Error("a table of an undeclared catalog is managed")
	}
}

func TestProduction(t *testing.T) {
	cfg := load(t, "production")
	c := cfg.CatalogByName("prod")
	if c == nil || c.Type != "rest" || c.Warehouse != "s3://acme-lakehouse/warehouse" || c.Properties["credential"] != "client:secret" || c.Properties["s3.region"] != "eu-west-1" {
		t.Fatalf("catalog = %+v", c)
	}
	e, ok := cfg.Resolve("prod.events.clickstream")
	if !ok {
		t.Fatal("clickstream not managed")
	}
	if e.TargetFileSize.Value != 1<<30 || e.Compaction.Strategy.Value != "sort" || e.Compaction.MinInputFiles.Value != 20 ||
		e.SnapshotRetention.MinSnapshots.Value != 5 || e.Manifests.MaxCount.Value != 100 || e.OrphanFiles.MaxOrphanRatio.Value != 0.1 {
		t.Errorf("clickstream = %+v", e.PolicyBody)
	}
	if e.Properties["write.distribution-mode"].Value != "hash" || e.Properties["write.parquet.compression-codec"].Value != "zstd" {
		t.Errorf("clickstream properties = %v", e.Properties)
	}
	e, ok = cfg.Resolve("prod.finance.gl.entries")
	if !ok || e.SnapshotRetention.MaxAge.Value != 90*24*time.Hour || e.OrphanFiles.Quarantine.Value != 14*24*time.Hour {
		t.Errorf("finance = %v %+v", ok, e)
	}
	if _, ok := cfg.Resolve("prod.events.staging_clicks"); ok {
		t.Error("an excluded staging table is managed")
	}
	// A variable changes the effective policy (and the digest).
	cfg2, diags := config.Load("production", config.LoadOptions{Env: append(env, "ICEWRIGHT_VAR_snapshot_retention=14d")})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, _ = cfg2.Resolve("prod.events.sessions")
	if e.SnapshotRetention.MaxAge.Value != 14*24*time.Hour || cfg2.Digest == cfg.Digest {
		t.Errorf("ICEWRIGHT_VAR_snapshot_retention: max_age %v, digest changed %v", e.SnapshotRetention.MaxAge.Value, cfg2.Digest != cfg.Digest)
	}
}

func TestMultiTeam(t *testing.T) {
	cfg := load(t, "multi-team")
	if len(cfg.Catalogs) != 3 {
		t.Fatalf("catalogs = %d", len(cfg.Catalogs))
	}
	if u := cfg.CatalogByName("analytics").URI; u != "postgres://iceberg:pg-password@pg.internal:5432/iceberg_catalog" {
		t.Errorf("analytics uri = %q", u)
	}
	tests := []struct {
		addr, matchedBy, policy string
	}{
		{"analytics.web.sessions", `tables "analytics.**"`, "standard"},
		{"analytics.scratch.tmp1", `tables "analytics.scratch.*"`, "scratch"},
		{"analytics.web.events_clicks", `tables "analytics.*.events_*"`, "events"},
		{"analytics.scratch.events_tmp", `tables "analytics.scratch.*"`, "scratch"},
		{"analytics.web.events_pageviews", `table "analytics.web.events_pageviews"`, "events"},
		{"marketing.campaigns.spring", `tables "marketing.campaigns.*"`, "events"},
		{"finance.ledger.entries", `table "finance.ledger.entries"`, "regulated"},
		{"finance.ap.invoices", `tables "finance.**"`, "regulated"},
	}
	for _, tt := range tests {
		e, ok := cfg.Resolve(tt.addr)
		if !ok || e.MatchedBy != tt.matchedBy || e.PolicyName != tt.policy {
			t.Errorf("%s: %v %v %v, want %s with %s", tt.addr, ok, e != nil && ok, e, tt.matchedBy, tt.policy)
		}
	}
	if _, ok := cfg.Resolve("marketing.raw.imports"); ok {
		t.Error("marketing.raw.imports is managed")
	}
	e, _ := cfg.Resolve("finance.ledger.entries")
	if e.SnapshotRetention.MaxAge.Value != 2555*24*time.Hour || e.SnapshotRetention.MinSnapshots.Value != 10 || e.OrphanFiles.Quarantine.Value != 30*24*time.Hour {
		t.Errorf("ledger = %+v", e.PolicyBody)
	}
	e, _ = cfg.Resolve("analytics.web.events_pageviews")
	if e.TargetFileSize.Value != 1<<30 || e.Compaction.MinInputFiles.Value != 20 || e.Compaction.Strategy.Value != "sort" || len(e.SortOrder.Value) != 2 {
		t.Errorf("pageviews = %+v", e.PolicyBody)
	}
}
