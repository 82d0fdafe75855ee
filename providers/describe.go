package providers

import (
	"context"
	"fmt"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/tablestate"
)

// Describe reads what one table's metadata says (properties, schema, specs,
// sort order, snapshots), without reading a manifest: what `icewright import`
// needs to write a policy that keeps the table as it is.
func (s *Session) Describe(ctx context.Context, address string) (*diff.TableState, error) {
	tbl, err := s.loadTable(ctx, address)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", address, err)
	}
	return tablestate.Metadata(tbl, address, new(compaction.SpecCheck)), nil
}
