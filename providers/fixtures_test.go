package providers

import (
	"context"
	"testing"

	"github.com/iceops/iceops/providers/testkit"
)

// The Spark-written fixtures, copied and registered, observed with the
// numbers of ../shared/fixtures/README.md.
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
			tbl, err := sess.LoadTable(ctx, "lake."+c.name)
			if err != nil {
				t.Fatal(err)
			}
			if got := testkit.ScanRows(t, tbl); got != c.records {
				t.Fatalf("scan rows = %d, want %d", got, c.records)
			}
			st, err := sess.Observe(ctx, effective("lake."+c.name))
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
