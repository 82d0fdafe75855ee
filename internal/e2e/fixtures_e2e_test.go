package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/internal/testenv"
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
				md := copyFixture(ctx, t, fx, be.fixtureLocation(ns, name), be.ioProps)
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
