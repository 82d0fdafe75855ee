// Command fleetbench builds and reads the fleet of the fleet benchmark
// (bench/fleet/run.sh):
//
//	fleetbench setup -dir D -tables N [-appends 8] [-partitions 3] [-per-namespace 1000]
//	fleetbench floor -dir D [-parallelism P]
//	fleetbench floor -config CFG [-prefix P] [-parallelism P]
//	fleetbench register -dir D -config CFG
//	fleetbench setup-catalog -config CFG -prefix P -tables N [-appends 8] [-partitions 3] [-per-namespace 1000] [-parallelism 4]
//	fleetbench delay -listen ADDR -upstream ADDR -delay D
//	fleetbench copy -dir SRC -to DST
//	fleetbench reconcile -config CFG [-fraction 0.01] [-parallelism P] [-prefix P] [-apply]
//
// setup makes one table by real appends (`appends` commits of 100 rows over
// `partitions` day partitions, the first half of its history 10 days old),
// then copies it N-1 times with its paths rewritten (internal/lakehouse
// CopyTable) and registers every copy in the sqlite catalog D/catalog.db
// ("default"), `per-namespace` tables to a namespace. Copies are byte for
// byte the same table at other paths, so every table costs a plan the same.
//
// floor is the baseline a plan is measured against: it lists every
// namespace's tables once, loads every table through the catalog, reads
// every snapshot's manifest list and every distinct manifest's entries,
// P tables at once, and nothing else. It prints what it read. With -config
// it reads the one catalog of an icewright configuration directory, opened as
// icewright opens it (providers/catalogs), so the floor and the plan share
// the driver, the pool and the HTTP client.
//
// register copies the sqlite fleet's catalog rows into the SQL catalog of
// CFG (a PostgreSQL one): the same tables, reached through another catalog.
// setup-catalog builds a fleet in a catalog that cannot register local
// files (a REST catalog on an object store): each table by real appends
// through the catalog, without the backdated history.
//
// copy copies the sqlite fleet in SRC to DST (paths rewritten), and
// reconcile measures a reconcile pass on such a copy after commits to a
// fraction of its tables, against a full plan and against learning the
// metadata locations alone (bench/fleet/reconcile.sh).
//
// delay is a TCP proxy that holds each chunk the client sends for D before
// passing it on: one added round trip per request or query, so a catalog
// on this machine answers as one across a network does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/bench/plan/benchlake"
	"github.com/icewright/icewright/internal/lakehouse"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: fleetbench setup|floor -dir D ...")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", "", "lakehouse directory")
	tables := fs.Int("tables", 100, "tables (setup)")
	appends := fs.Int("appends", 8, "appends per table (setup)")
	parts := fs.Int("partitions", 3, "day partitions (setup)")
	perNS := fs.Int("per-namespace", 1000, "tables per namespace (setup)")
	par := fs.Int("parallelism", 4, "tables read at once (floor), built at once (setup-catalog)")
	cfgDir := fs.String("config", "", "icewright configuration directory with one catalog (floor, register, setup-catalog)")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (delay)")
	upstream := fs.String("upstream", "", "address to forward to (delay)")
	delay := fs.Duration("delay", 0, "time each client chunk is held (delay)")
	to := fs.String("to", "", "directory of the copy (copy)")
	fraction := fs.Float64("fraction", 0.01, "share of the tables appended to between two passes (reconcile)")
	applyActions := fs.Bool("apply", false, "the reconciler applies what it plans (not shadow), and a full plan after the pass counts the tables still out of policy (reconcile)")
	prefix := fs.String("prefix", "", "namespace name prefix (setup-catalog; floor reads, and reconcile counts and appends to, only tables of namespaces with it)")
	list := fs.Bool("list", false, "also walk each table's location, as an orphan sweep lists it (floor; file:// locations)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx := context.Background()
	switch args[0] {
	case "delay":
		return delayProxy(*listen, *upstream, *delay)
	case "reconcile":
		return reconcilePass(ctx, *cfgDir, *fraction, *par, *prefix, *applyActions)
	case "setup-catalog":
		return setupCatalog(ctx, *cfgDir, *prefix, *tables, *appends, *parts, *perNS, *par)
	case "floor":
		if *cfgDir != "" {
			cat, _, _, closeCat, err := openConfigured(ctx, *cfgDir)
			if err != nil {
				return err
			}
			defer closeCat()
			return floorOf(ctx, cat, *prefix, *par, *list)
		}
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	switch args[0] {
	case "setup":
		return setup(ctx, *dir, *tables, *appends, *parts, *perNS)
	case "floor":
		return floor(ctx, *dir, *par, *list)
	case "register":
		return register(ctx, *dir, *cfgDir)
	case "copy":
		return copyFleet(ctx, *dir, *to)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func setup(ctx context.Context, dir string, n, appends, parts, perNS int) error {
	lake, err := benchlake.Open(dir)
	if err != nil {
		return err
	}
	defer lake.Close()
	tbl, err := lake.CreateTable(ctx, "ns0000", "t000000", iceberg.Properties{
		// The policy's derived property is already set: the plan of a
		// table is compaction, expiry and orphans, as in a fleet in use.
		"write.target-file-size-bytes": fmt.Sprint(128 << 20),
	})
	if err != nil {
		return err
	}
	for i := range appends {
		if tbl, err = benchlake.Append(ctx, tbl, int64(i*100), 100, parts); err != nil {
			return err
		}
		if i == appends/2-1 {
			if tbl, err = lake.Backdate(ctx, tbl, 10*24*time.Hour); err != nil {
				return err
			}
		}
	}
	src := strings.TrimPrefix(tbl.Location(), "file://")
	current, err := filepath.Rel(src, strings.TrimPrefix(tbl.MetadataLocation(), "file://"))
	if err != nil {
		return err
	}
	t0 := time.Now()
	for i := 1; i < n; i++ {
		ns := fmt.Sprintf("ns%04d", i/perNS)
		name := fmt.Sprintf("t%06d", i)
		dst := filepath.Join(filepath.Dir(src), "..", ns+".db", name)
		loc, err := lakehouse.CopyTable(src, filepath.Clean(dst), current, lakehouse.FileURIs())
		if err != nil {
			return err
		}
		if err := lakehouse.RegisterSQL(ctx, lake.DB, benchlake.CatalogName, []string{ns, name}, loc); err != nil {
			return err
		}
		if i%500 == 0 {
			fmt.Fprintf(os.Stderr, "%d tables (%s)\n", i+1, time.Since(t0).Round(time.Second))
		}
	}
	fmt.Fprintf(os.Stderr, "%d tables of %d snapshots each\n", n, len(tbl.Metadata().Snapshots()))
	return nil
}

func floor(ctx context.Context, dir string, par int, list bool) error {
	lake, err := benchlake.Open(dir)
	if err != nil {
		return err
	}
	defer lake.Close()
	return floorOf(ctx, lake.Catalog, "", par, list)
}

func floorOf(ctx context.Context, cat catalog.Catalog, prefix string, par int, list bool) error {
	var idents []table.Identifier
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		return err
	}
	for _, ns := range nss {
		if !strings.HasPrefix(strings.Join(ns, "."), prefix) {
			continue
		}
		for id, err := range cat.ListTables(ctx, ns) {
			if err != nil {
				return err
			}
			idents = append(idents, id)
		}
	}
	var lists, manifests, entries, listed atomic.Int64
	work := make(chan table.Identifier)
	errs := make(chan error, par)
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				err := readTable(ctx, cat, id, &lists, &manifests, &entries, list, &listed)
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for _, id := range idents {
		work <- id
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	fmt.Printf("%d tables, %d manifest lists, %d manifests, %d entries", len(idents), lists.Load(), manifests.Load(), entries.Load())
	if list {
		fmt.Printf(", %d files listed", listed.Load())
	}
	fmt.Println()
	return nil
}

// readTable loads the table and reads every snapshot's manifest list and
// every distinct manifest once; with list, it first walks the table's
// location (every file's name, size and time, as the sweep's listing reads
// them).
func readTable(ctx context.Context, cat catalog.Catalog, id table.Identifier, lists, manifests, entries *atomic.Int64, list bool, listed *atomic.Int64) error {
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		return err
	}
	if list {
		root, ok := strings.CutPrefix(tbl.Location(), "file://")
		if !ok {
			return fmt.Errorf("floor -list: %s is not a file:// location", tbl.Location())
		}
		err := filepath.WalkDir(root, func(_ string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if _, err := d.Info(); err != nil {
				return err
			}
			listed.Add(1)
			return nil
		})
		if err != nil {
			return err
		}
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		mfs, err := s.Manifests(fsys)
		if err != nil {
			return err
		}
		lists.Add(1)
		for _, m := range mfs {
			if seen[m.FilePath()] {
				continue
			}
			seen[m.FilePath()] = true
			es, err := m.FetchEntries(fsys, false)
			if err != nil {
				return err
			}
			manifests.Add(1)
			entries.Add(int64(len(es)))
		}
	}
	return nil
}
