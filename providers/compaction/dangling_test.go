package compaction

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/testkit"
)

// TestRemoveDanglingTrinoPositionDeletes: Trino's optimize left two
// position delete files naming data files it rewrote (a foreign table of
// the corpus). RemoveDangling finds exactly them, commits one "replace"
// snapshot through the commit check that drops them and changes no row,
// leaves every manifest holding files of its own spec and content, and
// finds nothing the second time (no commit).
func TestRemoveDanglingTrinoPositionDeletes(t *testing.T) {
	_, tbl := corpusTable(t, "iceberg-cxx-trino-dangling-deletes",
		"metadata/00011-31179cfb-920d-47df-af37-7362d4028557.metadata.json", nil)
	requireRemovesDangling(t, tbl, 2, func(d *Dangling) bool { return d.PositionDeletes == 2 })
}

// TestRemoveDanglingEqualityDelete: an equality delete older than every
// live data file (its data files were deleted whole, then rows appended)
// applies to none, by sequence number: the scan carries it with no task,
// and RemoveDangling removes it. One applying to a live file is kept.
func TestRemoveDanglingEqualityDelete(t *testing.T) {
	env := newEnv(t)
	tbl := env.create(t, tableSpec{name: "eqdangling"})
	tbl = appendMany(t, tbl, 2, 500, regions)
	tbl = eqDeleteIDs(t, tbl, 3, 4, 5) // applies to the two files
	var err error
	if tbl, err = tbl.Delete(context.Background(), iceberg.AlwaysTrue{}, nil); err != nil {
		t.Fatal(err)
	}
	rec := genRows(9, 10000, 300, regions)
	tbl = appendBatch(t, tbl, rec)
	rec.Release()
	if n := len(liveDeleteEntries(t, tbl)); n != 1 {
		t.Fatalf("setup: %d delete entries, want the equality delete", n)
	}
	if _, eq, _ := countDeletes(liveTasks(t, tbl)); eq != 0 {
		t.Fatalf("setup: the scan applies the equality delete to a live file")
	}
	tbl = eqDeleteIDs(t, tbl, 10001, 10002) // applies to the new file: kept
	requireRemovesDangling(t, tbl, 1, func(d *Dangling) bool { return d.EqualityDeletes == 1 && d.ManifestsDropped == 1 })
	after := eqEntries(t, env.load(t, "eqdangling"))
	if after != 1 {
		t.Fatalf("%d equality deletes left, want the live one", after)
	}
}

// requireRemovesDangling runs RemoveDangling on tbl and requires want
// dangling files (and ok of what it found), the same rows, a replace
// snapshot without them, manifests that agree with their spec and content,
// and no dangling file left.
func requireRemovesDangling(t *testing.T, tbl *table.Table, want int, ok func(*Dangling) bool) {
	t.Helper()
	before := scanStrings(t, tbl)
	entries := len(liveDeleteEntries(t, tbl))
	scanDeletes := map[string]bool{}
	for _, task := range liveTasks(t, tbl) {
		for _, list := range [][]iceberg.DataFile{task.DeleteFiles, task.EqualityDeleteFiles, task.DeletionVectorFiles} {
			for _, d := range list {
				scanDeletes[d.FilePath()] = true
			}
		}
	}
	// deleteManifests counts the delete manifests holding a live entry:
	// the snapshot of a removal also lists one of its DELETED entries, as
	// every Iceberg commit that removes files does.
	deleteManifests := func(tbl *table.Table) int {
		fs, mans := testkit.CurrentManifests(t, tbl)
		n := 0
		for _, m := range mans {
			if m.ManifestContent() != iceberg.ManifestContentDeletes {
				continue
			}
			for _, err := range m.Entries(fs, true) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				break
			}
		}
		return n
	}
	manifestsBefore := deleteManifests(tbl)
	next, d, err := RemoveDangling(context.Background(), tbl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := deleteManifests(next); got != manifestsBefore-d.ManifestsDropped {
		t.Errorf("%d delete manifests with live entries after, want %d (%d before, %d dropped)", got, manifestsBefore-d.ManifestsDropped, manifestsBefore, d.ManifestsDropped)
	}
	if len(d.Files) != want || !ok(d) {
		t.Fatalf("found %+v, want %d dangling", d, want)
	}
	for _, f := range d.Files {
		if scanDeletes[f.FilePath()] {
			t.Errorf("%s is called dangling, but the scan applies it", f.FilePath())
		}
	}
	if next == tbl || next.CurrentSnapshot().Summary.Operation != table.OpReplace {
		t.Fatalf("no replace snapshot committed: %+v", next.CurrentSnapshot().Summary)
	}
	requireSameRows(t, before, scanStrings(t, next))
	if got := len(liveDeleteEntries(t, next)); got != entries-want {
		t.Errorf("%d delete entries left, want %d", got, entries-want)
	}
	testkit.RequireManifestsAgree(t, next)
	again, d2, err := RemoveDangling(context.Background(), next, Options{})
	if err != nil || len(d2.Files) != 0 || again != next {
		t.Fatalf("second run: %v, %d dangling, committed %v", err, len(d2.Files), again != next)
	}
}

func eqEntries(t *testing.T, tbl *table.Table) int {
	n := 0
	for _, df := range liveDeleteEntries(t, tbl) {
		if df.ContentType() == iceberg.EntryContentEqDeletes {
			n++
		}
	}
	return n
}

// eqDeleteIDs commits an equality delete of ids on column id.
func eqDeleteIDs(t *testing.T, tbl *table.Table, ids ...int64) *table.Table {
	t.Helper()
	idField := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: false,
		Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"1"})}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(ids, nil)
	arr := b.NewInt64Array()
	b.Release()
	rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{idField}, nil), []arrow.Array{arr}, int64(arr.Len()))
	arr.Release()
	defer rec.Release()
	txn := tbl.NewTransaction()
	if err := txn.CommitEqualityDeletes(context.Background(), []int{1}, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }, nil); err != nil {
		t.Fatal(err)
	}
	out, err := txn.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}
