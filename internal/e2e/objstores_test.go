package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
)

// sqliteObjectStore: a sqlite SQL catalog whose warehouse is on an object
// store other than S3, reached with the IO properties props.
func sqliteObjectStore(t testing.TB, name string, props map[string]string, warehouse string) *backend {
	dbPath := filepath.Join(t.TempDir(), "catalog.db")
	db, err := sql.Open(sqliteshim.ShimName, "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cp := iceberg.Properties{"warehouse": warehouse}
	for k, v := range props {
		cp[k] = v
	}
	cat, err := sqlcat.NewCatalog(catalogName, db, sqlcat.SQLite, cp)
	if err != nil {
		t.Fatalf("sqlite catalog on %s: %v", warehouse, err)
	}
	loc := func(ns, tbl string) string { return strings.TrimSuffix(warehouse, "/") + "/" + ns + "/" + tbl }
	return &backend{
		name: name, cat: cat, ioProps: props,
		hcl: func(string) string {
			return fmt.Sprintf("type = \"sql\"\n  uri = \"sqlite:%s\"\n  warehouse = %q\n  properties = {\n%s  }\n",
				dbPath, warehouse, hclMap(props))
		},
		location:        loc,
		fixtureLocation: loc,
		register: func(ctx context.Context, t testing.TB, ident table.Identifier, md string) {
			registerSQL(ctx, t, db, sqlcat.SQLite, ident, md)
		},
	}
}

// sqliteGCS: the warehouse on GCS (fake-gcs-server in CI).
func sqliteGCS(_ context.Context, t testing.TB) *backend {
	e := testenv.GCS(t)
	return sqliteObjectStore(t, "sqlite+gcs", e.Properties(), e.URL("warehouse"))
}

// sqliteAzure: the warehouse on Azure Blob (Azurite in CI).
func sqliteAzure(_ context.Context, t testing.TB) *backend {
	e := testenv.Azure(t)
	return sqliteObjectStore(t, "sqlite+azure", e.Properties(), e.URL("warehouse"))
}

// objectStoreBackends are the stores other than S3 and local files (issue
// #30 item 5). They are not in allBackends: the suites below are theirs.
var objectStoreBackends = []struct {
	name string
	open backendFunc
}{
	{"sqlite_gcs", sqliteGCS},
	{"sqlite_azure", sqliteAzure},
}

// TestObjectStoresConverge is TestPlanApplyConverges on GCS and Azure:
// compaction, expiry and orphan removal applied, the rows kept, the old
// orphans and expired manifest lists gone, the next plan empty.
func TestObjectStoresConverge(t *testing.T) {
	for _, b := range objectStoreBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			convergeOn(t, b.open)
		})
	}
}

// TestObjectStoresFixtures is TestFixturesPlanApply on GCS and Azure: the
// Spark-written tables copied there (paths rewritten) and registered, the
// e2e policy applied, their exact rows and their .crc side files kept, the
// next plan empty.
func TestObjectStoresFixtures(t *testing.T) {
	for _, b := range objectStoreBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			fixturesPlanApplyOn(t, b.open)
		})
	}
}

// TestObjectStoresQuarantine: on GCS and Azure, an orphan sweep with
// quarantine moves the old orphans under .icewright-quarantine/ (the young one
// stays), the next plan is empty, and once the quarantine is due a plan
// purges the run, after which nothing is left of it and the plan is empty
// again. The rows are the same throughout. The purge deletes through the
// table's IO, one object at a time, until the batched path (objdel) is
// wired in.
func TestObjectStoresQuarantine(t *testing.T) {
	for _, b := range objectStoreBackends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			be := b.open(ctx, t)
			ns := testenv.UniqueName(t, "q")
			createNamespace(ctx, t, be.cat, ns)
			ident := table.Identifier{ns, "events"}
			addr := catalogName + "." + ns + ".events"
			tbl, err := be.cat.CreateTable(ctx, ident, eventsSchema, catalog.WithLocation(be.location(ns, "events")))
			if err != nil {
				t.Fatalf("create %v: %v", ident, err)
			}
			tbl = appendRows(ctx, t, tbl, 0, 50)
			fsys, err := tbl.FS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			dataDir := strings.TrimSuffix(tbl.Location(), "/") + "/data/"
			old := []string{dataDir + "orphan-old-1.parquet", dataDir + "sub/orphan-old-2.parquet"}
			for _, p := range old {
				writeOrphan(t, fsys, p)
			}
			gap()
			boundary := time.Now()
			gap()
			young := dataDir + "orphan-young.parquet"
			writeOrphan(t, fsys, young)
			rows, sum := sumIDs(ctx, t, tbl)

			cfg := writeQuarantineConfig(t, be, ns)
			now := func() time.Time { return boundary.Add(48 * time.Hour) }
			p, res := planApply(ctx, t, cfg, now, nil)
			tp := findTable(t, p, addr)
			a := actionOf(tp, diff.RemoveOrphanFiles)
			if a == nil || a.Orphans.Count != 2 || a.Orphans.Quarantine == "" {
				t.Fatalf("plan: want a quarantine sweep of 2 orphans, got actions %v refusals %+v errors %+v", actionTypes(tp), tp.Refusals, p.Errors)
			}
			requireApplied(t, res)
			files := listFiles(t, fsys, tbl.Location())
			var quarantined []string
			for _, f := range files {
				if strings.Contains(f, "/.icewright-quarantine/") && strings.HasSuffix(f, ".parquet") {
					quarantined = append(quarantined, f)
				}
			}
			for _, p := range old {
				if slices.Contains(files, p) {
					t.Errorf("old orphan %s still in place after the sweep", p)
				}
				rel := strings.TrimPrefix(p, strings.TrimSuffix(tbl.Location(), "/")+"/")
				if !slices.ContainsFunc(quarantined, func(q string) bool { return strings.HasSuffix(q, "/"+rel) }) {
					t.Errorf("old orphan %s not in the quarantine %v", rel, quarantined)
				}
			}
			if len(quarantined) != len(old) {
				t.Errorf("quarantine holds %v, want the %d old orphans", quarantined, len(old))
			}
			if !slices.Contains(files, young) {
				t.Errorf("young orphan %s moved or deleted", young)
			}
			requireConverged(t, planOnly(ctx, t, cfg, now))

			// Due: the quarantine is 1d, planned 3d after the sweep. By then
			// the young orphan is old too: the same action purges the first
			// run and quarantines it in a second one.
			later := func() time.Time { return now().Add(72 * time.Hour) }
			p, res = planApply(ctx, t, cfg, later, nil)
			tp = findTable(t, p, addr)
			a = actionOf(tp, diff.RemoveOrphanFiles)
			if a == nil || len(a.Orphans.PurgeRuns) != 1 || a.Orphans.Count != 1 {
				t.Fatalf("plan when due: want one purge run and one orphan, got actions %v refusals %+v errors %+v", actionTypes(tp), tp.Refusals, p.Errors)
			}
			requireApplied(t, res)
			files = listFiles(t, fsys, tbl.Location())
			for _, q := range quarantined {
				if slices.Contains(files, q) {
					t.Errorf("quarantined %s still there after the purge", q)
				}
			}
			if slices.Contains(files, young) || !slices.ContainsFunc(files, func(f string) bool {
				return strings.Contains(f, "/.icewright-quarantine/") && strings.HasSuffix(f, "/data/orphan-young.parquet")
			}) {
				t.Errorf("the once young orphan is not in the second quarantine run: %v", files)
			}
			requireConverged(t, planOnly(ctx, t, cfg, later))

			tbl, err = be.cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			if r, s := sumIDs(ctx, t, tbl); r != rows || s != sum {
				t.Errorf("rows %d (sum %d), want %d (sum %d)", r, s, rows, sum)
			}
		})
	}
}

// writeQuarantineConfig manages every table of ns with an orphan sweep
// alone, quarantining for a day.
func writeQuarantineConfig(t testing.TB, be *backend, ns string) *config.Config {
	return writeConfigWith(t, be, ns, `
policy "e2e" {
  orphan_files {
    older_than       = "2d"
    max_orphan_ratio = 0.9
    quarantine       = "1d"
  }
}
`)
}

// TestAzureDeletesInBatches: on Azure, expiry and the orphan sweep delete
// through the Blob Batch API (objdel, with the catalog's adls.*
// properties), never blob by blob: convergeOn expires snapshots and removes
// orphans, and the proxy in front of Azurite sees batch requests and no
// single DELETE. It fails when a caller opens its store without the
// catalog's properties (the store then steps aside to the table's IO).
func TestAzureDeletesInBatches(t *testing.T) {
	proxy := testenv.StartFaultProxy(t, "http://"+testenv.Azure(t).Endpoint)
	convergeOn(t, func(_ context.Context, t testing.TB) *backend {
		e := testenv.Azure(t).Through(proxy)
		return sqliteObjectStore(t, "sqlite+azure", e.Properties(), e.URL("warehouse"))
	})
	batches := 0
	for _, s := range proxy.Requests(http.MethodPost, "") {
		if strings.Contains(s.Query, "comp=batch") {
			batches++
		}
	}
	if singles := proxy.Requests(http.MethodDelete, ""); batches == 0 || len(singles) > 0 {
		t.Fatalf("%d batch requests, %d single DELETEs (first: %v); want batches only", batches, len(singles), singles)
	}
}
