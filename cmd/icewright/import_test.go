package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/testkit"
)

// Sort orders of every transform the language has, descending and nulls
// first, on a nested column, survive import: the next plan is empty. A
// column sort_order cannot name leaves the order out (the table keeps it),
// and the plan is still empty.
func TestImportSortOrdersPlanEmpty(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "lake")
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "payload", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 6, Name: "kind", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 5, Name: "odd-name", Type: iceberg.PrimitiveTypes.String},
	)
	if err := l.Catalog.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	create := func(name string, props iceberg.Properties, fields ...table.SortField) {
		t.Helper()
		order, err := table.NewSortOrder(1, fields)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Catalog.CreateTable(ctx, table.Identifier{"ns", name}, sc, catalog.WithSortOrder(order), catalog.WithProperties(props)); err != nil {
			t.Fatal(err)
		}
	}
	create("sorted", iceberg.Properties{"write.target-file-size-bytes": "268435456", "history.expire.max-snapshot-age-ms": "86400000"},
		table.SortField{SourceIDs: []int{2}, Transform: iceberg.DayTransform{}, Direction: table.SortDESC, NullOrder: table.NullsFirst},
		table.SortField{SourceIDs: []int{1}, Transform: iceberg.BucketTransform{NumBuckets: 16}, Direction: table.SortASC, NullOrder: table.NullsLast},
		table.SortField{SourceIDs: []int{3}, Transform: iceberg.TruncateTransform{Width: 4}, Direction: table.SortASC, NullOrder: table.NullsFirst},
		table.SortField{SourceIDs: []int{6}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast},
		table.SortField{SourceIDs: []int{2}, Transform: iceberg.HourTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst},
	)
	create("odd", iceberg.Properties{},
		table.SortField{SourceIDs: []int{5}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst},
	)
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(l.HCL()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runIn(t, &cli{}, "-chdir="+dir, "import", "-out=imported.icewright.hcl")
	if code != 0 {
		t.Fatalf("import: %d\n%s%s", code, out, errOut)
	}
	src, err := os.ReadFile(filepath.Join(dir, "imported.icewright.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`sort_order       = ["day(ts) DESC NULLS FIRST", "bucket(16, id) ASC NULLS LAST", "truncate(4, name) ASC NULLS FIRST", "payload.kind DESC NULLS LAST", "hour(ts) ASC NULLS FIRST"]`,
		`target_file_size = "256MiB"`,
		`#   max_age = "1d"`,
		`# The table's sort order is not written: sort_order cannot express "odd-name ASC NULLS FIRST"; the table keeps it.`,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("missing %s in:\n%s", want, src)
		}
	}
	out, errOut, code = runIn(t, &cli{}, "-chdir="+dir, "plan", "-detailed-exitcode")
	if code != 0 || !strings.Contains(out, "No changes. All 2 tables are in policy.") {
		t.Fatalf("plan after import: exit %d\n%s%s\nconfiguration:\n%s", code, out, errOut, src)
	}
}
