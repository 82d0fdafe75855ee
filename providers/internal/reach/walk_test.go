package reach_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/avro/ocf"

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

// historyTable is a partitioned table with appends, position deletes, an
// overwrite (DELETED entries) and appends after it.
func historyTable(t *testing.T) *table.Table {
	t.Helper()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 4, 20, 2)
	tbl = testkit.DeletePositions(t, tbl, iceberg.LessThan(iceberg.Reference("event_id"), int64(5)))
	at, err := lakehouse.EventRecords(tbl.Schema(), 5000, 40, testkit.Day0, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	if tbl, err = tbl.OverwriteTable(context.Background(), at, 100, nil); err != nil { // DELETED entries
		t.Fatal(err)
	}
	return testkit.Append(t, tbl, 2, 20, 2)
}

// The one walk serves each consumer exactly what a walk of its own gives
// it: consumers riding together see the same files as alone; a subset of
// snapshots reaches only their lists, manifests and entries; DELETED
// entries go only to consumers that take them; SkipEntries skips one
// manifest's entries for that consumer alone; Listed names every
// (manifest, snapshot) pair; a snapshot not in the metadata fails the walk.
func TestWalkConsumers(t *testing.T) {
	ctx := context.Background()
	tbl := historyTable(t)
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

// The fast decoder (DecodeFast) hands the consumers the same files, in the
// same order, with the same entries as iceberg-go's reader, on a table with
// a partition spec, an overwrite (DELETED entries), position deletes and
// more appends; a manifest it will not read (a header key past its bound,
// which iceberg-go reads) goes to iceberg-go's reader, whose answer is the
// walk's.
func TestWalkDecodersAgree(t *testing.T) {
	ctx := context.Background()
	tbl := historyTable(t)
	if n := testkit.SameOnBothDecoders(t, tbl); n < 10 {
		t.Fatalf("compared %d entries", n)
	}
	// Without a consumer of DELETED entries, the fast walk does not read
	// the overwrite's manifest of DELETED entries alone, and hands over the
	// same files.
	live := func(dec reach.Decoder, counts *reach.DecodeCounts) []string {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		err = reach.Walk(reach.CountDecodes(ctx, counts), reach.Spec{Meta: tbl.Metadata(), FS: fsys, Snapshots: reach.AllSnapshots(tbl.Metadata()), Decoder: dec,
			Consumers: []reach.Consumer{{File: func(f reach.File) error {
				out = append(out, fmt.Sprintf("%s %s %d %d", f.Category, f.Path, f.Size, f.Snapshot))
				return nil
			}}}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var slow, fast reach.DecodeCounts
	if want, got := live(reach.DecodeVerified, &slow), live(reach.DecodeFast, &fast); !slices.Equal(got, want) {
		t.Fatalf("live files: fast walk %v, iceberg-go's %v", got, want)
	}
	if fast.Skipped.Load() == 0 || slow.Skipped.Load() != 0 || fast.Fast.Load()+fast.Skipped.Load() != slow.Verified.Load() {
		t.Fatalf("fast walk: %d read, %d skipped; iceberg-go's: %d read, %d skipped",
			fast.Fast.Load(), fast.Skipped.Load(), slow.Verified.Load(), slow.Skipped.Load())
	}

	// A manifest whose header carries a key longer than manifestread takes.
	fsys, ms := testkit.CurrentManifests(t, tbl)
	victim := strings.TrimPrefix(ms[0].FilePath(), "file://")
	addHeaderKey(t, victim, strings.Repeat("k", 2000))
	var counts reach.DecodeCounts
	var paths []string
	err := reach.Walk(reach.CountDecodes(ctx, &counts), reach.Spec{Meta: tbl.Metadata(), FS: fsys, Snapshots: []int64{tbl.CurrentSnapshot().SnapshotID}, Decoder: reach.DecodeFast,
		Consumers: []reach.Consumer{{File: func(f reach.File) error {
			paths = append(paths, f.Path)
			return nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	if counts.Fallback.Load() != 1 || counts.Verified.Load() != 1 {
		t.Fatalf("fallen back %d, iceberg-go read %d manifests; want the one", counts.Fallback.Load(), counts.Verified.Load())
	}
	want := testkit.Reachable(t, tbl, tbl.CurrentSnapshot().SnapshotID)
	n := 0
	for _, ps := range want {
		n += len(ps)
	}
	slices.Sort(paths)
	if got := slices.Compact(paths); len(got) != n {
		t.Fatalf("the walk with a fallback reached %d files, iceberg-go's %d", len(got), n)
	}
}

// addHeaderKey rewrites the Avro container file p with one more metadata
// key, every record as it was.
func addHeaderKey(t *testing.T, p, key string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := ocf.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string][]byte{key: []byte("v")}
	for k, v := range rd.Metadata() {
		if !strings.HasPrefix(k, "avro.") {
			meta[k] = v
		}
	}
	var out bytes.Buffer
	w, err := ocf.NewWriter(&out, rd.Schema(), ocf.WithMetadata(meta), ocf.WithSchema(rd.Schema().String()))
	if err != nil {
		t.Fatal(err)
	}
	for {
		var rec any
		if err := rd.Decode(&rec); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if err := w.Encode(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
