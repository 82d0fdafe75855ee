package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/testkit"
)

// Issue 32: expiry never deletes a file that was live when the apply
// began, except what this apply's own rewrite replaced. The apply compacts
// and then expires everything but its own head. Another writer rewrites a
// live file just as the compaction starts (the compaction conflicts and
// retries on the new table, rewriting the other writer's copy): the
// original, released by the other writer, is reachable only from snapshots
// the plan expires. It stays on disk this run, named in the results, and
// the next run deletes it. Rows and every referenced file stay.
func TestExpiryKeepsWhatAnotherWriterReleasedDuringApply(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := sqliteFile(ctx, t)
	createNamespace(ctx, t, be.cat, "ns")
	ident := table.Identifier{"ns", "t"}
	tbl, err := be.cat.CreateTable(ctx, ident, eventsSchema, catalog.WithLocation(be.location("ns", "t")))
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 4; i++ {
		tbl = appendRows(ctx, t, tbl, i*10, 10)
	}
	rows, sum := sumIDs(ctx, t, tbl)
	live := liveDataFiles(ctx, t, tbl)
	released := live[0]
	src := strings.TrimPrefix(released, "file://")

	cfg := writeCorpusConfig(t, be, "ns", `
  compaction {
    strategy        = "binpack"
    min_input_files = 2
  }
  snapshot_retention {
    max_age       = "1d"
    min_snapshots = 1
  }`, "")
	later := time.Now().Add(30 * 24 * time.Hour)
	now := func() time.Time { return later }
	var once sync.Once
	hook := func(ev apply.Event) {
		if ev.Action != string(diff.Compact) || ev.Phase != apply.PhaseStart {
			return
		}
		once.Do(func() {
			// The other writer rewrites the file into a copy of itself.
			cur, err := be.cat.LoadTable(ctx, ident)
			if err != nil {
				t.Error(err)
				return
			}
			tasks, err := cur.Scan().PlanFiles(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			for _, task := range tasks {
				if task.File.FilePath() != released {
					continue
				}
				dst := filepath.Join(filepath.Dir(src), "rewritten-"+filepath.Base(src))
				raw, err := os.ReadFile(src)
				if err == nil {
					err = os.WriteFile(dst, raw, 0o644)
				}
				if err != nil {
					t.Error(err)
					return
				}
				testkit.CommitDataFileAt(t, cur, task.File, dst, task.File)
			}
		})
	}
	p, res := planApply(ctx, t, cfg, now, hook)
	tp := findTable(t, p, "lake.ns.t")
	if actionOf(tp, diff.Compact) == nil || actionOf(tp, diff.ExpireSnapshots) == nil {
		t.Fatalf("want compaction and expiry planned: %v %+v", actionTypes(tp), tp.Refusals)
	}
	requireApplied(t, res)
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("the file another writer released during the apply was deleted: %v", err)
	}
	var named bool
	for _, tr := range res.Tables {
		for _, a := range tr.Actions {
			named = named || slices.ContainsFunc(a.NotApplied, func(s string) bool { return strings.Contains(s, released) })
		}
	}
	if !named {
		t.Errorf("the results must name the file kept for the next run: %+v", res.Tables)
	}
	after, err := be.cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if r, s := sumIDs(ctx, t, after); r != rows || s != sum {
		t.Errorf("rows %d (sum %d), want %d (sum %d)", r, s, rows, sum)
	}
	requireReferencedPresent(ctx, t, "t", after)

	// The next run sees the other writer's commit in its plan.
	_, res = planApply(ctx, t, cfg, now, nil)
	requireApplied(t, res)
	// It deletes the released file and what the compaction replaced (the
	// snapshots kept for the released file reached those too).
	for _, f := range live {
		if _, err := os.Stat(strings.TrimPrefix(f, "file://")); !os.IsNotExist(err) {
			t.Errorf("the next run must delete %s: %v", f, err)
		}
	}
	after, err = be.cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	requireReferencedPresent(ctx, t, "t", after)
}
