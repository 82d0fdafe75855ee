package providers

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/testkit"
)

// The corpus table duckdb-generated-bounds is a local table whose data
// files are s3:// paths. Once a later snapshot drops them, expiring the
// first releases 5,000 files the table's IO cannot delete: the plan refuses
// the expiry, naming a file, instead of committing it and failing the
// deletions. (Its compaction refusal: TestForeignStoragePartitionsRefused.)
func TestForeignStorageExpiryRefusedInPlan(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := l.AddCorpusTable(t, "duckdb-generated-bounds", "metadata/v1.metadata.json", "ns.gb", nil)
	txn := tbl.NewTransaction()
	if err := txn.Delete(ctx, iceberg.AlwaysTrue{}, nil); err != nil {
		t.Fatalf("setup: delete every file: %v", err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatalf("setup: %v", err)
	}
	pol := testkit.Policy("lake.ns.gb")
	pol.Compaction = config.CompactionPolicy{}
	pol.SnapshotRetention = config.RetentionPolicy{
		Declared:     true,
		MaxAge:       config.Setting[time.Duration]{Value: 24 * time.Hour, Set: true},
		MinSnapshots: config.Setting[int]{Value: 1, Set: true},
	}
	o, err := sessionFor(t, l).ObservePlan(ctx, pol)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	tp, err := o.Plan(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(tp.Actions, func(a diff.Action) bool { return a.Type == diff.ExpireSnapshots }) {
		t.Fatalf("the plan expires a snapshot whose files the table's IO cannot delete: %+v", tp.Actions)
	}
	i := slices.IndexFunc(tp.Refusals, func(r diff.Refusal) bool { return r.Action == string(diff.ExpireSnapshots) })
	if i < 0 {
		t.Fatalf("no expiry refusal: %+v", tp.Refusals)
	}
	for _, want := range []string{"5000 files on another storage", "s3://fake-bucket/"} {
		if !strings.Contains(tp.Refusals[i].Reason, want) {
			t.Errorf("refusal %q lacks %q", tp.Refusals[i].Reason, want)
		}
	}
}
