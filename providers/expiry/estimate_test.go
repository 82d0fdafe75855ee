package expiry_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/testkit"
)

type sizeSet map[string]int64

func sizesUnder(t *testing.T, dir string) sizeSet {
	t.Helper()
	out := sizeSet{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".metadata.json") {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Differential: Estimate's files and bytes equal what iceberg-go's own
// ExpireSnapshots removes from disk when it expires the same snapshots, on a
// history with appends and an overwrite (whose old files become garbage).
func TestEstimateExpiryMatchesIcebergGo(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 3, 20, 1)
	at, err := lakehouse.EventRecords(tbl.Schema(), 5000, 30, testkit.Day0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tbl, err = tbl.OverwriteTable(ctx, at, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl = testkit.Append(t, tbl, 2, 20, 1)
	snaps := tbl.Metadata().Snapshots()
	if len(snaps) != 6 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	var expire []int64
	for _, s := range snaps[:4] { // everything before the last two
		expire = append(expire, s.SnapshotID)
	}

	files, bytes, err := estimate(ctx, t, l.Reload(t, "ns.t"), expire, nil)
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("nothing to free after an overwrite")
	}

	before := sizesUnder(t, tbl.Location())
	txn := tbl.NewTransaction()
	if err := txn.ExpireSnapshots(table.WithOlderThan(0), table.WithRetainLast(2)); err != nil {
		t.Fatal(err)
	}
	after, err := txn.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var kept []int64
	for _, s := range after.Metadata().Snapshots() {
		kept = append(kept, s.SnapshotID)
	}
	if !slices.Equal(kept, []int64{snaps[4].SnapshotID, snaps[5].SnapshotID}) {
		t.Fatalf("iceberg-go kept %v", kept)
	}
	remaining := sizesUnder(t, tbl.Location())
	var gotFiles, gotBytes int64
	for p, size := range before {
		if _, ok := remaining[p]; !ok {
			gotFiles++
			gotBytes += size
		}
	}
	if files != gotFiles || bytes != gotBytes {
		t.Fatalf("estimate %d files / %d bytes, iceberg-go deleted %d / %d", files, bytes, gotFiles, gotBytes)
	}
	t.Logf("expiring 4 snapshots frees %d files, %d bytes", files, bytes)
}

// With compaction inputs: expiring the current snapshot (pushed out by the
// plan's own compaction commit) frees the inputs, not the other files.
func TestEstimateExpiryCompactInputs(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 3, 20, 1)
	var ids []int64
	for _, s := range tbl.Metadata().Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	data := testkit.DataFiles(t, tbl)
	inputs := map[string]bool{data[0]: true, data[1]: true}
	all, _, err := estimate(ctx, t, l.Reload(t, "ns.t"), ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	withInputs, _, err := estimate(ctx, t, l.Reload(t, "ns.t"), ids, func(p string) bool { return inputs[p] })
	if err != nil {
		t.Fatal(err)
	}
	// Without compaction nothing's data goes (the current files survive in
	// the new snapshot); with it, exactly the two inputs go too.
	if withInputs-all != 2 {
		t.Fatalf("with compaction inputs %d files, without %d: want a difference of 2", withInputs, all)
	}
}

// estimate is the plan's figure for expiring ids of tbl (expiry.Estimate on
// the table as loaded).
func estimate(ctx context.Context, t *testing.T, tbl *table.Table, ids []int64, compactInputs func(string) bool) (files, bytes int64, err error) {
	t.Helper()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	freed, err := expiry.Estimate(ctx, fsys, tbl.Metadata(), ids, compactInputs)
	return freed.Files, freed.Bytes, err
}
