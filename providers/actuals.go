package providers

import (
	"context"
	"strings"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/meter"
	"github.com/icewright/icewright/providers/internal/store"
)

// Meter counts one action's storage work: what apply reports as the
// action's actual beside the plan's estimate (docs/cost.md, Actuals).
type Meter = meter.Meter

// WithMeter returns ctx carrying a new Meter: every storage request sent
// with ctx (or a context made from it) on a metered store is counted in it.
func WithMeter(ctx context.Context) (context.Context, *Meter) {
	m := meter.New()
	return meter.With(ctx, m), m
}

// WithRunMeter returns ctx carrying a Meter for the run's own storage
// work: the other tables' references that the run's first deletion reads
// (orphans.Tables.ReadReferences) are counted in it, not in the meter of
// the action that asked (docs/cost.md, Actuals).
func WithRunMeter(ctx context.Context) (context.Context, *Meter) {
	m := meter.New()
	return meter.WithApart(ctx, m), m
}

// Metered reports whether the table's storage is counted: S3 (through the
// session's HTTP client) and local disks are; GCS and Azure, whose HTTP
// clients iceberg-go builds with no hook, are not.
func (h *Table) Metered() bool {
	s := store.Storage(h.t.Location())
	return s == "file" || strings.HasPrefix(s, "s3://")
}

// MeterUsage is what m counted, as a diff.Usage (without CPU, which apply
// measures).
func MeterUsage(m *Meter) diff.Usage {
	c := m.Counts()
	return diff.Usage{
		Requests: diff.Requests{
			List: c.Requests[meter.List], Get: c.Requests[meter.Get], Head: c.Requests[meter.Head],
			Put: c.Requests[meter.Put], Delete: c.Requests[meter.Delete], BatchDelete: c.Requests[meter.BatchDelete],
		},
		BytesRead: c.BytesRead, BytesWritten: c.BytesWritten,
		FilesRead: c.FilesRead, FilesWritten: c.FilesWritten, FilesDeleted: c.FilesDeleted,
	}
}
