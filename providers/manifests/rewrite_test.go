package manifests

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

// A manifest rewrite whose staged snapshot does not hold exactly the
// current live files is not committed: the check names the difference,
// the table's metadata stays as it was and the staged manifests are
// removed. Each case edits the staged snapshot as a producer with a bug
// would have written it.
func TestRewriteManifestsCheckAbortsAWrongSnapshot(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, fs iceio.IO, meta table.Metadata, snap table.Snapshot, ms []iceberg.ManifestFile) []iceberg.ManifestFile
		want string
	}{
		{
			name: "drop a live file",
			edit: func(t *testing.T, fs iceio.IO, meta table.Metadata, snap table.Snapshot, ms []iceberg.ManifestFile) []iceberg.ManifestFile {
				// The merged manifest again, without its last entry (and
				// the original gone: the producer never wrote it).
				var out []iceberg.ManifestFile
				for _, m := range ms {
					if m.SnapshotID() != snap.SnapshotID || m.ManifestContent() != iceberg.ManifestContentData {
						out = append(out, m)
						continue
					}
					entries, err := m.FetchEntries(fs, true)
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("dropping %s", entries[len(entries)-1].DataFile().FilePath())
					nm, err := testkit.WriteManifest(t, fs, meta, snap, "short", entries[:len(entries)-1]...)
					if err != nil {
						t.Fatal(err)
					}
					if err := fs.Remove(m.FilePath()); err != nil {
						t.Fatal(err)
					}
					out = append(out, nm)
				}
				return out
			},
			want: "commit check: 1 live data file missing from the new snapshot: ",
		},
		{
			name: "add a foreign file",
			edit: func(t *testing.T, fs iceio.IO, meta table.Metadata, snap table.Snapshot, ms []iceberg.ManifestFile) []iceberg.ManifestFile {
				entries, err := ms[0].FetchEntries(fs, true)
				if err != nil {
					t.Fatal(err)
				}
				df := testkit.DataFileLike(t, meta, entries[0].DataFile(), "file:///elsewhere/foreign.parquet", 10)
				nm, err := testkit.WriteManifest(t, fs, meta, snap, "foreign", testkit.Added(snap, df))
				if err != nil {
					t.Fatal(err)
				}
				return append(ms, nm)
			},
			want: "commit check: 1 data file in the new snapshot that the change does not add: file:///elsewhere/foreign.parquet",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l := testkit.NewOrders(t)
			tbl := l.Create(nil)
			for i := range int64(6) {
				tbl = testkit.AppendIDs(t, tbl, i*10, 10)
			}
			before := testkit.FilesUnder(t, tbl)
			_, res, err := rewriteTampered(ctx, tbl, 8<<20, func(fs iceio.IO, staged table.Metadata) error {
				snap := *staged.CurrentSnapshot()
				return testkit.RewriteManifestList(t, fs, staged, snap, func(ms []iceberg.ManifestFile) []iceberg.ManifestFile {
					return tc.edit(t, fs, staged, snap, ms)
				})
			})
			if !errors.Is(err, reach.ErrCommitCheck) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want the commit check naming %q, got: %v", tc.want, err)
			}
			t.Log(err)
			if res.Committed || len(res.StagedKept) > 0 {
				t.Fatalf("result %+v", res)
			}
			cur := l.Load()
			if cur.MetadataLocation() != tbl.MetadataLocation() {
				t.Fatalf("metadata moved from %s to %s", tbl.MetadataLocation(), cur.MetadataLocation())
			}
			after := testkit.FilesUnder(t, cur)
			for p := range after {
				if !before[p] {
					t.Errorf("left behind: %s", p)
				}
			}
			for p := range before {
				if !after[p] {
					t.Errorf("lost: %s", p)
				}
			}
			testkit.MustEqualIDs(t, testkit.OrderIDs(t, cur), testkit.Seq(0, 60))
		})
	}
}

func TestRewriteManifests(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.Create(nil)
	for i := range int64(6) {
		tbl = testkit.AppendIDs(t, tbl, i*10, 10)
	}
	next, res, err := Rewrite(ctx, tbl, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed || res.FilesBefore != 6 || res.FilesAfter >= 6 {
		t.Fatalf("result %+v", res)
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, next), testkit.Seq(0, 60))
	_, res, err = Rewrite(ctx, next, 8<<20)
	if err != nil || res.Committed {
		t.Fatalf("second rewrite: %+v %v", res, err)
	}
}

func TestRewriteManifestsConflictRemovesStagedFiles(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.Create(nil)
	for i := range int64(6) {
		tbl = testkit.AppendIDs(t, tbl, i*10, 10)
	}
	stale := tbl
	testkit.AppendIDs(t, l.Load(), 60, 4)
	before := testkit.FilesUnder(t, stale)
	_, res, err := Rewrite(ctx, stale, 8<<20)
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("want store.ErrConflict, got %v", err)
	}
	if res.StagedRemoved == 0 {
		t.Fatalf("nothing removed: %+v", res)
	}
	for p := range testkit.FilesUnder(t, stale) {
		if !before[p] {
			t.Errorf("failed manifest rewrite left %s behind", p)
		}
	}
	cur := l.Load()
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, cur), testkit.Seq(0, 64))
	testkit.AssertAllReferencedExist(t, cur)
}
