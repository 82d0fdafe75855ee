package expiry_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/testkit"
)

// Expiry never deletes a file that was live when the apply began, unless
// this apply's own commit replaced it (issue 32): another writer's commit
// that released a file after the apply began leaves it for the next run.
// Without KeepLive the same expiry deletes it, and it does when the
// releasing snapshot is one of the apply's own.
func TestExpireKeepsFilesLiveWhenTheApplyBegan(t *testing.T) {
	for _, tt := range []struct {
		name       string
		keep, ours bool
		wantKept   bool
	}{
		{name: "another writer released it", keep: true, wantKept: true},
		{name: "this apply's own commit replaced it", keep: true, ours: true},
		{name: "no KeepLive", keep: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			l := testkit.NewOrders(t)
			began := l.History(nil, 4, 10*24*time.Hour)
			released := liveFiles(ctx, t, began)[0]
			src := testkit.LocalPath(t, released.FilePath())
			// The other writer rewrites the file into a copy of itself.
			copyPath := filepath.Join(filepath.Dir(src), "rewritten-"+filepath.Base(src))
			raw, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(copyPath, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			tbl := testkit.CommitDataFileAt(t, began, released, copyPath, released)
			other := tbl.CurrentSnapshot().SnapshotID
			ids := testkit.SnapshotIDs(tbl)
			expire := slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return id == other })

			spec := expiry.Spec{SnapshotIDs: expire}
			if tt.keep {
				spec.KeepLive = &expiry.KeepLive{Began: began}
				if tt.ours {
					spec.KeepLive.Own = []int64{other}
				}
			}
			_, res, err := expiry.Expire(ctx, l.Cat, tbl, spec)
			if err != nil {
				t.Fatal(err)
			}
			withheld := slices.ContainsFunc(res.Skipped, func(s string) bool {
				return strings.Contains(s, "reaches "+released.FilePath()+", live when this apply began")
			})
			if withheld != tt.wantKept {
				t.Errorf("skipped %v: the snapshots reaching the kept file must be named, and only then", res.Skipped)
			}
			if want := len(expire) - len(res.Skipped); res.SnapshotsExpired != want || (!tt.wantKept && want != len(expire)) {
				t.Fatalf("expired %d snapshots, want %d: %+v", res.SnapshotsExpired, want, res)
			}
			_, statErr := os.Stat(src)
			if kept := statErr == nil; kept != tt.wantKept {
				t.Fatalf("released file kept = %v, want %v (%+v)", kept, tt.wantKept, res)
			}
			if res.FilesDeleted == 0 {
				t.Errorf("nothing deleted: the expired snapshots' manifest lists go either way: %+v", res)
			}
			if tt.wantKept {
				// The next run began after the other writer's commit: the
				// file is no longer live there, and its expiry deletes it.
				next := l.Load()
				rest := slices.DeleteFunc(testkit.SnapshotIDs(next), func(id int64) bool { return id == other })
				_, res, err := expiry.Expire(ctx, l.Cat, next, expiry.Spec{SnapshotIDs: rest, KeepLive: &expiry.KeepLive{Began: next}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(src); !os.IsNotExist(err) || len(res.Skipped) > 0 {
					t.Errorf("the next run must delete the file the other writer released: %v %+v", err, res)
				}
			}
			testkit.AssertAllReferencedExist(t, l.Load())
			testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 50))
		})
	}
}

// When another writer committed during the apply, what this apply's own
// compaction replaced (the DELETED entries of the snapshots Compact
// reports) still goes in the same expiry; nothing is withheld.
func TestExpireDeletesWhatTheApplysOwnCompactionReplaced(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	began := l.History(nil, 4, 10*24*time.Hour)
	inputs := liveFiles(ctx, t, began)
	tbl := testkit.AppendIDs(t, began, 50, 10) // another writer
	tbl, cres, err := compact.Compact(ctx, tbl, compact.CompactSpec{Action: smallFilesCompaction(t, tbl)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cres.Snapshots) != 1 || tbl.CurrentSnapshot().SnapshotID != cres.Snapshots[0] {
		t.Fatalf("Compact reports snapshots %v, head %d", cres.Snapshots, tbl.CurrentSnapshot().SnapshotID)
	}
	ids := testkit.SnapshotIDs(tbl)
	expire := ids[:len(ids)-1]
	_, res, err := expiry.Expire(ctx, l.Cat, tbl, expiry.Spec{SnapshotIDs: expire,
		KeepLive: &expiry.KeepLive{Began: began, Own: cres.Snapshots}})
	if err != nil {
		t.Fatal(err)
	}
	if res.SnapshotsExpired != len(expire) || len(res.Skipped) > 0 {
		t.Fatalf("expired %d of %d, skipped %v", res.SnapshotsExpired, len(expire), res.Skipped)
	}
	for _, f := range inputs {
		if _, err := os.Stat(testkit.LocalPath(t, f.FilePath())); !os.IsNotExist(err) {
			t.Errorf("%s, replaced by the apply's own compaction, survived: %v", f.FilePath(), err)
		}
	}
	testkit.AssertAllReferencedExist(t, l.Load())
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 60))
}
