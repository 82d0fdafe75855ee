package inspect

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
)

// Nested fields follow their parent one level deeper, with the ids the
// schema gives a list's element and a map's key and value.
func TestInspectSchemaNested(t *testing.T) {
	sc := iceberg.NewSchema(3,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "payload", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "tags", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.String, ElementRequired: true}},
			{ID: 6, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2), Required: true},
		}}},
		iceberg.NestedField{ID: 3, Name: "attrs", Type: &iceberg.MapType{KeyID: 8, KeyType: iceberg.PrimitiveTypes.String, ValueID: 9, ValueType: iceberg.PrimitiveTypes.Int32}},
	)
	got := inspectSchema(sc)
	var lines []string
	for _, f := range got.Fields {
		lines = append(lines, fmt.Sprintf("%d %s %s %s %v", f.Depth, f.Path, f.Name, f.Type, f.Required))
	}
	want := []string{
		"0 id id long true",
		"0 payload payload struct false",
		"1 payload.tags tags list false",
		"2 payload.tags.element element string true",
		"1 payload.amount amount decimal(9, 2) true",
		"0 attrs attrs map false",
		"1 attrs.key key string true",
		"1 attrs.value value int false",
	}
	ids := []int{1, 2, 5, 7, 6, 3, 8, 9}
	var gotIDs []int
	for _, f := range got.Fields {
		gotIDs = append(gotIDs, f.ID)
	}
	if got.ID != 3 || !slices.Equal(lines, want) || !slices.Equal(gotIDs, ids) {
		t.Errorf("schema %d:\n%q\nwant\n%q\nids %v want %v", got.ID, lines, want, gotIDs, ids)
	}
}
