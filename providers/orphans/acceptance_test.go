package orphans_test

// The acceptance of issue 5, as one test on real tables (sqlite catalog,
// file warehouse): plan and apply through apply.Plan/apply.Apply, then a
// byte-for-byte comparison of every file under the warehouse and outside
// it. It is an external test package so it can drive the apply package,
// which imports providers.

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// Only orphan_files is set, so no other action touches a file and the
// before/after listings must differ by exactly the deleted strays.
const acceptanceHCL = `
policy "sweep" {
  orphan_files {
    older_than = "3d"
  }
}

policy "sweep_all" {
  orphan_files {
    older_than                = "3d"
    include_non_iceberg_files = true
  }
}

tables "lake.sales.*" {
  policy  = policy.sweep
  exclude = ["lake.sales.sidecars"]
}

table "lake.sales.sidecars" {
  policy = policy.sweep_all
}
`

func TestOrphanAcceptance(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	lake := testkit.NewLakehouse(t, filepath.Join(dir, "lake"), "lake")
	now := time.Now()
	old := now.Add(-10 * 24 * time.Hour)
	young := now.Add(-time.Hour)

	// orders: the table with the strays. Its location is spelled
	// file:///..., so its metadata says file:///... while the listing of
	// the disk says /...: the scheme mismatch of apache/iceberg#4346 in
	// its local form. Live files must match after normalisation.
	ordersLoc := filepath.Join(lake.Warehouse, "orders")
	orders := lake.CreateTable(t, "sales.orders", testkit.TableOptions{Partitioned: true, Location: "file://" + ordersLoc})
	orders = testkit.Append(t, orders, 4, 20, 2)
	if !strings.HasPrefix(orders.CurrentSnapshot().ManifestList, "file://") {
		t.Fatalf("manifest list %s: want a file:// reference", orders.CurrentSnapshot().ManifestList)
	}
	// Every live file is made old: only the references keep them.
	ageAll(t, ordersLoc, old)
	oldStrays := []string{
		testkit.WriteStray(t, orders, "data/event_day=2026-11-01/00000-9-stray.parquet", 100, old),
		testkit.WriteStray(t, orders, "data/failed-write.parquet", 50, old),
		testkit.WriteStray(t, orders, "metadata/snap-999-1-dead.avro", 30, old),
	}
	youngStray := testkit.WriteStray(t, orders, "data/in-flight.parquet", 70, young)
	crc := testkit.WriteStray(t, orders, "data/.failed-write.parquet.crc", 12, old)
	success := testkit.WriteStray(t, orders, "data/_SUCCESS", 0, old)
	outside := filepath.Join(dir, "outside")
	target := writeFile(t, filepath.Join(outside, "target.parquet"), "not ours", old)
	writeFile(t, filepath.Join(outside, "deep", "also.parquet"), "not ours either", old)
	must(t, os.Symlink(target, filepath.Join(ordersLoc, "data", "link.parquet")))
	must(t, os.Symlink(outside, filepath.Join(ordersLoc, "data", "linkdir")))

	// host: another table lies inside its location.
	host := lake.CreateTable(t, "sales.host", testkit.TableOptions{})
	host = testkit.Append(t, host, 2, 10, 1)
	hostLoc := strings.TrimPrefix(host.Location(), "file://")
	nested := lake.CreateTable(t, "sales.nested", testkit.TableOptions{Location: filepath.Join(hostLoc, "nested")})
	testkit.Append(t, nested, 2, 10, 1)
	ageAll(t, hostLoc, old)
	hostStray := testkit.WriteStray(t, host, "data/stray.parquet", 10, old)

	// nogc: gc.enabled=false.
	nogc := lake.CreateTable(t, "sales.nogc", testkit.TableOptions{Properties: map[string]string{"gc.enabled": "false"}})
	nogc = testkit.Append(t, nogc, 2, 10, 1)
	ageAll(t, strings.TrimPrefix(nogc.Location(), "file://"), old)
	nogcStray := testkit.WriteStray(t, nogc, "data/stray.parquet", 10, old)

	// sidecars: include_non_iceberg_files = true deletes old side files.
	side := lake.CreateTable(t, "sales.sidecars", testkit.TableOptions{})
	side = testkit.Append(t, side, 2, 10, 1)
	ageAll(t, strings.TrimPrefix(side.Location(), "file://"), old)
	sideOldCrc := testkit.WriteStray(t, side, "data/.x.parquet.crc", 8, old)
	sideYoungCrc := testkit.WriteStray(t, side, "data/.y.parquet.crc", 8, young)

	must(t, os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(lake.HCL()+acceptanceHCL), 0o644))
	cfg, diags := config.Load(dir, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	sess := providers.Open(cfg, providers.Options{})
	t.Cleanup(func() { _ = sess.Close() })

	rowsBefore := map[string]int64{}
	for _, n := range []string{"sales.orders", "sales.host", "sales.nested", "sales.nogc", "sales.sidecars"} {
		rowsBefore[n] = testkit.ScanRows(t, lake.Reload(t, n))
	}
	before := treeOf(t, dir)

	plan, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Errors) > 0 {
		t.Fatalf("plan errors: %v", plan.Errors)
	}
	tp := planOf(t, plan, "lake.sales.orders")
	o := orphansOf(tp)
	if o == nil || len(tp.Refusals) > 0 {
		t.Fatalf("orders: no orphan action (refusals %v)", tp.Refusals)
	}
	if want := sortedCopy(oldStrays); !slices.Equal(o.Paths, want) {
		t.Fatalf("orders plan paths\n got %v\nwant %v", o.Paths, want)
	}
	if o.Count != 3 || o.Bytes != 180 || o.KeptByAgeGuard != 1 || o.KeptBytes != 70 || o.NonIceberg != 2 {
		t.Fatalf("orders figures: count %d bytes %d kept %d/%d non-iceberg %d", o.Count, o.Bytes, o.KeptByAgeGuard, o.KeptBytes, o.NonIceberg)
	}
	if !slices.Equal(o.NonIcebergPaths, sortedCopy([]string{crc, success})) {
		t.Fatalf("non-iceberg paths %v", o.NonIcebergPaths)
	}
	// 4 unreferenced Iceberg files (the young one counts: rule 4 must not
	// let a broken referenced set hide behind the age guard).
	if o.MaxRatio <= 0 || o.Ratio <= 0 || o.Ratio >= o.MaxRatio {
		t.Fatalf("ratio %v vs max %v", o.Ratio, o.MaxRatio)
	}
	wantRefusal(t, plan, "lake.sales.host", "lake.sales.nested")
	wantRefusal(t, plan, "lake.sales.nogc", "gc.enabled")
	if so := orphansOf(planOf(t, plan, "lake.sales.sidecars")); so == nil || !slices.Equal(so.Paths, []string{sideOldCrc}) || so.KeptByAgeGuard != 1 {
		t.Fatalf("sidecars: want only the old .crc, got %+v", so)
	}
	if a := orphansOf(planOf(t, plan, "lake.sales.nested")); a != nil {
		t.Fatalf("nested has nothing to delete, planned %v", a.Paths)
	}

	res, err := apply.Apply(ctx, cfg, sess, plan, apply.ApplyOptions{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	deleted := map[string]bool{sideOldCrc: true}
	for _, p := range oldStrays {
		deleted[p] = true
	}
	for _, tr := range res.Tables {
		switch tr.Address {
		case "lake.sales.orders", "lake.sales.sidecars":
			if tr.Status != apply.StatusDone {
				t.Fatalf("%s: %s %s", tr.Address, tr.Status, tr.Error)
			}
		case "lake.sales.host", "lake.sales.nogc":
			if tr.Status != apply.StatusFailed || tr.Error == "" {
				t.Fatalf("%s: refused table reported %s %q", tr.Address, tr.Status, tr.Error)
			}
		}
	}
	if ar := actionResult(t, res, "lake.sales.orders"); ar.FilesDeleted != 3 || ar.BytesFreed != 180 || len(ar.DeleteErrors) > 0 {
		t.Fatalf("orders result %+v", ar)
	}

	// Every file and link is as before, except exactly the deleted ones.
	after := treeOf(t, dir)
	want := maps.Clone(before)
	for p := range deleted {
		rel, _ := filepath.Rel(dir, p)
		if _, ok := want[rel]; !ok {
			t.Fatalf("%s was not in the listing before", rel)
		}
		delete(want, rel)
	}
	if !maps.Equal(after, want) {
		for k := range before {
			if _, ok := after[k]; !ok && !deleted[filepath.Join(dir, k)] {
				t.Errorf("lost %s", k)
			}
		}
		for k, v := range after {
			if before[k] != v {
				t.Errorf("changed or added %s", k)
			}
		}
		t.FailNow()
	}
	for _, p := range []string{youngStray, crc, success, target, hostStray, nogcStray, sideYoungCrc} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s gone", p)
		}
	}
	for n, want := range rowsBefore {
		if got := testkit.ScanRows(t, lake.Reload(t, n)); got != want {
			t.Errorf("%s reads %d rows, want %d", n, got, want)
		}
	}

	// A second plan has nothing left to delete on orders.
	plan2, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if a := orphansOf(planOf(t, plan2, "lake.sales.orders")); a != nil {
		t.Fatalf("second plan still deletes %v", a.Paths)
	}
}

func ageAll(t *testing.T, dir string, at time.Time) {
	t.Helper()
	must(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeSymlink != 0 {
			return err
		}
		return os.Chtimes(p, at, at)
	}))
}

func writeFile(t *testing.T, p, body string, at time.Time) string {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(body), 0o644))
	must(t, os.Chtimes(p, at, at))
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// treeOf is every regular file (size, mtime, content) and symlink (target)
// under dir, except the catalog database, which plan and apply may touch.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case strings.HasPrefix(filepath.Base(p), "catalog.db"):
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st, err := d.Info()
			if err != nil {
				return err
			}
			out[rel] = st.ModTime().UTC().String() + " " + string(b)
		}
		return nil
	}))
	return out
}

func planOf(t *testing.T, p *diff.Plan, addr string) diff.TablePlan {
	t.Helper()
	for _, tp := range p.Tables {
		if tp.Address == addr {
			return tp
		}
	}
	t.Fatalf("%s not in the plan", addr)
	return diff.TablePlan{}
}

func orphansOf(tp diff.TablePlan) *diff.OrphansAction {
	for _, a := range tp.Actions {
		if a.Type == diff.RemoveOrphanFiles {
			return a.Orphans
		}
	}
	return nil
}

func wantRefusal(t *testing.T, p *diff.Plan, addr, reason string) {
	t.Helper()
	tp := planOf(t, p, addr)
	if orphansOf(tp) != nil {
		t.Fatalf("%s: plans a deletion despite %s", addr, reason)
	}
	for _, r := range tp.Refusals {
		if r.Action == string(diff.RemoveOrphanFiles) && strings.Contains(r.Reason, reason) {
			return
		}
	}
	t.Fatalf("%s: no refusal naming %q: %+v", addr, reason, tp.Refusals)
}

func actionResult(t *testing.T, r *apply.Results, addr string) apply.ActionResult {
	t.Helper()
	for _, tr := range r.Tables {
		if tr.Address != addr {
			continue
		}
		for _, a := range tr.Actions {
			if a.Type == diff.RemoveOrphanFiles {
				return a
			}
		}
	}
	t.Fatalf("%s: no remove_orphan_files result", addr)
	return apply.ActionResult{}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestOrphanAcceptanceS3a is apache/iceberg#4346 on a real S3 server
// (versitygw): the table's metadata references s3a:// paths, the listing of
// the bucket returns s3:// keys. With every file made old by the clock
// (object stores have no settable mtime), the plan and apply must delete
// exactly the stray and nothing that the s3a:// references name. Skipped
// when no versitygw binary is configured (CI sets it).
func TestOrphanAcceptanceS3a(t *testing.T) {
	ctx := context.Background()
	s3, _ := testenv.StartS3(t)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "catalog.db")
	db, err := lakehouse.OpenSQLiteDB(dbPath)
	must(t, err)
	t.Cleanup(func() { _ = db.Close() })
	props := iceberg.Properties(s3.Properties())
	props["warehouse"] = s3.URL("warehouse")
	cat, err := lakehouse.NewSQLCatalog("lake", db, sqlcat.SQLite, props)
	must(t, err)
	must(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	loc := "s3a://" + strings.TrimPrefix(s3.URL("warehouse", "orders"), "s3://")
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "orders"}, lakehouse.EventsSchema(), catalog.WithLocation(loc))
	must(t, err)
	tbl = testkit.Append(t, tbl, 3, 10, 1)
	if ml := tbl.CurrentSnapshot().ManifestList; !strings.HasPrefix(ml, "s3a://") {
		t.Fatalf("manifest list %s: want s3a://", ml)
	}
	fsys, err := tbl.FS(ctx)
	must(t, err)
	stray := s3.URL("warehouse", "orders", "data", "failed-write.parquet")
	must(t, fsys.(iceio.WriteFileIO).WriteFile(stray, []byte("stray")))
	side := s3.URL("warehouse", "orders", "data", "_SUCCESS")
	must(t, fsys.(iceio.WriteFileIO).WriteFile(side, nil))
	// Other engines' staging keys (issue 32): an object store has no
	// directories to leave, each key is asked; never proposed, reported.
	for _, k := range []string{"data/_temporary/0/_temporary/attempt_1/part-00000.parquet", "data/_temporary/0/task_1/part-00001.parquet", "data/.hive-staging_hive_1/-ext-10000/000000_0.parquet"} {
		must(t, fsys.(iceio.WriteFileIO).WriteFile(s3.URL(append([]string{"warehouse", "orders"}, strings.Split(k, "/")...)...), []byte("staged")))
	}

	hcl := "catalog \"lake\" {\n  type = \"sql\"\n  uri = \"sqlite:" + dbPath + "\"\n  warehouse = \"" + s3.URL("warehouse") + "\"\n  properties = {\n"
	for k, v := range s3.Properties() {
		hcl += "    \"" + k + "\" = \"" + v + "\"\n"
	}
	hcl += "  }\n}\n" + `
policy "sweep" {
  orphan_files {
    older_than = "3d"
  }
}

tables "lake.sales.*" {
  policy = policy.sweep
}
`
	must(t, os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(hcl), 0o644))
	cfg, diags := config.Load(dir, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	later := func() time.Time { return time.Now().Add(10 * 24 * time.Hour) }
	sess := providers.Open(cfg, providers.Options{Now: later})
	t.Cleanup(func() { _ = sess.Close() })

	listing := func() []string {
		var out []string
		lio := fsys.(iceio.ListableIO)
		must(t, lio.WalkDir(s3.URL("warehouse", "orders"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, strings.TrimPrefix(strings.TrimPrefix(p, "s3://"), "s3a://"))
			}
			return err
		}))
		slices.Sort(out)
		return out
	}
	before := listing()
	if len(before) < 12 { // 3 data files, 3 manifests, 3 lists, 4 metadata, 2 strays
		t.Fatalf("listing of the bucket has %d files: %v", len(before), before)
	}
	rows := testkit.ScanRows(t, tbl)

	plan, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Version: "test", Now: later})
	must(t, err)
	if len(plan.Errors) > 0 {
		t.Fatalf("plan errors %v", plan.Errors)
	}
	tp := planOf(t, plan, "lake.sales.orders")
	o := orphansOf(tp)
	if o == nil {
		t.Fatalf("no orphan action; refusals %v", tp.Refusals)
	}
	if len(o.Paths) != 1 || diff.NormalizePath(o.Paths[0], nil, nil) != diff.NormalizePath(stray, nil, nil) || o.NonIceberg != 1 {
		t.Fatalf("plan paths %v (non-iceberg %d): want only %s", o.Paths, o.NonIceberg, stray)
	}
	if st := o.Staging; st == nil || st.Dirs != 2 || st.Files != 3 || st.Bytes != 18 || len(st.Examples) != 2 ||
		!strings.HasSuffix(st.Examples[0], "/orders/data/.hive-staging_hive_1") || !strings.HasSuffix(st.Examples[1], "/orders/data/_temporary") {
		t.Fatalf("staging report %+v: want 2 directories, 3 files, 18 bytes", st)
	}
	res, err := apply.Apply(ctx, cfg, sess, plan, apply.ApplyOptions{Version: "test", Now: later})
	must(t, err)
	if ar := actionResult(t, res, "lake.sales.orders"); ar.FilesDeleted != 1 || len(ar.DeleteErrors) > 0 {
		t.Fatalf("result %+v", ar)
	}
	after := listing()
	want := slices.DeleteFunc(slices.Clone(before), func(p string) bool { return p == strings.TrimPrefix(stray, "s3://") })
	if !slices.Equal(after, want) {
		t.Fatalf("after apply\n got %v\nwant %v", after, want)
	}
	if got := testkit.ScanRows(t, lake2(t, cat)); got != rows {
		t.Fatalf("reads %d rows, want %d", got, rows)
	}
}

func lake2(t *testing.T, cat *sqlcat.Catalog) *table.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), table.Identifier{"sales", "orders"})
	must(t, err)
	return tbl
}
