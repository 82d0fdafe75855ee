package reach_test

import (
	"context"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/testkit"
)

// A paced walk pauses once after every Every manifest entries read, for
// Pause each time, and a walk without a pace (or with a zero pause) never
// pauses. The pauses are counted with an injected sleeper, not timed.
func TestWalkPacesManifestReads(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 7, 20, 2)
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	walk := func(ctx context.Context) (entries int) {
		t.Helper()
		err := reach.Walk(ctx, reach.Spec{Meta: tbl.Metadata(), FS: fsys, Snapshots: reach.AllSnapshots(tbl.Metadata()),
			Consumers: []reach.Consumer{{WithDeleted: true, File: func(f reach.File) error {
				if f.Category == reach.CategoryData || f.Category == reach.CategoryDelete {
					entries++
				}
				return nil
			}}}})
		if err != nil {
			t.Fatal(err)
		}
		return entries
	}
	var pauses []time.Duration
	sleep := func(_ context.Context, d time.Duration) { pauses = append(pauses, d) }
	entries := walk(reach.WithPace(ctx, reach.Pace{Every: 2, Pause: 40 * time.Millisecond, Sleep: sleep}))
	if entries < 6 {
		t.Fatalf("%d entries read: too few to pace", entries)
	}
	if len(pauses) != entries/2 {
		t.Fatalf("%d pauses over %d entries, want one after every 2 (%d)", len(pauses), entries, entries/2)
	}
	for _, d := range pauses {
		if d != 40*time.Millisecond {
			t.Fatalf("paused %s, want 40ms", d)
		}
	}
	pauses = nil
	walk(ctx)
	walk(reach.WithPace(ctx, reach.Pace{Every: 3, Sleep: sleep}))
	if len(pauses) != 0 {
		t.Fatalf("%d pauses without a pace", len(pauses))
	}
}
