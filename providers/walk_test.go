package providers

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/internal/lakehouse"
	"github.com/iceops/iceops/providers/testkit"
)

// The one-walk expiry index (ObservePlan) must give exactly the figures of
// the separate walks (Session.EstimateExpiry with CompactionInputs), for
// every prefix of the history expired, with and without the plan's
// compaction groups, with and without an orphan scan riding the same walk,
// on a history with appends, an overwrite, position and equality deletes,
// and a tag.
func TestObservePlanExpiryMatchesSeparateWalks(t *testing.T) {
	for _, partitioned := range []bool{true, false} {
		checkObservePlanExpiry(t, partitioned)
	}
}

func checkObservePlanExpiry(t *testing.T, partitioned bool) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: partitioned}), 4, 30, 2)
	at, err := lakehouse.EventRecords(tbl.Schema(), 5000, 40, testkit.Day0, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	if tbl, err = tbl.OverwriteTable(ctx, at, 100, nil); err != nil {
		t.Fatal(err)
	}
	tbl = testkit.Append(t, tbl, 3, 30, 2)
	tbl = testkit.DeletePositions(t, tbl, iceberg.LessThan(iceberg.Reference("event_id"), int64(5010)))
	if !partitioned { // testkit writes equality deletes on unpartitioned tables
		tbl = testkit.DeleteEquality(t, tbl, 5020, 5021)
	}
	tbl = testkit.Append(t, tbl, 2, 30, 2)
	snaps := tbl.Metadata().Snapshots()
	tbl = l.SetRef(t, tbl, "keep", string(table.TagRef), snaps[2].SnapshotID, 0, 0, 0)
	snaps = tbl.Metadata().Snapshots()

	compacting := func(pol *config.Effective) *config.Effective {
		pol.Compaction.Declared = true
		return pol
	}
	sel := diff.SelectionFor(compacting(effective("lake.ns.t")))
	sess := sessionFor(t, l)
	st, err := sess.Observe(ctx, compacting(effective("lake.ns.t")))
	if err != nil {
		t.Fatal(err)
	}
	// Without compaction in the policy the same files are aggregated, per
	// partition, without candidate sizes (only diff's compaction uses them).
	noCompaction := effective("lake.ns.t")
	noCompaction.Compaction.Declared = false
	plain, err := sess.Observe(ctx, noCompaction)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Files != st.Files || len(plain.Partitions) != len(st.Partitions) || plain.Partitions[0].CandidateSizes != nil || plain.Partitions[0].CandidateBytes != st.Partitions[0].CandidateBytes {
		t.Fatalf("observation without compaction: %+v, %d partitions %+v", plain.Files, len(plain.Partitions), plain.Partitions)
	}
	var groups []diff.CompactGroup
	for _, p := range st.Partitions {
		if len(p.CandidateSizes) > 0 {
			groups = append(groups, diff.CompactGroup{SpecID: p.SpecID, Partition: p.Partition})
		}
	}
	if len(groups) == 0 {
		t.Fatal("no compaction group")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, orphans := range []bool{false, true} {
		pol := effective("lake.ns.t")
		if orphans {
			pol = orphanPolicy("lake.ns.t")
		}
		compacting(pol)
		pol.SnapshotRetention = config.RetentionPolicy{Declared: true}
		o, err := sess.ObservePlan(ctx, pol)
		if err != nil {
			t.Fatal(err)
		}
		if o.expiry == nil {
			t.Fatal("no expiry index recorded")
		}
		if orphans && o.State.Orphans == nil {
			t.Fatal("no orphan scan")
		}
		if o.State.Files != st.Files || len(o.State.Partitions) != len(st.Partitions) {
			t.Fatalf("aggregate differs from Observe's: %+v vs %+v", o.State.Files, st.Files)
		}
		checked := 0
		for n := 1; n <= len(snaps); n++ {
			var ids []int64
			for _, s := range snaps[:n] {
				ids = append(ids, s.SnapshotID)
			}
			// also a random subset, to break the prefix pattern
			var sub []int64
			for _, s := range snaps {
				if rng.IntN(2) == 0 {
					sub = append(sub, s.SnapshotID)
				}
			}
			for _, expire := range [][]int64{ids, sub} {
				for _, gs := range [][]diff.CompactGroup{nil, groups, groups[:1]} {
					var compactIn func(string) bool
					if gs != nil {
						if compactIn, err = CompactionInputs(ctx, tbl, sel, gs, sess.now()); err != nil {
							t.Fatal(err)
						}
					}
					wantF, wantB, err := sess.EstimateExpiry(ctx, "lake.ns.t", expire, compactIn)
					if err != nil {
						t.Fatal(err)
					}
					gotF, gotB, err := o.EstimateExpiry(ctx, expire, gs)
					if err != nil {
						t.Fatal(err)
					}
					if gotF != wantF || gotB != wantB {
						t.Fatalf("orphans=%v expire %d of %d snapshots, %d groups: one walk %d files/%d bytes, separate walks %d/%d",
							orphans, len(expire), len(snaps), len(gs), gotF, gotB, wantF, wantB)
					}
					if wantF > 0 {
						checked++
					}
				}
			}
		}
		if checked < 10 {
			t.Fatalf("only %d non-empty cases", checked)
		}
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A manifest that cannot be read fails the whole walk (never a partial
// referenced set), whichever decoding worker meets it.
func TestWalkTableFailsOnUnreadableManifest(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 12, 10, 1)
	fsys, ms := currentManifests(t, tbl)
	if len(ms) < 10 {
		t.Fatalf("%d manifests", len(ms))
	}
	victim := strings.TrimPrefix(ms[len(ms)/2].FilePath(), "file://")
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	refs := 0
	err := walkTable(ctx, walkSpec{md: tbl.Metadata(), fsys: fsys, refs: func(string, string, bool) error { refs++; return nil }})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(victim)) {
		t.Fatalf("walk with a missing manifest: %v (after %d references)", err, refs)
	}
	sess := sessionFor(t, l)
	if _, err := sess.ObservePlan(ctx, orphanPolicy("lake.ns.t")); err == nil {
		t.Fatal("ObservePlan with a missing manifest succeeded")
	}
}

// readManifests must hand entries over in the serial read's order, manifest
// after manifest, however the decoding workers interleave: the aggregate
// bin-packs candidate sizes in that order. One large manifest among small
// ones lets a worker finish several small manifests while the other still
// decodes the large one. An error from the consumer stops the read.
func TestReadManifestsKeepsManifestOrder(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 3, 20, 1)
	tbl, err := lakehouse.AppendEvents(ctx, tbl, 1000, 6000, testkit.Day0, 600, nil) // one manifest, 600 files
	if err != nil {
		t.Fatal(err)
	}
	tbl = testkit.Append(t, tbl, 12, 20, 1)
	fsys, ms := currentManifests(t, tbl)
	todo := make([]manifestRead, len(ms))
	var want []string
	for i, m := range ms {
		todo[i] = manifestRead{ord: i, m: m, discardDeleted: true}
		for e, err := range iceberg.EntriesWithProjection(fsys, m, true, iceberg.ManifestEntryProjection{}) {
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, e.DataFile().FilePath())
		}
	}
	if len(ms) < 16 || len(want) < 600 {
		t.Fatalf("setup: %d manifests, %d entries", len(ms), len(want))
	}
	for round := range 5 {
		var got []string
		last := 0
		err := readManifests(ctx, fsys, todo, func(ord int, e iceberg.ManifestEntry) error {
			if ord < last {
				t.Fatalf("round %d: manifest %d after manifest %d", round, ord, last)
			}
			last = ord
			got = append(got, e.DataFile().FilePath())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: %d entries in another order than the serial read's %d", round, len(got), len(want))
		}
	}
	stop := errors.New("stop")
	n := 0
	err = readManifests(ctx, fsys, todo, func(int, iceberg.ManifestEntry) error {
		if n++; n == 300 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 300 {
		t.Fatalf("consumer error: got %v after %d entries", err, n)
	}
	// Cancelled at many points of the read (the workers and the
	// dispatcher race the consumer): it always returns, with the
	// cancellation. A hang fails after a minute instead of at the test
	// binary's timeout.
	for at := range len(want) + 1 {
		if at > 32 && at%41 != 0 && at < len(want)-3 {
			continue // every early point (the dispatcher still busy), then a sample
		}
		cctx, cancel := context.WithCancel(ctx)
		n := 0
		done := make(chan error, 1)
		go func() {
			done <- readManifests(cctx, fsys, todo, func(int, iceberg.ManifestEntry) error {
				if n++; n == at {
					cancel()
				}
				return nil
			})
		}()
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			t.Fatalf("read cancelled after entry %d did not return", at)
		}
		cancel()
		if at > 0 && at <= len(want) && !errors.Is(err, context.Canceled) {
			t.Fatalf("read cancelled after entry %d: %v", at, err)
		}
	}
}

// currentManifests opens tbl's IO and lists its current snapshot's manifests.
func currentManifests(t *testing.T, tbl *table.Table) (iceio.IO, []iceberg.ManifestFile) {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := tbl.CurrentSnapshot().Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return fsys, ms
}
