package providers

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/testkit"
)

// The one-walk expiry index (ObservePlan) must give exactly the figures of
// the separate walks (expiry.EstimateTable with compact.Inputs), for
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
	sel := diff.SelectionFor(compacting(testkit.Policy("lake.ns.t")))
	sess := sessionFor(t, l)
	st, err := sess.Observe(ctx, compacting(testkit.Policy("lake.ns.t")))
	if err != nil {
		t.Fatal(err)
	}
	// Without compaction in the policy the same files are aggregated, per
	// partition, without candidate sizes (only diff's compaction uses them).
	noCompaction := testkit.Policy("lake.ns.t")
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
		pol := testkit.Policy("lake.ns.t")
		if orphans {
			pol = testkit.OrphanPolicy("lake.ns.t")
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
						if compactIn, err = compact.Inputs(ctx, tbl, sel, gs, sess.now()); err != nil {
							t.Fatal(err)
						}
					}
					want, err := expiry.EstimateTable(ctx, tbl, expire, compactIn)
					if err != nil {
						t.Fatal(err)
					}
					got, err := o.estimateExpiry(ctx, expire, gs)
					if err != nil {
						t.Fatal(err)
					}
					wantF, wantB, gotF, gotB := want.Files, want.Bytes, got.Files, got.Bytes
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

// A manifest that cannot be read fails the plan's observation (the walk
// itself is tested in internal/reach).
func TestObservePlanFailsOnUnreadableManifest(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 12, 10, 1)
	_, ms := testkit.CurrentManifests(t, tbl)
	victim := strings.TrimPrefix(ms[len(ms)/2].FilePath(), "file://")
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	sess := sessionFor(t, l)
	if _, err := sess.ObservePlan(ctx, testkit.OrphanPolicy("lake.ns.t")); err == nil {
		t.Fatal("ObservePlan with a missing manifest succeeded")
	}
}
