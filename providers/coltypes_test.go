package providers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/testkit"
)

// A v3 table with a column of a type the rewrite must not touch
// (compaction.TypesProblem): the plan refuses its compaction, naming the
// column, and keeps its other actions; the executor refuses too and the
// table reads as before. Before the check, compacting the unknown column
// wrote a file iceberg-go itself failed to read ("decode plain INT32").
func TestUnrewritableColumnTypesRefused(t *testing.T) {
	for _, typ := range []iceberg.Type{iceberg.UnknownType{}, iceberg.GeometryType{}} {
		t.Run(typ.String(), func(t *testing.T) {
			ctx := context.Background()
			l := testkit.NewLakehouse(t, t.TempDir(), "lake")
			tbl := l.CreateTable(t, "ns.t", testkit.TableOptions{FormatVersion: 3})
			tbl = testkit.Append(t, tbl, 3, 10, 1)
			// The column is added after the files were written, as another
			// engine evolving the table would.
			tx := tbl.NewTransaction()
			u := tx.UpdateSchema(true, false)
			u.AddColumn([]string{"v"}, typ, "", false, nil)
			if err := u.Commit(); err != nil {
				t.Fatal(err)
			}
			tbl, err := tx.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}

			pol := testkit.Policy("lake.ns.t")
			pol.Compaction.MinInputFiles = config.Setting[int]{Value: 2, Set: true}
			pol.DerivedProperties = map[string]config.Setting[string]{"owner": {Value: "data-platform", Set: true}}
			st, err := sessionFor(t, l).Observe(ctx, pol)
			if err != nil {
				t.Fatal(err)
			}
			tp := diff.PlanTable(pol, st, fixedNow)
			var kinds []diff.ActionType
			for _, a := range tp.Actions {
				kinds = append(kinds, a.Type)
			}
			if !slices.Equal(kinds, []diff.ActionType{diff.UpdateProperties}) {
				t.Errorf("actions %v, want update_properties alone", kinds)
			}
			if !slices.ContainsFunc(tp.Refusals, func(r diff.Refusal) bool {
				return r.Action == string(diff.Compact) && strings.Contains(r.Reason, `column "v" (`+typ.String()+`)`)
			}) {
				t.Fatalf("no compaction refusal naming the column: %+v", tp.Refusals)
			}

			before := tbl.MetadataLocation()
			act, err := compact.PlanCompaction(ctx, tbl, diff.SelectionFor(pol), "binpack", fixedNow)
			if err != nil {
				t.Fatal(err)
			}
			_, res, err := compact.Compact(ctx, tbl, compact.CompactSpec{Action: act})
			if !errors.Is(err, compaction.ErrRefused) || res.Committed {
				t.Fatalf("executor: committed %v, err %v", res.Committed, err)
			}
			tbl = l.Reload(t, "ns.t")
			if tbl.MetadataLocation() != before {
				t.Fatalf("metadata moved: %s -> %s", before, tbl.MetadataLocation())
			}
			if n := testkit.ScanRows(t, tbl); n != 30 {
				t.Fatalf("rows %d, want 30", n)
			}
		})
	}
}
