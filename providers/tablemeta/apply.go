package tablemeta

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/internal/bound"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// Change is what update_properties and replace_sort_order ask for.
// Both go into ONE metadata commit.
type Change struct {
	Set    map[string]string
	Remove []string
	// SortOrder is the order to install; nil leaves the order alone. An empty
	// non-nil slice installs the unsorted order.
	SortOrder *[]diff.SortField
}

// Apply commits properties and the sort order in one metadata commit
// asserting that main has not moved. Keys already at their value, keys to
// remove that are absent, and an identical sort order are filtered out first:
// iceberg-go writes a new metadata version even for an unchanged
// SetProperties, and a re-apply of a satisfied policy must write nothing.
func Apply(ctx context.Context, tbl *table.Table, ch Change) (*table.Table, store.Result, error) {
	res := store.Result{MetadataLocation: tbl.MetadataLocation()}
	cur := tbl.Properties()
	set := iceberg.Properties{}
	for k, v := range ch.Set {
		if old, ok := cur[k]; ok && old == v {
			continue
		}
		set[k] = v
	}
	var remove []string
	for _, k := range ch.Remove {
		if _, ok := cur[k]; ok {
			if _, alsoSet := set[k]; !alsoSet {
				remove = append(remove, k)
			}
		}
	}
	slices.Sort(remove)

	var order *table.SortOrder
	if ch.SortOrder != nil {
		o, err := BuildSortOrder(tbl.Schema(), *ch.SortOrder)
		if err != nil {
			return tbl, res, fmt.Errorf("%w: sort order: %w", store.ErrRefused, err)
		}
		if !sameOrder(tbl.SortOrder(), o) {
			order = &o
		}
	}
	if len(set) == 0 && len(remove) == 0 && order == nil {
		res.NoOp = true
		res.Note = "already in policy"
		return tbl, res, nil
	}

	txn := tbl.NewTransaction()
	if err := kind.PinRefs(txn); err != nil {
		return tbl, res, err
	}
	if len(set) > 0 {
		if err := txn.SetProperties(set); err != nil {
			return tbl, res, fmt.Errorf("stage properties: %w", err)
		}
	}
	if len(remove) > 0 {
		if err := txn.RemoveProperties(remove); err != nil {
			return tbl, res, fmt.Errorf("stage property removal: %w", err)
		}
	}
	if order != nil {
		if err := txn.ReplaceSortOrder(*order); err != nil {
			return tbl, res, fmt.Errorf("stage sort order: %w", err)
		}
	}
	commitCtx, cancel := bound.Commit(ctx)
	next, err := txn.Commit(commitCtx)
	cancel()
	if err != nil {
		// A metadata-only commit stages no snapshot files; the SQL catalog
		// may leave an unreferenced metadata.json behind on a lost race,
		// which an orphan sweep collects.
		return tbl, res, fmt.Errorf("commit metadata: %w", store.ClassifyCommit(err))
	}
	res.Committed = true
	res.MetadataLocation = next.MetadataLocation()
	return next, res, nil
}

func sameOrder(a, b table.SortOrder) bool {
	if a.Len() != b.Len() {
		return false
	}
	for i := range a.Len() {
		if !a.Field(i).Equals(b.Field(i)) {
			return false
		}
	}
	return true
}

// BuildSortOrder turns the configuration's sort fields into an iceberg-go
// sort order against schema (columns by name, transforms in Iceberg's
// spelling "bucket[16]").
func BuildSortOrder(schema *iceberg.Schema, fields []diff.SortField) (table.SortOrder, error) {
	if len(fields) == 0 {
		return table.UnsortedSortOrder, nil
	}
	out := make([]table.SortField, 0, len(fields))
	for _, f := range fields {
		col, ok := schema.FindFieldByName(f.Column)
		if !ok {
			return table.SortOrder{}, fmt.Errorf("column %q is not in the table's schema", f.Column)
		}
		tname := f.Transform
		if tname == "" {
			tname = "identity"
		}
		tr, err := iceberg.ParseTransform(strings.ToLower(tname))
		if err != nil {
			return table.SortOrder{}, fmt.Errorf("transform %q: %w", f.Transform, err)
		}
		dir, nulls := table.SortASC, table.NullsLast
		if f.Descending {
			dir = table.SortDESC
		}
		if f.NullsFirst {
			nulls = table.NullsFirst
		}
		out = append(out, table.SortField{SourceIDs: []int{col.ID}, Transform: tr, Direction: dir, NullOrder: nulls})
	}
	o, err := table.NewSortOrder(1, out)
	if err != nil {
		return table.SortOrder{}, err
	}
	// An order icewright's own sort compaction could not honour is refused,
	// as the plan refuses it (diff's check of the columns' SortTransforms,
	// which the same engine rule fills).
	if err := compaction.CheckSortOrder(o, schema); err != nil {
		return table.SortOrder{}, err
	}
	return o, nil
}
