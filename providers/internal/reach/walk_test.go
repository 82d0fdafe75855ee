package reach_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/testkit"
)

// A manifest that cannot be read fails the whole walk (never a partial
// referenced set), whichever decoding worker meets it.
func TestWalkFailsOnUnreadableManifest(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 12, 10, 1)
	fsys, ms := testkit.CurrentManifests(t, tbl)
	if len(ms) < 10 {
		t.Fatalf("%d manifests", len(ms))
	}
	victim := strings.TrimPrefix(ms[len(ms)/2].FilePath(), "file://")
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	refs := 0
	err := reach.Walk(ctx, reach.Spec{Meta: tbl.Metadata(), FS: fsys, Snapshots: reach.AllSnapshots(tbl.Metadata()), Consumers: []reach.Consumer{{WithDeleted: true, File: func(reach.File) error { refs++; return nil }}}})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(victim)) {
		t.Fatalf("walk with a missing manifest: %v (after %d references)", err, refs)
	}
}

// The one walk serves each consumer exactly what a walk of its own gives
// it: consumers riding together see the same files as alone; a subset of
// snapshots reaches only their lists, manifests and entries; DELETED
// entries go only to consumers that take them; SkipEntries skips one
// manifest's entries for that consumer alone; Listed names every
// (manifest, snapshot) pair; a snapshot not in the metadata fails the walk.
func TestWalkConsumers(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 4, 20, 2)
	tbl = testkit.DeletePositions(t, tbl, iceberg.LessThan(iceberg.Reference("event_id"), int64(5)))
	at, err := lakehouse.EventRecords(tbl.Schema(), 5000, 40, testkit.Day0, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	if tbl, err = tbl.OverwriteTable(ctx, at, 100, nil); err != nil { // DELETED entries
		t.Fatal(err)
	}
	tbl = testkit.Append(t, tbl, 2, 20, 2)
	md := tbl.Metadata()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := reach.AllSnapshots(md)
	type seen struct {
		files   []string
		deleted int
		sizes   map[string]int64
	}
	collect := func(s *seen, withDeleted bool) reach.Consumer {
		s.sizes = map[string]int64{}
		return reach.Consumer{WithDeleted: withDeleted, ListSizes: true, File: func(f reach.File) error {
			s.files = append(s.files, f.Category+" "+f.Path)
			s.sizes[f.Path] = f.Size
			if f.Deleted {
				s.deleted++
			}
			return nil
		}}
	}
	walk := func(ids []int64, cs ...reach.Consumer) {
		t.Helper()
		if err := reach.Walk(ctx, reach.Spec{Meta: md, FS: fsys, Snapshots: ids, Consumers: cs}); err != nil {
			t.Fatal(err)
		}
	}
	var live, withDel, liveAlone, delAlone seen
	walk(all, collect(&live, false), collect(&withDel, true))
	walk(all, collect(&liveAlone, false))
	walk(all, collect(&delAlone, true))
	if !slices.Equal(live.files, liveAlone.files) || !slices.Equal(withDel.files, delAlone.files) {
		t.Fatalf("riding consumers saw %d and %d files, alone %d and %d", len(live.files), len(withDel.files), len(liveAlone.files), len(delAlone.files))
	}
	if live.deleted != 0 || withDel.deleted == 0 || len(withDel.files) != len(live.files)+withDel.deleted {
		t.Fatalf("live %d files (%d deleted), with deleted %d files (%d deleted)", len(live.files), live.deleted, len(withDel.files), withDel.deleted)
	}
	lists := 0
	for p, size := range live.sizes {
		if strings.Contains(p, "snap-") {
			lists++
			if size <= 0 {
				t.Errorf("manifest list %s: size %d with ListSizes", p, size)
			}
		}
	}
	if lists != len(all) {
		t.Errorf("%d manifest lists for %d snapshots", lists, len(all))
	}

	// The first snapshot alone: its list, its one manifest, its files.
	var first seen
	walk(all[:1], collect(&first, false))
	cats := map[string]int{}
	for _, f := range first.files {
		cats[strings.Fields(f)[0]]++
	}
	if cats[reach.CategoryManifestList] != 1 || cats[reach.CategoryManifest] != 1 || cats[reach.CategoryData] == 0 || cats[reach.CategoryDelete] != 0 {
		t.Errorf("first snapshot alone: %v", cats)
	}
	var none seen
	walk(nil, collect(&none, true))
	if len(none.files) != 0 {
		t.Errorf("no snapshot walked, %d files", len(none.files))
	}

	// SkipEntries for every manifest: the skipping consumer sees lists
	// and manifests only, the other consumer everything.
	var skipper []string
	var other seen
	skip := reach.Consumer{File: func(f reach.File) error {
		skipper = append(skipper, f.Category)
		if f.Category == reach.CategoryManifest {
			return reach.SkipEntries
		}
		return nil
	}}
	walk(all, skip, collect(&other, false))
	for _, c := range skipper {
		if c == reach.CategoryData || c == reach.CategoryDelete {
			t.Fatalf("skipped manifests' entries reached the consumer: %v", skipper)
		}
	}
	if !slices.Equal(other.files, live.files) {
		t.Errorf("the other consumer lost files to SkipEntries: %d, want %d", len(other.files), len(live.files))
	}

	// Listed: the pairs of the manifest lists themselves.
	pairs := map[[2]int64]bool{}
	var ordinals []string
	walk(all, reach.Consumer{
		Listed: func(m int, id int64) { pairs[[2]int64{int64(m), id}] = true },
		File: func(f reach.File) error {
			if f.Category == reach.CategoryManifest {
				ordinals = append(ordinals, f.Path)
			}
			return reach.SkipEntries
		},
	})
	want := 0
	for _, id := range all {
		ms, err := md.SnapshotByID(id).Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		want += len(ms)
	}
	if len(pairs) != want || len(ordinals) == 0 {
		t.Errorf("%d (manifest, snapshot) pairs, want %d", len(pairs), want)
	}

	err = reach.Walk(ctx, reach.Spec{Meta: md, FS: fsys, Snapshots: []int64{12345}, Consumers: []reach.Consumer{collect(&seen{}, false)}})
	if err == nil || !strings.Contains(err.Error(), "12345") {
		t.Fatalf("unknown snapshot: %v", err)
	}
	// A consumer's error stops the walk.
	stop := errors.New("stop")
	n := 0
	err = reach.Walk(ctx, reach.Spec{Meta: md, FS: fsys, Snapshots: all, Consumers: []reach.Consumer{{File: func(f reach.File) error {
		if n++; f.Category == reach.CategoryData {
			return stop
		}
		return nil
	}}}})
	if !errors.Is(err, stop) {
		t.Fatalf("consumer error: %v after %d files", err, n)
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
	fsys, ms := testkit.CurrentManifests(t, tbl)
	var want []string
	for _, m := range ms {
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
		err := reach.ReadManifests(ctx, fsys, ms, func(ord int, e iceberg.ManifestEntry) error {
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
	err = reach.ReadManifests(ctx, fsys, ms, func(int, iceberg.ManifestEntry) error {
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
			done <- reach.ReadManifests(cctx, fsys, ms, func(int, iceberg.ManifestEntry) error {
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
