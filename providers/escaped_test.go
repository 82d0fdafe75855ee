package providers

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	compactpkg "github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

// Plan and apply agree on a partition with files named by a file: URI
// whose path changes when decoded (docs/design.md §5.5 rule 8). iceberg-go
// writing at a file:// location records p=a%3Ab and creates p=a:b: the plan
// refuses that partition, naming a file, and compacts p=ab; the executor
// (Compact) rewrites p=ab only and leaves p=a:b's files as they are, even
// though iceberg-go could read them, since Java, Spark and DuckDB cannot.
func TestEscapedPartitionPlanAndExecutorAgree(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "p", Type: iceberg.PrimitiveTypes.String, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "p", Transform: iceberg.IdentityTransform{}})
	if err := l.Catalog.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := l.Catalog.CreateTable(ctx, table.Identifier{"ns", "t"}, sc,
		catalog.WithPartitionSpec(&spec), catalog.WithLocation("file://"+filepath.Join(l.Warehouse, "ns", "t")))
	if err != nil {
		t.Fatal(err)
	}
	for batch := range int64(2) {
		tbl = testkit.AppendRows(t, tbl, []int64{batch * 10, batch*10 + 1}, []string{"a:b", "ab"})
	}
	files := func(tbl *table.Table) (escaped, plain []string) {
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			p := task.File.FilePath()
			if _, esc := store.LiteralKey(p); esc {
				escaped = append(escaped, p)
			} else {
				plain = append(plain, p)
			}
		}
		slices.Sort(escaped)
		return escaped, plain
	}
	escaped, plain := files(tbl)
	if len(escaped) != 2 || len(plain) != 2 || !strings.Contains(escaped[0], "/p=a%3Ab/") {
		t.Fatalf("setup: escaped %v, plain %v", escaped, plain)
	}
	if _, err := os.Stat(strings.TrimPrefix(escaped[0], "file://")); !os.IsNotExist(err) {
		t.Fatalf("setup: iceberg-go wrote %s under its literal name (%v): it no longer decodes file:// URIs", escaped[0], err)
	}

	pol := testkit.Policy("lake.ns.t")
	pol.Compaction.MinInputFiles = config.Setting[int]{Value: 2, Set: true}
	st, err := sessionFor(t, l).Observe(ctx, pol)
	if err != nil {
		t.Fatal(err)
	}
	tp := diff.PlanTable(pol, st, fixedNow)
	var compact *diff.CompactAction
	for _, a := range tp.Actions {
		if a.Type == diff.Compact {
			compact = a.Compact
		}
	}
	if compact == nil || len(compact.Groups) != 1 || compact.Groups[0].Partition != "p=ab" {
		t.Fatalf("want p=ab compacted alone: %+v", compact)
	}
	if !slices.ContainsFunc(tp.Refusals, func(r diff.Refusal) bool {
		return r.Action == string(diff.Compact) && strings.Contains(r.Reason, "2 data files in 1 partition ") && strings.Contains(r.Reason, "/p=a%3Ab/")
	}) {
		t.Fatalf("no refusal of p=a:b naming a file: %+v", tp.Refusals)
	}

	next, res, err := compactpkg.Compact(ctx, tbl, compactpkg.CompactSpec{Action: compact})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.FilesBefore != 4 || res.FilesAfter != 3 {
		t.Fatalf("result %+v", res)
	}
	afterEscaped, afterPlain := files(next)
	if !slices.Equal(afterEscaped, escaped) || len(afterPlain) != 1 {
		t.Fatalf("after apply: escaped %v (before %v), plain %v", afterEscaped, escaped, afterPlain)
	}
}
