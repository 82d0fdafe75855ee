package testkit

import (
	"os"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/lakehouse"
)

func TestAppendDeletesAndScan(t *testing.T) {
	l := NewLakehouse(t, t.TempDir(), "lake")
	tbl := Append(t, l.CreateTable(t, "a.b.t", TableOptions{}), 3, 10, 1)
	if got := ScanRows(t, tbl); got != 30 {
		t.Fatalf("rows = %d, want 30", got)
	}
	tbl = DeletePositions(t, tbl, iceberg.EqualTo(iceberg.Reference("event_id"), int64(4)))
	tbl = DeleteEquality(t, tbl, 7, 8)
	ids := ScanIDs(t, tbl)
	if len(ids) != 27 || ids[4] != 0 || ids[7] != 0 || ids[8] != 0 || ids[9] != 1 {
		t.Fatalf("ids after deletes: %d rows %v", len(ids), ids)
	}
	// Appending again continues the ids.
	tbl = Append(t, tbl, 1, 5, 1)
	if ids := ScanIDs(t, tbl); ids[30] != 1 || ids[34] != 1 {
		t.Fatalf("ids after append: %v", ids)
	}
}

// The time machine shifts every timestamp and records the previous
// metadata file, and the table stays loadable and readable.
func TestBackdate(t *testing.T) {
	l := NewLakehouse(t, t.TempDir(), "lake")
	tbl := Append(t, l.CreateTable(t, "ns.t", TableOptions{Partitioned: true}), 2, 10, 2)
	before := tbl.Metadata()
	prevLoc := tbl.MetadataLocation()
	d := 10 * 24 * time.Hour
	after := l.Backdate(t, tbl, d).Metadata()
	for i, s := range after.Snapshots() {
		if want := before.Snapshots()[i].TimestampMs - d.Milliseconds(); s.TimestampMs != want {
			t.Errorf("snapshot %d at %d, want %d", s.SnapshotID, s.TimestampMs, want)
		}
	}
	if after.LastUpdatedMillis() != before.LastUpdatedMillis()-d.Milliseconds() {
		t.Errorf("last updated not shifted")
	}
	var logged bool
	for e := range after.PreviousFiles() {
		if e.MetadataFile == prevLoc {
			logged = true
		}
	}
	if !logged {
		t.Error("the previous metadata file is not in the metadata log")
	}
	// Later commits work on top of the backdated version.
	tbl = Append(t, l.Reload(t, "ns.t"), 1, 10, 1)
	if got := ScanRows(t, tbl); got != 30 {
		t.Fatalf("rows = %d", got)
	}
}

func TestCopyFixtures(t *testing.T) {
	l := NewLakehouse(t, t.TempDir(), "lake")
	want := map[string]int64{
		"duckdb-spark-lineitem-mor":             51793,
		"glaredb-spark-lineitem-v1-partitioned": 1000,
		"glaredb-spark-lineitem-v2-versioned":   2000,
	}
	for i, f := range Fixtures {
		tbl := l.AddFixture(t, f, "fx.t"+string(rune('a'+i)))
		if got := ScanRows(t, tbl); got != want[f] {
			t.Errorf("%s: %d rows, want %d", f, got, want[f])
		}
	}
}

func TestStrayAndRef(t *testing.T) {
	l := NewLakehouse(t, t.TempDir(), "lake")
	tbl := Append(t, l.CreateTable(t, "ns.t", TableOptions{}), 2, 10, 1)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := WriteStray(t, tbl, "data/x/stray.parquet", 12, at)
	fi, err := os.Stat(p)
	if err != nil || fi.Size() != 12 || !fi.ModTime().Equal(at) {
		t.Fatalf("stray %s: %v %v", p, fi, err)
	}
	first := tbl.Metadata().Snapshots()[0].SnapshotID
	tbl = l.SetRef(t, tbl, "keep", "tag", first, 1000, 0, 0)
	found := false
	for name, r := range tbl.Metadata().Refs() {
		if name == "keep" && r.SnapshotID == first && r.MaxRefAgeMs != nil && *r.MaxRefAgeMs == 1000 {
			found = true
		}
	}
	if !found {
		t.Fatal("tag not set")
	}
}

// A copy with renumbered snapshots (lakehouse.SnapshotIDs) names the new
// ids everywhere: snapshots, parents, main, the manifest lists' added
// snapshot ids and their entries' ids; every snapshot still reads its rows.
func TestCopyAsSnapshotIDs(t *testing.T) {
	l := NewLakehouse(t, t.TempDir(), "lake")
	tbl := Append(t, l.CreateTable(t, "ns.t", TableOptions{Partitioned: true}), 3, 10, 2)
	tbl = DeletePositions(t, tbl, iceberg.EqualTo(iceberg.Reference("event_id"), int64(4)))
	ids := SnapshotIDs(tbl)
	respell := map[int64]int64{}
	for _, id := range ids[1:] { // all but the first: a positive parent of a negative child
		respell[id] = -id
	}
	rows := map[int64]int64{}
	for _, id := range ids {
		rows[id] = scanAt(t, tbl, id)
	}
	out := l.CopyAs(t, tbl, "ns.copy", lakehouse.SnapshotIDs(respell))
	head := tbl.CurrentSnapshot().SnapshotID
	if got := out.CurrentSnapshot().SnapshotID; got != -head {
		t.Fatalf("head %d, want %d", got, -head)
	}
	for name, ref := range out.Metadata().Refs() {
		if name == table.MainBranch && ref.SnapshotID != -head {
			t.Fatalf("main at %d, want %d", ref.SnapshotID, -head)
		}
	}
	fsys, err := out.FS(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range ids {
		id := old
		if n, ok := respell[old]; ok {
			id = n
		}
		s := out.SnapshotByID(id)
		if s == nil {
			t.Fatalf("no snapshot %d (was %d)", id, old)
		}
		if p := tbl.SnapshotByID(old).ParentSnapshotID; p != nil {
			want := *p
			if n, ok := respell[want]; ok {
				want = n
			}
			if s.ParentSnapshotID == nil || *s.ParentSnapshotID != want {
				t.Errorf("snapshot %d: parent %v, want %d", id, s.ParentSnapshotID, want)
			}
		}
		mans, err := s.Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		added := false
		for _, m := range mans {
			if _, ok := respell[m.SnapshotID()]; ok {
				t.Errorf("snapshot %d lists manifest %s added by the old id %d", id, m.FilePath(), m.SnapshotID())
			}
			added = added || m.SnapshotID() == id
			entries, err := m.FetchEntries(fsys, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if _, ok := respell[e.SnapshotID()]; ok {
					t.Errorf("manifest %s: an entry names the old id %d", m.FilePath(), e.SnapshotID())
				}
			}
		}
		if !added {
			t.Errorf("snapshot %d added no manifest of its own", id)
		}
		if got := scanAt(t, out, id); got != rows[old] {
			t.Errorf("snapshot %d reads %d rows, %d before", id, got, rows[old])
		}
	}
}

func scanAt(t *testing.T, tbl *table.Table, id int64) int64 {
	t.Helper()
	at, err := tbl.Scan(table.WithSnapshotID(id)).ToArrowTable(t.Context())
	if err != nil {
		t.Fatalf("scan snapshot %d: %v", id, err)
	}
	defer at.Release()
	return at.NumRows()
}
