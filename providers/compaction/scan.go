package compaction

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
)

// ScanTable streams every live row of tbl's current snapshot as a rewrite
// reads them: iceberg-go's scanner (deletes applied) with the parts of the
// spec's column projection it lacks (an identity-partition column absent
// from a file read from the file's partition tuple, defaults in the spec's
// JSON forms), each batch in the table schema's Arrow types (no row-lineage
// columns). It is what a table holds as icewright reads it; tests compare it
// before and after a rewrite.
func ScanTable(ctx context.Context, tbl *table.Table, fn func(arrow.RecordBatch) error) error {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan files: %w", err)
	}
	as, err := table.SchemaToArrowSchemaWithOptions(tbl.Schema(), table.ArrowSchemaOptions{
		IncludeFieldIDs: true,
		TableProperties: tbl.Properties(),
	})
	if err != nil {
		return fmt.Errorf("arrow schema: %w", err)
	}
	exact, _, err := exactDefaults(ctx, tbl)
	if err != nil {
		return fmt.Errorf("column defaults: %w", err)
	}
	// readGroup reads one partition of one spec at a time.
	type key struct {
		spec int
		part string
	}
	var order []key
	groups := map[key]*Group{}
	for _, t := range tasks {
		p := t.File.Partition()
		ids := slices.Sorted(maps.Keys(p))
		k := key{spec: int(t.File.SpecID())}
		for _, id := range ids {
			k.part += fmt.Sprintf("%d=%#v;", id, p[id])
		}
		g, ok := groups[k]
		if !ok {
			g = &Group{SpecID: k.spec}
			groups[k] = g
			order = append(order, k)
		}
		g.Tasks = append(g.Tasks, t)
	}
	for _, k := range order {
		err := readGroup(ctx, tbl, *groups[k], exact, func(rec arrow.RecordBatch) error {
			c, err := conformTo(ctx, as, rec)
			if err != nil {
				return err
			}
			defer c.Release()
			return fn(c)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
