package providers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

// Apply's re-check of a sweep (issue 32 item 3): between the plan and its
// apply the world changes, and the apply holds every rule of the plan on
// the world as it is at deletion (orphans.Spec.Recheck,
// diff.RecheckOrphans).

type plannedSweep struct {
	l      *testkit.Lakehouse
	sess   *Session
	pol    *config.Effective
	action diff.Action
	strays []string
	data   string
}

// planSweep plans a sweep of a table with two old strays, as a saved plan
// would carry it.
func planSweep(t *testing.T) *plannedSweep {
	t.Helper()
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 3, 10, 1)
	data := filepath.Join(tbl.Location(), "data")
	old := fixedNow.Add(-10 * 24 * time.Hour)
	strays := []string{filepath.Join(data, "a-stray.parquet"), filepath.Join(data, "b-stray.parquet")}
	for _, p := range strays {
		testkit.WriteFileAt(t, p, 100, old)
	}
	sess := sessionFor(t, l)
	pol := testkit.OrphanPolicy("lake.ns.t")
	pol.OrphanFiles.MinFilesForRatio.Value = 0
	st, err := sess.Observe(ctx, pol)
	if err != nil {
		t.Fatal(err)
	}
	tp := diff.PlanTable(pol, st, fixedNow)
	for _, a := range tp.Actions {
		if a.Type == diff.RemoveOrphanFiles {
			if !slices.Equal(a.Orphans.Paths, strays) {
				t.Fatalf("planned %v, want %v", a.Orphans.Paths, strays)
			}
			return &plannedSweep{l: l, sess: sess, pol: pol, action: a, strays: strays, data: data}
		}
	}
	t.Fatalf("no sweep planned: %+v", tp.Refusals)
	return nil
}

// apply runs the planned action through the session's executor, as apply
// does, on the table handle h (nil: loaded now).
func (p *plannedSweep) apply(t *testing.T, h *Table) (ExecResult, error) {
	t.Helper()
	ctx := context.Background()
	if h == nil {
		var err error
		if h, err = p.sess.Table(ctx, p.pol.Address); err != nil {
			t.Fatal(err)
		}
	}
	ex, _ := p.sess.Executor(diff.RemoveOrphanFiles)
	_, res, err := ex.Execute(ctx, ExecRequest{Table: h, Policy: p.pol, Actions: []diff.Action{p.action},
		Now: func() time.Time { return fixedNow }})
	return res, err
}

func (p *plannedSweep) present(t *testing.T, paths ...string) {
	t.Helper()
	for _, f := range paths {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func wantRefused(t *testing.T, err error, reason string) {
	t.Helper()
	if !errors.Is(err, store.ErrRefused) || !strings.Contains(err.Error(), "nothing deleted") || !strings.Contains(err.Error(), reason) {
		t.Fatalf("apply: %v; want a refusal naming %q, nothing deleted", err, reason)
	}
}

// Nothing changed: the plan's two strays go.
func TestSweepRecheckUnchanged(t *testing.T) {
	p := planSweep(t)
	res, err := p.apply(t, nil)
	if err != nil || res.FilesDeleted != 2 {
		t.Fatalf("apply: %+v %v", res, err)
	}
}

// A referenced file vanished: the listing is partial, nothing is deleted.
func TestSweepRecheckReferencedFileVanished(t *testing.T) {
	p := planSweep(t)
	live := testkit.DataFiles(t, p.l.Reload(t, "ns.t"))[0]
	if err := os.Remove(testkit.LocalPath(t, live)); err != nil {
		t.Fatal(err)
	}
	_, err := p.apply(t, nil)
	wantRefused(t, err, "the listing is partial: 1 referenced files are missing from it")
	p.present(t, p.strays...)
}

// Unreferenced files appeared (young ones count, as in the plan): the
// ratio is above the policy's maximum at apply time, nothing is deleted.
func TestSweepRecheckRatioExceeded(t *testing.T) {
	p := planSweep(t)
	for i := range 20 {
		testkit.WriteFileAt(t, filepath.Join(p.data, fmt.Sprintf("young-%02d.parquet", i)), 10, fixedNow.Add(-time.Hour))
	}
	_, err := p.apply(t, nil)
	wantRefused(t, err, "above orphan_files.max_orphan_ratio = 0.25")
	p.present(t, p.strays...)
}

// A planned file was rewritten since the plan: younger than the guard now,
// it is kept, and the other goes.
func TestSweepRecheckFileRewritten(t *testing.T) {
	p := planSweep(t)
	testkit.WriteFileAt(t, p.strays[0], 300, fixedNow.Add(-time.Hour))
	res, err := p.apply(t, nil)
	if err != nil || res.FilesDeleted != 1 {
		t.Fatalf("apply: %+v %v", res, err)
	}
	p.present(t, p.strays[0])
	if _, err := os.Stat(p.strays[1]); !os.IsNotExist(err) {
		t.Fatalf("%s kept: %v", p.strays[1], err)
	}
}

// The table was dropped and recreated at the same location after apply
// loaded it: another table's files, nothing is deleted.
func TestSweepRecheckTableReplaced(t *testing.T) {
	p := planSweep(t)
	ctx := context.Background()
	h, err := p.sess.Table(ctx, p.pol.Address)
	if err != nil {
		t.Fatal(err)
	}
	loc := p.l.Reload(t, "ns.t").Location()
	if err := p.l.Catalog.DropTable(ctx, testkit.Ident("ns.t")); err != nil {
		t.Fatal(err)
	}
	testkit.Append(t, p.l.CreateTable(t, "ns.t", testkit.TableOptions{Location: loc}), 1, 10, 1)
	_, err = p.apply(t, h)
	// The re-check's scan sees it first; Remove's own UUID check, after
	// it, says "table UUID changed".
	wantRefused(t, err, "the table was dropped and recreated during the scan")
	p.present(t, p.strays...)
}
