package tablemeta

import (
	"context"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// Kind is update_properties and replace_sort_order: one executor, which
// commits both in one metadata commit. Their observation is the table's
// metadata, which every plan reads.
type Kind struct{}

var _ kind.Kind = Kind{}

// Types are the two kinds it runs.
func (Kind) Types() []diff.ActionType {
	return []diff.ActionType{diff.UpdateProperties, diff.ReplaceSortOrder}
}

// Observe adds nothing: the properties and the sort order are in the
// metadata every observation reads.
func (Kind) Observe(context.Context, *kind.Env, *table.Table, *diff.TableState) error { return nil }

// Execute commits the approved properties and sort order together.
func (Kind) Execute(ctx context.Context, _ *kind.Env, req kind.Request) (*table.Table, store.Result, error) {
	var ch Change
	for _, a := range req.Actions {
		if p := a.Properties; p != nil {
			ch.Set, ch.Remove = p.Set, p.Remove
		}
		if so := a.SortOrder; so != nil {
			f := slices.Clone(so.Fields)
			if f == nil {
				f = []diff.SortField{}
			}
			ch.SortOrder = &f
		}
	}
	return Apply(ctx, req.Table, ch)
}
