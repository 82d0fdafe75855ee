package providers

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/testkit"
)

// The Spark-written fixtures, copied and registered, observed with the
// numbers of internal/testdata/tables/README.md.
func TestObserveSparkFixtures(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	cases := []struct {
		fixture    string
		name       string
		snapshots  int
		dataFiles  int64
		records    int64
		partitions int
	}{
		{"duckdb-spark-lineitem-mor", "spark.lineitem_mor", 2, 1, 51793, 1},
		{"glaredb-spark-lineitem-v1-partitioned", "spark.lineitem_v1", 1, 7, 1000, 7},
		{"glaredb-spark-lineitem-v2-versioned", "spark.lineitem_v2", 2, 2, 2000, 1},
	}
	for _, c := range cases {
		l.AddFixture(t, c.fixture, c.name)
	}
	sess := sessionFor(t, l)
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			tbl, err := sess.loadTable(ctx, "lake."+c.name)
			if err != nil {
				t.Fatal(err)
			}
			if got := testkit.ScanRows(t, tbl); got != c.records {
				t.Fatalf("scan rows = %d, want %d", got, c.records)
			}
			st, err := sess.Observe(ctx, testkit.Policy("lake."+c.name))
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Snapshots) != c.snapshots {
				t.Errorf("snapshots = %d, want %d", len(st.Snapshots), c.snapshots)
			}
			if st.Files.DataFiles != c.dataFiles || st.Files.Records != c.records {
				t.Errorf("data files %d records %d, want %d and %d", st.Files.DataFiles, st.Files.Records, c.dataFiles, c.records)
			}
			if len(st.Partitions) != c.partitions {
				t.Errorf("partitions = %d, want %d", len(st.Partitions), c.partitions)
			}
		})
	}
}

// The orphan scan on Spark-written tables: every file is referenced
// (version-hint.text included), the Hadoop .crc side files are non-Iceberg,
// nothing is a candidate and nothing is missing.
func TestOrphanScanSparkFixtures(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	for i, f := range testkit.Fixtures {
		l.AddFixture(t, f, "spark.t"+string(rune('a'+i)))
	}
	sess := sessionFor(t, l)
	for i, f := range testkit.Fixtures {
		t.Run(f, func(t *testing.T) {
			addr := "lake.spark.t" + string(rune('a'+i))
			st, err := sess.Observe(ctx, testkit.OrphanPolicy(addr))
			if err != nil {
				t.Fatal(err)
			}
			o := st.Orphans
			if len(o.Candidates) != 0 || o.MissingReferencedCount != 0 || o.Refusal != "" || len(o.NestedTables) != 0 {
				t.Fatalf("candidates %v missing %v refusal %q nested %v", testkit.CandidatePaths(o), o.MissingReferenced, o.Refusal, o.NestedTables)
			}
			if o.Categories[reach.CategoryVersionHint] != 1 || o.Categories[reach.CategoryData] == 0 || o.Categories[reach.CategoryManifestList] != int64(len(st.Snapshots)) {
				t.Errorf("categories = %v", o.Categories)
			}
			for _, n := range o.NonIceberg {
				if !strings.HasSuffix(n.Path, ".crc") && !strings.HasSuffix(n.Path, "README.md") {
					t.Errorf("non-iceberg %s", n.Path)
				}
			}
			if o.ListedFiles != o.Referenced+int64(len(o.NonIceberg)) {
				t.Errorf("listed %d = referenced %d + non-iceberg %d?", o.ListedFiles, o.Referenced, len(o.NonIceberg))
			}
		})
	}
}

// A hadoop catalog (iceberg-go's, through catalog.Load) over a warehouse
// directory holding a Spark-written table with version-hint.text.
func TestHadoopCatalogFixture(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	testkit.CopyFixture(t, "glaredb-spark-lineitem-v2-versioned", filepath.Join(wh, "spark", "lineitem"))
	cfg := &config.Config{Dir: t.TempDir(), Catalogs: []*config.Catalog{{Name: "hl", Type: "hadoop", Warehouse: "file://" + wh}}}
	sess := Open(cfg, Options{})
	defer sess.Close()
	addrs, err := sess.ListTables(ctx, "hl")
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 1 || addrs[0] != "hl.spark.lineitem" {
		t.Fatalf("tables = %v", addrs)
	}
	st, err := sess.Observe(ctx, testkit.OrphanPolicy("hl.spark.lineitem"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Files.Records != 2000 || len(st.Snapshots) != 2 || len(st.Orphans.Candidates) != 0 || st.Orphans.MissingReferencedCount != 0 {
		t.Fatalf("records %d snapshots %d orphans %+v", st.Files.Records, len(st.Snapshots), st.Orphans)
	}
}
