package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestUnwritableSpecsAgreeWithIcebergGo: UnwritableSpecs names exactly the
// specs whose manifests iceberg-go fails to write (an append to the table
// is the check), two decimal partition fields of any types among them, and
// says so in a sentence that names the fields; Run refuses a group of such a
// spec before writing anything.
func TestUnwritableSpecsAgreeWithIcebergGo(t *testing.T) {
	dec := func(p, s int) iceberg.Type { return iceberg.DecimalTypeOf(p, s) }
	cases := []struct {
		name       string
		a, b       iceberg.Type
		ta, tb     iceberg.Transform
		unwritable bool
	}{
		{name: "one decimal", a: dec(10, 2), b: iceberg.PrimitiveTypes.Int32, ta: iceberg.IdentityTransform{}, tb: iceberg.IdentityTransform{}},
		{name: "decimal and its bucket", a: dec(10, 2), b: dec(38, 4), ta: iceberg.IdentityTransform{}, tb: iceberg.BucketTransform{NumBuckets: 4}},
		{name: "decimal and fixed", a: dec(10, 2), b: iceberg.FixedTypeOf(5), ta: iceberg.IdentityTransform{}, tb: iceberg.IdentityTransform{}},
		{name: "two equal decimals", a: dec(10, 2), b: dec(10, 2), ta: iceberg.IdentityTransform{}, tb: iceberg.IdentityTransform{}, unwritable: true},
		{name: "two decimals", a: dec(10, 2), b: dec(38, 4), ta: iceberg.TruncateTransform{Width: 50}, tb: iceberg.IdentityTransform{}, unwritable: true},
		{name: "a void decimal", a: dec(10, 2), b: dec(9, 0), ta: iceberg.VoidTransform{}, tb: iceberg.TruncateTransform{Width: 10}, unwritable: true},
	}
	// One memo across every case, as a plan shares one across its tables:
	// its answer must be the unmemoized one, case after case.
	var memo SpecCheck
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t)
			sc := iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "a", Type: tc.a},
				iceberg.NestedField{ID: 2, Name: "b", Type: tc.b},
			)
			spec := iceberg.NewPartitionSpec(
				iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "pa", Transform: tc.ta},
				iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "pb", Transform: tc.tb},
			)
			tbl, err := e.cat.CreateTable(ctx, table.Identifier{"ns", "t"}, sc, catalog.WithPartitionSpec(&spec))
			if err != nil {
				t.Fatal(err)
			}
			why := UnwritableSpecs(tbl)[tbl.Metadata().DefaultPartitionSpec()]
			for range 2 {
				if got := memo.Unwritable(tbl)[tbl.Metadata().DefaultPartitionSpec()]; got != why {
					t.Fatalf("SpecCheck says %q, UnwritableSpecs %q", got, why)
				}
			}
			as, err := table.SchemaToArrowSchema(sc, nil, true, false)
			if err != nil {
				t.Fatal(err)
			}
			b := array.NewRecordBuilder(memory.DefaultAllocator, as)
			b.Field(0).AppendNull()
			b.Field(1).AppendNull()
			rec := b.NewRecordBatch()
			b.Release()
			rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
			if err != nil {
				t.Fatal(err)
			}
			_, appendErr := tbl.Append(ctx, rdr, nil)
			rdr.Release()
			rec.Release()
			if (appendErr != nil) != tc.unwritable || (why != "") != tc.unwritable {
				t.Fatalf("iceberg-go's append: %v; UnwritableSpecs: %q; want unwritable = %v", appendErr, why, tc.unwritable)
			}
			if !tc.unwritable {
				return
			}
			for _, want := range []string{"pa " + tc.a.String(), "pb " + tc.b.String(), "another engine"} {
				if !strings.Contains(why, want) {
					t.Errorf("reason %q does not say %q", why, want)
				}
			}
			g := Group{SpecID: tbl.Metadata().DefaultPartitionSpec(), Tasks: []table.FileScanTask{{}}}
			if _, err := Run(ctx, tbl, []Group{g}, Options{}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), fmt.Sprintf("partition spec %d", g.SpecID)) {
				t.Fatalf("Run: want the refusal, got %v", err)
			}
		})
	}
}
