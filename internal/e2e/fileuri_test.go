package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/testkit"
)

// The tables of this file are foreign tables at a file: location whose
// partition directories carry escapes, as Java and PyIceberg write an
// identity timestamp's ':' (partition_col=2023-08-22T09%3A15%3A20). Their
// metadata names each file by a file:// URI with those escapes. iceberg-go
// v0.7.0's local IO opens such a URI decoded (.../09:15:20/...), where Java,
// PyIceberg, Spark, Trino and DuckDB open it as written; the file is under
// the written name (docs/design.md §5.5 rule 8). Values are read by DuckDB
// only: icewright's reader goes through iceberg-go, which cannot open them.

// escapedCorpusTable is a Spark + Java Iceberg table (v2, identity on a
// timestamp) with escaped partition directories.
const escapedCorpusTable = "duckdb-partition-timestamp-ns"

// The corpus table's two partition values.
var (
	escapedP1 = time.Date(2023, 5, 15, 14, 30, 45, 0, time.UTC)
	escapedP2 = time.Date(2023, 8, 22, 9, 15, 20, 0, time.UTC)
)

// fileURINamespace holds the tables of this file.
const fileURINamespace = "fileuri"

// fileURIOrphans is the orphan policy of this file's tests, whose clock
// (fileURIClock) makes every file a month old.
const fileURIOrphans = `
  orphan_files {
    older_than       = "3d"
    max_orphan_ratio = 0.95
  }`

// fileURIClock is the plans' clock: a month from now, so every file and
// snapshot the test made is old.
func fileURIClock() func() time.Time {
	now := time.Now().Add(30 * 24 * time.Hour)
	return func() time.Time { return now }
}

// stagedEscapedTable builds a history on a bare-path copy of the corpus
// table, where every engine (iceberg-go too) reads the paths literally,
// with grow, then copies the result to <warehouse>/fileuri/<name> with
// file:// URIs (lakehouse.FileURIs) and registers it. It returns the table
// and its location as a local path.
func stagedEscapedTable(ctx context.Context, t *testing.T, be *backend, name string, grow func(*table.Table) *table.Table) (*table.Table, string) {
	t.Helper()
	ns := fileURINamespace
	createNamespace(ctx, t, be.cat, ns)
	stage := filepath.Join(t.TempDir(), "stage", name)
	md := testkit.CopyTable(t, filepath.Join(corpusDir(t), escapedCorpusTable), stage, "metadata/v2.metadata.json")
	stageIdent := table.Identifier{ns + "_stage", name}
	createNamespace(ctx, t, be.cat, stageIdent[0])
	be.register(ctx, t, stageIdent, "file://"+md)
	tbl, err := be.cat.LoadTable(ctx, stageIdent)
	if err != nil {
		t.Fatal(err)
	}
	if grow != nil {
		tbl = grow(tbl)
	}
	loc := strings.TrimPrefix(be.fixtureLocation(ns, name), "file://")
	md = testkit.CopyTable(t, stage, loc, "metadata/"+filepath.Base(tbl.MetadataLocation()), lakehouse.FileURIs())
	// The staging table goes: it is another table of the catalog, and a
	// plan reads every table's locations.
	if err := be.cat.DropTable(ctx, stageIdent); err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{ns, name}
	be.register(ctx, t, ident, "file://"+md)
	if tbl, err = be.cat.LoadTable(ctx, ident); err != nil {
		t.Fatal(err)
	}
	return tbl, loc
}

// appendEscapedRows appends one row to each of the corpus table's
// partitions through iceberg-go; at a bare location its partition
// directories are Java's, escapes and all.
func appendEscapedRows(ctx context.Context, t *testing.T, tbl *table.Table, userID int64) *table.Table {
	t.Helper()
	as, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := buildBatch(t, as, []row{{escapedP1, userID, "added"}, {escapedP2, userID + 1, "added"}})
	defer rec.Release()
	rdr, err := array.NewRecordReader(as, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	next, err := tbl.Append(ctx, rdr, nil)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return next
}

// liveDataFiles are the current snapshot's data file paths, sorted.
func liveDataFiles(ctx context.Context, t *testing.T, tbl *table.Table) []string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		out = append(out, task.File.FilePath())
	}
	slices.Sort(out)
	return out
}

// decodedName is the local name iceberg-go's IO opens for a file:// URI.
func decodedName(t *testing.T, uri string) string {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// TestFileURIEscapedPathsPlanApplyPlan: a Java-written table at a file:
// location with escaped partition directories, under compaction, expiry and
// an orphan sweep at once. Partition P1's files (Java's and two appended)
// are reachable only from snapshots that expire; P2 holds three small files.
// One released file also has a file under its decoded name (a different
// file, not the table's). The plan refuses the compaction of P2 and the
// sweep, each saying why, and lists the expiry with the files named by
// escaped URIs; apply deletes the released files under their literal names,
// leaves the one whose decoded name exists (reported, not counted as
// deleted) and touches no decoded name; every referenced file is there
// afterwards, DuckDB reads the same values, and the next plan has no action.
func TestFileURIEscapedPathsPlanApplyPlan(t *testing.T) {
	duck := testenv.DuckDBReader(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	be := sqliteFile(ctx, t)
	ns := fileURINamespace
	var p1Files []string // P1's data files, relative to the table location
	tbl, loc := stagedEscapedTable(ctx, t, be, "ts", func(tbl *table.Table) *table.Table {
		tbl = appendEscapedRows(ctx, t, tbl, 100)
		tbl = appendEscapedRows(ctx, t, tbl, 200)
		for _, p := range liveDataFiles(ctx, t, tbl) {
			if strings.Contains(p, "partition_col=2023-05-15T14%3A30%3A45/") {
				p1Files = append(p1Files, strings.TrimPrefix(p, tbl.Location()+"/"))
			}
		}
		txn := tbl.NewTransaction()
		if err := txn.Delete(ctx, iceberg.EqualTo(iceberg.Reference("partition_col"), iceberg.Timestamp(escapedP1.UnixMicro())), nil); err != nil {
			t.Fatalf("delete P1: %v", err)
		}
		next, err := txn.Commit(ctx)
		if err != nil {
			t.Fatalf("delete P1: %v", err)
		}
		return next
	})
	if len(p1Files) != 3 {
		t.Fatalf("setup: P1 has files %v, want Java's and two appended", p1Files)
	}
	live := liveDataFiles(ctx, t, tbl)
	if len(live) != 3 {
		t.Fatalf("setup: live files %v, want P2's three", live)
	}
	for _, p := range live {
		if !strings.HasPrefix(p, "file://"+loc+"/data/partition_col=2023-08-22T09%3A15%3A20/") {
			t.Fatalf("setup: live file %s is not named by an escaped file:// URI", p)
		}
	}
	// P1's files under their literal names, and a different file under the
	// decoded name of one of them.
	var released []string
	for _, p := range p1Files {
		released = append(released, filepath.Join(loc, p))
	}
	slices.Sort(released)
	for _, p := range released {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("setup: released file %s: %v", p, err)
		}
	}
	twinOf := released[0]
	twin := decodedName(t, "file://"+twinOf)
	if twin == twinOf {
		t.Fatalf("setup: %s decodes to itself", twinOf)
	}
	if err := os.MkdirAll(filepath.Dir(twin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(twin, []byte("not the table's file"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := duckFingerprint(ctx, duck, tbl)
	if err != nil {
		t.Fatalf("DuckDB: %v", err)
	}
	if before.Rows != 3 {
		t.Fatalf("setup: DuckDB reads %d rows, want 3", before.Rows)
	}

	cfg := writeCorpusConfig(t, be, ns, `
  target_file_size = "64MiB"
  compaction {
    strategy        = "binpack"
    min_input_files = 2
  }
  snapshot_retention {
    max_age       = "1d"
    min_snapshots = 1
  }`+fileURIOrphans, "")
	nowFn := fileURIClock()
	addr := catalogName + "." + ns + ".ts"
	p, res := planApply(ctx, t, cfg, nowFn, nil)
	for _, e := range p.Errors {
		t.Errorf("plan: %s: %s", e.Address, e.Message)
	}
	tp := findTable(t, p, addr)
	t.Logf("plan: %v, refusals %+v", actionTypes(tp), tp.Refusals)
	refusal := func(kind diff.ActionType) string {
		for _, r := range tp.Refusals {
			if r.Action == string(kind) {
				return r.Reason
			}
		}
		return ""
	}
	// Compaction: refused in the plan, naming a file and the cause.
	if actionOf(tp, diff.Compact) != nil {
		t.Errorf("the plan compacts files iceberg-go cannot open: %+v", actionOf(tp, diff.Compact).Compact)
	}
	if why := refusal(diff.Compact); !strings.Contains(why, "3 data files in 1 partition ") || !strings.Contains(why, "percent-escapes") || !strings.Contains(why, "partition_col=2023-08-22T09%3A15%3A20/") {
		t.Errorf("compaction refusal %q does not say which files and why", why)
	}
	// Expiry: planned, with the files named by escaped URIs said.
	exp := actionOf(tp, diff.ExpireSnapshots)
	if exp == nil {
		t.Fatalf("no expiry planned: %v", actionTypes(tp))
	}
	if exp.Expire.EscapedFileURIs != 3 || exp.Expire.FilesToDelete < 3 {
		t.Errorf("expiry frees %d files, %d named by escaped file: URIs; want P1's 3 among them", exp.Expire.FilesToDelete, exp.Expire.EscapedFileURIs)
	}
	// The sweep: refused, saying that the files are under their literal
	// names.
	if actionOf(tp, diff.RemoveOrphanFiles) != nil {
		t.Errorf("the plan sweeps: %+v", actionOf(tp, diff.RemoveOrphanFiles).Orphans)
	}
	if why := refusal(diff.RemoveOrphanFiles); !strings.Contains(why, "under the literal names") || !strings.Contains(why, loc+"/data/partition_col=2023-") || !strings.Contains(why, "%3A") {
		t.Errorf("orphan refusal %q does not say why", why)
	}

	// Apply: the expiry ran; nothing else did.
	var expRes *apply.ActionResult
	for _, tr := range res.Tables {
		for i, a := range tr.Actions {
			if a.Error != "" {
				t.Errorf("apply %s: %s failed: %s", tr.Address, a.Type, a.Error)
			}
			if a.Type == diff.ExpireSnapshots {
				expRes = &tr.Actions[i]
			}
		}
	}
	if expRes == nil || expRes.SnapshotsExpired == 0 {
		t.Fatalf("expiry did not run: %+v", res.Tables)
	}
	t.Logf("expiry: deleted %d, not applied %v, reason %q", expRes.FilesDeleted, expRes.NotApplied, expRes.Reason)
	for _, p := range released[1:] {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("released file %s is still there (%v)", p, err)
		}
	}
	for _, p := range []string{twinOf, twin} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was deleted: under one of the two names is a file that is not the table's: %v", p, err)
		}
	}
	if !slices.ContainsFunc(expRes.NotApplied, func(s string) bool { return strings.Contains(s, filepath.Base(twinOf)) && strings.Contains(s, twin) }) {
		t.Errorf("the file left under its literal name is not reported with why: %v", expRes.NotApplied)
	}
	after, err := be.cat.LoadTable(ctx, table.Identifier{ns, "ts"})
	if err != nil {
		t.Fatal(err)
	}
	if got := liveDataFiles(ctx, t, after); !slices.Equal(got, live) {
		t.Errorf("the live files changed:\n before %v\n after  %v", live, got)
	}
	requireReferencedPresent(ctx, t, "ts", after)
	if got, err := duckFingerprint(ctx, duck, after); err != nil {
		t.Errorf("DuckDB after apply: %v", err)
	} else if !got.equal(before) {
		t.Errorf("DuckDB reads other values after apply:\n before %v\n after  %v", before, got)
	}

	second := planOnly(ctx, t, cfg, nowFn)
	for _, e := range second.Errors {
		t.Errorf("second plan: %s: %s", e.Address, e.Message)
	}
	if tp2 := findTable(t, second, addr); len(tp2.Actions) > 0 {
		t.Errorf("not converged: the second plan has %v", actionTypes(tp2))
	}
}

// TestFileURIEscapedPathsNoLiveOrphan tries to make the sweep propose a live
// file: every live file of a Java-written table at a file: location also has
// a copy under its decoded name, so iceberg-go's reading of every reference
// is in the listing (no "listing is partial") and the table's own files,
// under their literal names, match no decoded reference. The plan proposes
// only the planted stray, apply deletes only it, and the next plan has no
// action; every referenced file, under its literal name, is still there and
// DuckDB reads the same values.
func TestFileURIEscapedPathsNoLiveOrphan(t *testing.T) {
	duck := testenv.DuckDBReader(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	be := sqliteFile(ctx, t)
	ns := fileURINamespace
	tbl, loc := stagedEscapedTable(ctx, t, be, "ts", nil)
	live := liveDataFiles(ctx, t, tbl)
	if len(live) != 2 {
		t.Fatalf("setup: live files %v", live)
	}
	for _, p := range live {
		lit := strings.TrimPrefix(p, "file://")
		raw, err := os.ReadFile(lit)
		if err != nil {
			t.Fatalf("setup: %s under its literal name: %v", p, err)
		}
		dec := decodedName(t, p)
		if err := os.MkdirAll(filepath.Dir(dec), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dec, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stray := filepath.Join(loc, "data", "00000-9-stray.parquet")
	if err := os.WriteFile(stray, []byte("not referenced by any snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := duckFingerprint(ctx, duck, tbl)
	if err != nil {
		t.Fatalf("DuckDB: %v", err)
	}
	cfg := writeCorpusConfig(t, be, ns, fileURIOrphans, "")
	nowFn := fileURIClock()
	p, res := planApply(ctx, t, cfg, nowFn, nil)
	requireApplied(t, res)
	tp := findTable(t, p, catalogName+"."+ns+".ts")
	a := actionOf(tp, diff.RemoveOrphanFiles)
	if a == nil {
		t.Fatalf("no sweep planned: refusals %+v", tp.Refusals)
	}
	if !slices.Equal(a.Orphans.Paths, []string{stray}) {
		t.Errorf("the sweep proposes %v, want only the stray %s", a.Orphans.Paths, stray)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("the stray survived: %v", err)
	}
	after, err := be.cat.LoadTable(ctx, table.Identifier{ns, "ts"})
	if err != nil {
		t.Fatal(err)
	}
	requireReferencedPresent(ctx, t, "ts", after)
	if got, err := duckFingerprint(ctx, duck, after); err != nil {
		t.Errorf("DuckDB after apply: %v", err)
	} else if !got.equal(before) {
		t.Errorf("DuckDB reads other values after apply:\n before %v\n after  %v", before, got)
	}
	requireConverged(t, planOnly(ctx, t, cfg, nowFn))
}
