package compaction

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
)

// TypesProblem finds the v3 types the rewrite must not touch at any depth
// (in a struct, a list's element, a map's value) and names each column by
// its full name; a schema without them has no problem.
func TestTypesProblem(t *testing.T) {
	geo, err := iceberg.GeographyTypeOf("srid:4326", "spherical")
	if err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "doc", Type: iceberg.VariantType{}},
		}}},
		iceberg.NestedField{ID: 4, Name: "shapes", Type: &iceberg.ListType{ElementID: 5, Element: geo}},
		iceberg.NestedField{ID: 6, Name: "m", Type: &iceberg.MapType{KeyID: 7, KeyType: iceberg.PrimitiveTypes.String, ValueID: 8, ValueType: iceberg.UnknownType{}}},
		iceberg.NestedField{ID: 9, Name: "g", Type: iceberg.GeometryType{}},
		iceberg.NestedField{ID: 10, Name: "u", Type: iceberg.UnknownType{}},
	)
	why := TypesProblem(sc)
	for _, want := range []string{
		`column "s.doc" (variant)`, `"shapes.element" (geography`, `columns "m.value" (unknown), "u" (unknown)`,
		`column "g" (geometry)`, "cannot be read back", "bounding-box",
	} {
		if !strings.Contains(why, want) {
			t.Errorf("missing %q in %q", want, why)
		}
	}
	plain := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "f", Type: iceberg.FixedTypeOf(16)},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTzNs},
	)
	if why := TypesProblem(plain); why != "" {
		t.Errorf("plain schema: %q", why)
	}
}
