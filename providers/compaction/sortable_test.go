package compaction

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// SortTransforms is what the plan knows of the engine (providers copy it
// into diff.Column.SortTransforms): for each type, the transforms a sort
// key can be built with. Nested and non-orderable types have none.
func TestSortTransforms(t *testing.T) {
	timeLike := []string{"identity", "bucket", "year", "month", "day", "hour", "void"}
	truncatable := []string{"identity", "bucket", "truncate", "void"}
	hashable := []string{"identity", "bucket", "void"}
	plain := []string{"identity", "void"}
	tests := []struct {
		typ  iceberg.Type
		want []string
	}{
		{iceberg.PrimitiveTypes.Bool, plain},
		{iceberg.PrimitiveTypes.Int32, truncatable},
		{iceberg.PrimitiveTypes.Int64, truncatable},
		{iceberg.PrimitiveTypes.Float32, plain},
		{iceberg.PrimitiveTypes.Float64, plain},
		{iceberg.DecimalTypeOf(9, 2), truncatable},
		{iceberg.PrimitiveTypes.Date, []string{"identity", "bucket", "year", "month", "day", "void"}},
		{iceberg.PrimitiveTypes.Time, hashable},
		{iceberg.PrimitiveTypes.Timestamp, timeLike},
		{iceberg.PrimitiveTypes.TimestampTz, timeLike},
		{iceberg.PrimitiveTypes.TimestampNs, timeLike},
		{iceberg.PrimitiveTypes.TimestampTzNs, timeLike},
		{iceberg.PrimitiveTypes.String, truncatable},
		{iceberg.PrimitiveTypes.UUID, hashable},
		{iceberg.FixedTypeOf(16), hashable},
		{iceberg.PrimitiveTypes.Binary, truncatable},
		{iceberg.UnknownType{}, nil},
		{iceberg.VariantType{}, nil},
		{iceberg.GeometryType{}, nil},
		{iceberg.GeographyType{}, nil},
		{&iceberg.StructType{FieldList: []iceberg.NestedField{{ID: 2, Name: "a", Type: iceberg.PrimitiveTypes.Int32}}}, nil},
		{&iceberg.ListType{ElementID: 2, Element: iceberg.PrimitiveTypes.Int32}, nil},
		{&iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String, ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int32}, nil},
	}
	for _, tt := range tests {
		if got := SortTransforms(tt.typ); !slices.Equal(got, tt.want) {
			t.Errorf("SortTransforms(%s) = %v, want %v", tt.typ, got, tt.want)
		}
	}
}

// A sort order or zorder columns the engine cannot sort by are refused
// before a file is read or written, as the plan refuses them. A bucket of
// a double used to be accepted and hashed every value to null (no order).
func TestRunRefusesWhatItCannotSortBy(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "unsortable"})
	tbl = appendMany(t, tbl, 3, 50, regions)
	order := func(tr iceberg.Transform, id int) *table.SortOrder {
		so, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{id}, Transform: tr, Direction: table.SortASC, NullOrder: table.NullsFirst}})
		if err != nil {
			t.Fatal(err)
		}
		return &so
	}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"bucket of a double", Options{Strategy: Sort, SortOrder: order(iceberg.BucketTransform{NumBuckets: 4}, 7)}, "transform bucket[4] does not apply to type double"},
		{"day of a string", Options{Strategy: Sort, SortOrder: order(iceberg.DayTransform{}, 2)}, "transform day does not apply to type string"},
		{"zorder column in another case", Options{Strategy: ZOrder, ZOrderColumns: []string{"x", "Region"}}, `zorder column "Region" is not a top-level column`},
		{"zorder column missing", Options{Strategy: ZOrder, ZOrderColumns: []string{"x", "nope"}}, `zorder column "nope" is not a top-level column`},
	}
	data := filepath.Join(env.warehouse, "ns.db", "unsortable", "data")
	before := countFiles(t, data)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), tbl, groupsAll(t, tbl), tt.opts)
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrRefused with %q", err, tt.want)
			}
			if got := countFiles(t, data); got != before {
				t.Fatalf("%d files in %s after the refusal, %d before", got, data, before)
			}
		})
	}
}

func TestCheckSortOrderNestedField(t *testing.T) {
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "payload", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz}}}},
	)
	nested, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{3}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSortOrder(nested, sc); err == nil || !strings.Contains(err.Error(), `sort column "payload.ts" is a nested field`) {
		t.Fatalf("nested: err = %v", err)
	}
	top, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{1}, Transform: iceberg.BucketTransform{NumBuckets: 8}, Direction: table.SortDESC, NullOrder: table.NullsLast}})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSortOrder(top, sc); err != nil {
		t.Fatalf("bucket(8, id): %v", err)
	}
	if err := CheckZOrderColumns([]string{"id", "payload"}, sc); err == nil || !strings.Contains(err.Error(), `zorder column "payload": type struct`) {
		t.Fatalf("zorder on a struct: err = %v", err)
	}
}

func countFiles(t testing.TB, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
