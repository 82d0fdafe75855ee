package inspect

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// Inspect works on a table no block manages, with real figures and
// recommendations for each kind of debt it carries.
func TestInspectUnmanagedTable(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 12, 10, 3)
	tbl = l.Backdate(t, tbl, 9*24*time.Hour)
	tbl = testkit.Append(t, tbl, 2, 10, 3)
	// The session below runs on the wall clock (iceberg-go stamps the
	// commits with it), so the strays' ages are measured from it too: a
	// fixed date here made "young" old three days after that date.
	wall := time.Now()
	old := wall.Add(-10 * 24 * time.Hour)
	testkit.WriteFileAt(t, filepath.Join(tbl.Location(), "data", "stray.parquet"), 1000, old)
	testkit.WriteFileAt(t, filepath.Join(tbl.Location(), "data", "young.parquet"), 10, wall)

	cfg := &config.Config{Dir: t.TempDir(), Catalogs: []*config.Catalog{l.ConfigCatalog()}}
	sess := providers.Open(cfg, providers.Options{Now: func() time.Time { return time.Now() }})
	defer sess.Close()
	in, err := Run(ctx, sess, "lake.ns.t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if in.Managed {
		t.Error("no block matches the table, yet it is managed")
	}
	if in.Files.DataFiles != 14 || in.Partitions.Count != 3 || in.Snapshots.Count != 14 {
		t.Errorf("files %d partitions %d snapshots %d", in.Files.DataFiles, in.Partitions.Count, in.Snapshots.Count)
	}
	if in.SmallFileShare != 1 || in.TargetFileSize != config.DefaultTargetFileSize {
		t.Errorf("small share %v target %d", in.SmallFileShare, in.TargetFileSize)
	}
	if in.Snapshots.OldestAgeMs < (9 * 24 * time.Hour).Milliseconds() {
		t.Errorf("oldest age %v", time.Duration(in.Snapshots.OldestAgeMs)*time.Millisecond)
	}
	// Appends only: old snapshots hold their manifest lists, not data.
	if in.OldSnapshotFiles != 13 {
		t.Errorf("old snapshot files = %d, want the 13 older manifest lists", in.OldSnapshotFiles)
	}
	if in.Orphans == nil || in.Orphans.Unreferenced != 2 || in.Orphans.Old != 1 || in.Orphans.OldBytes != 1000 {
		t.Errorf("orphans = %+v (%s)", in.Orphans, in.OrphanError)
	}
	// What it wastes today: the 12 backdated snapshots are past Iceberg's
	// default retention (5d) and hold their manifest lists alone; the old
	// stray is the one old orphan; the 14 small files of 3 partitions fit
	// in one file each, so a scan opens 11 more than it needs.
	w := in.Waste
	if w.ExpirableSnapshots != 12 || w.ExpirableFiles != 12 || w.ExpirableBytes <= 0 {
		t.Errorf("past retention: %d snapshots, %d files, %d bytes; want 12, 12 manifest lists", w.ExpirableSnapshots, w.ExpirableFiles, w.ExpirableBytes)
	}
	if w.OrphanFiles == nil || *w.OrphanFiles != 1 || *w.OrphanBytes != 1000 {
		t.Errorf("waste orphans %v %v, want the old stray (1000 bytes)", w.OrphanFiles, w.OrphanBytes)
	}
	if w.SmallFiles != 14 || w.SmallBytes != in.Files.DataBytes || w.ExtraScanOpens != 11 {
		t.Errorf("small files %d (%d bytes of %d), extra opens %d; want 14, all, 11", w.SmallFiles, w.SmallBytes, in.Files.DataBytes, w.ExtraScanOpens)
	}
	if u := w.Usage(); u.BytesFreed != w.ExpirableBytes+1000 || u.ScanOpensSaved != 11 {
		t.Errorf("waste as a saving: %+v", u)
	}
	if w.USDPerMonth != nil || in.Pricing != nil {
		t.Errorf("a table on local storage priced: %v, %+v", *w.USDPerMonth, in.Pricing)
	}
	var kinds []string
	for _, r := range in.Recommendations {
		kinds = append(kinds, strings.SplitN(r, ":", 2)[0])
	}
	for _, want := range []string{"compact", "expire snapshots", "remove orphan files", "sort order"} {
		if !strings.Contains(strings.Join(kinds, "|"), want) {
			t.Errorf("no %q recommendation in %q", want, in.Recommendations)
		}
	}
	if _, err := json.Marshal(in); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, sess, "lake.ns.nope", Options{}); err == nil {
		t.Error("inspecting a missing table succeeded")
	}
}
