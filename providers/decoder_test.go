package providers

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/testkit"
)

// A file is deleted only on the word of iceberg-go's own reader (issue 44
// item 2): the plan's walks (its observation, sweep, expiry estimate and
// other tables' references) decode manifests with the fast decoder
// (manifestread), and apply's deletions, a sweep's re-check, other
// tables' references and an expiry's reachable sets, decode every
// manifest with iceberg-go's, in the same session.
func TestApplyDeletesOnIcebergGoReading(t *testing.T) {
	ctx := context.Background()
	now := time.Now().Add(72 * time.Hour).UTC()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 4, 10, 2)
	stray := filepath.Join(tbl.Location(), "data", "a-stray.parquet")
	testkit.WriteFileAt(t, stray, 100, now.Add(-10*24*time.Hour))
	pol := testkit.OrphanPolicy("lake.ns.t")
	pol.OrphanFiles.MinFilesForRatio.Value = 0
	pol.SnapshotRetention = config.RetentionPolicy{
		Declared:     true,
		MaxAge:       config.Setting[time.Duration]{Value: 24 * time.Hour, Set: true},
		MinSnapshots: config.Setting[int]{Value: 1, Set: true},
	}
	sess := Open(sessionConfig(l), Options{Now: func() time.Time { return now }})
	t.Cleanup(func() { _ = sess.Close() })

	var planned reach.DecodeCounts
	o, err := sess.ObservePlan(reach.CountDecodes(ctx, &planned), pol)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	tp, err := o.Plan(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	if planned.Fast.Load() == 0 || planned.Verified.Load() != 0 || planned.FastLists.Load() == 0 || planned.VerifiedLists.Load() != 0 {
		t.Fatalf("the plan decoded %d manifests fast, %d with iceberg-go (%d fallen back), %d lists fast, %d with iceberg-go; want all fast",
			planned.Fast.Load(), planned.Verified.Load(), planned.Fallback.Load(), planned.FastLists.Load(), planned.VerifiedLists.Load())
	}
	types := map[diff.ActionType]diff.Action{}
	for _, a := range tp.Actions {
		types[a.Type] = a
	}
	for _, typ := range []diff.ActionType{diff.RemoveOrphanFiles, diff.ExpireSnapshots} {
		a, ok := types[typ]
		if !ok {
			t.Fatalf("no %s planned: %+v, refusals %+v", typ, tp.Actions, tp.Refusals)
		}
		h, err := sess.Table(ctx, pol.Address)
		if err != nil {
			t.Fatal(err)
		}
		var applied reach.DecodeCounts
		ex, _ := sess.Executor(typ)
		_, res, err := ex.Execute(reach.CountDecodes(ctx, &applied), ExecRequest{Table: h, Policy: pol, Actions: []diff.Action{a},
			Now: func() time.Time { return now }})
		if err != nil {
			t.Fatalf("%s: %v (%+v)", typ, err, res)
		}
		if applied.Fast.Load() != 0 || applied.Verified.Load() == 0 || applied.FastLists.Load() != 0 {
			t.Errorf("%s at apply decoded %d manifests fast and %d with iceberg-go, %d lists fast; want iceberg-go's alone",
				typ, applied.Fast.Load(), applied.Verified.Load(), applied.FastLists.Load())
		}
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("the stray was not removed: %v", err)
	}
}
