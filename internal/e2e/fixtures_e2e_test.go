package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/testenv"
)

// TestFixturesRegistered copies the three Spark-written tables into each
// storage, registers them in each catalog and reads back their exact rows.
func TestFixturesRegistered(t *testing.T) {
	for _, b := range allBackends {
		t.Run(b.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			be := b.open(ctx, t)
			ns := testenv.UniqueName(t, "fx")
			createNamespace(ctx, t, be.cat, ns)
			for _, fx := range fixtures {
				name := strings.ReplaceAll(fx.Dir, "-", "_")
				md := copyFixture(ctx, t, fx, be.fixtureLocation(ns, name), be.ioProps, !be.noSideFiles)
				ident := table.Identifier{ns, name}
				be.register(ctx, t, ident, md)
				tbl, err := be.cat.LoadTable(ctx, ident)
				if err != nil {
					t.Fatalf("load registered %v: %v", ident, err)
				}
				if got := countRows(ctx, t, tbl); got != fx.Rows {
					t.Errorf("%s on %s: %d rows, want %d", fx.Dir, be.name, got, fx.Rows)
				}
			}
		})
	}
}

// TestFixturesPlanApply registers the Spark-written tables in every
// catalog/storage combination, plans and applies the e2e policy a few days in
// the future (so their history and the copied Hadoop .crc side files are all
// old), and checks that the exact live rows survive and that a second plan is
// empty.
func TestFixturesPlanApply(t *testing.T) {
	for _, b := range allBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fixturesPlanApplyOn(t, b.open)
		})
	}
}

// fixturesPlanApplyOn is TestFixturesPlanApply on one backend.
func fixturesPlanApplyOn(t *testing.T, open backendFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := open(ctx, t)
	ns := testenv.UniqueName(t, "fx")
	createNamespace(ctx, t, be.cat, ns)
	type before struct {
		rows, sum int64
		crc       int // Hadoop .crc side files under the table
		location  string
	}
	want := map[string]before{}
	for _, fx := range fixtures {
		name := strings.ReplaceAll(fx.Dir, "-", "_")
		md := copyFixture(ctx, t, fx, be.fixtureLocation(ns, name), be.ioProps, !be.noSideFiles)
		ident := table.Identifier{ns, name}
		be.register(ctx, t, ident, md)
		tbl, err := be.cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatalf("load %v: %v", ident, err)
		}
		rows, sum := sumIDs(ctx, t, tbl)
		if rows != fx.Rows {
			t.Fatalf("%s: %d rows before apply, want %d", fx.Dir, rows, fx.Rows)
		}
		fsys, err := tbl.FS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		crc := countSuffix(listFiles(t, fsys, tbl.Location()), ".crc")
		if crc == 0 && !be.noSideFiles {
			t.Fatalf("%s: no .crc side files were copied", fx.Dir)
		}
		want[name] = before{rows: rows, sum: sum, crc: crc, location: tbl.Location()}
	}
	future := time.Now().Add(72 * time.Hour)
	now := func() time.Time { return future }
	cfg := writeConfig(t, be, ns)
	p, res := planApply(ctx, t, cfg, now, nil)
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors: %+v", p.Errors)
	}
	if len(p.Tables) != len(fixtures) {
		t.Fatalf("plan has tables %v, want the %d fixtures", tableAddrs(p), len(fixtures))
	}
	for _, tp := range p.Tables {
		t.Logf("%s: %v refusals %+v", tp.Address, actionTypes(&tp), tp.Refusals)
	}
	requireApplied(t, res)
	for name, w := range want {
		tbl, err := be.cat.LoadTable(ctx, table.Identifier{ns, name})
		if err != nil {
			t.Fatalf("load %s after apply: %v", name, err)
		}
		rows, sum := sumIDs(ctx, t, tbl)
		if rows != w.rows || sum != w.sum {
			t.Errorf("%s after apply: %d rows (sum of l_orderkey %d), want %d (%d)", name, rows, sum, w.rows, w.sum)
		}
		// Non-Iceberg files are reported, never deleted by default.
		fsys, err := tbl.FS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if crc := countSuffix(listFiles(t, fsys, w.location), ".crc"); crc != w.crc {
			t.Errorf("%s: %d .crc side files after apply, want the %d copied", name, crc, w.crc)
		}
	}
	requireConverged(t, planOnly(ctx, t, cfg, now))
}
