package apply

import (
	"context"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/testkit"
)

// TestActualsLocal: on local storage, apply counts what each action did,
// and the counts match what the test knows happened: the orphan sweep
// deletes its N strays with N deletes, the expiry deletes what it reports
// with as many deletes, the compaction reads at least its k input files
// and their bytes and writes its outputs, and each result carries the
// approved plan's estimate beside its actual.
func TestActualsLocal(t *testing.T) {
	e := newEnv(t, "")
	tbl := e.debtTable(orders, nil)
	const strays = 3
	for _, name := range []string{"a.parquet", "b.parquet", "c.parquet"} {
		strayFile(t, tbl, name, 10*24*time.Hour)
	}
	p := e.plan()
	tp := tablePlan(t, p, "lake."+orders)
	c := actionOf(tp, diff.Compact)
	if c == nil || c.Compact == nil || actionOf(tp, diff.ExpireSnapshots) == nil || actionOf(tp, diff.RemoveOrphanFiles) == nil {
		t.Fatalf("plan lacks compact, expiry or orphans: %+v", tp.Actions)
	}
	res := e.apply(p, false)
	if res.Failed() || res.FormatVersion != ResultsFormatVersion {
		t.Fatalf("apply (format %s):\n%s", res.FormatVersion, describe(res))
	}
	for _, a := range tableResult(t, res, "lake."+orders).Actions {
		u := a.Actual
		if u == nil {
			t.Fatalf("%s: no actual", a.Type)
		}
		t.Logf("%s: %+v cpu approximate %v", a.Type, *u, a.ActualCPUApproximate)
		// The result carries its own plan action's estimate, a copy.
		if pa := actionOf(tp, a.Type); pa == nil || pa.Estimate == nil || a.Estimate == nil || *a.Estimate != *pa.Estimate || a.Estimate == pa.Estimate {
			t.Errorf("%s: estimate %+v, want a copy of the plan's", a.Type, a.Estimate)
		}
		if a.ActualCPUApproximate {
			t.Errorf("%s: CPU approximate in a run of one table", a.Type)
		}
		if u.Requests.BatchDelete != 0 || u.Requests.Put != u.FilesWritten || u.Requests.Delete != u.FilesDeleted {
			t.Errorf("%s: local storage: one PUT per file written, one DELETE per file deleted, no batch: %+v", a.Type, u.Requests)
		}
		freed := a.BytesFreed
		if a.Type == diff.Compact || a.Type == diff.RewriteManifests {
			freed = a.BytesBefore - a.BytesAfter // released once the old snapshots expire
		}
		if u.BytesFreed != freed {
			t.Errorf("%s: bytes freed %d, want %d", a.Type, u.BytesFreed, freed)
		}
		switch a.Type {
		case diff.RemoveOrphanFiles:
			if u.FilesDeleted != strays || a.FilesDeleted != strays || u.Requests.List == 0 || u.FilesWritten != 0 {
				t.Errorf("orphans: %d strays, actual %+v (action deleted %d)", strays, *u, a.FilesDeleted)
			}
		case diff.ExpireSnapshots:
			if u.FilesDeleted == 0 || u.FilesDeleted != a.FilesDeleted {
				t.Errorf("expiry: actual deleted %d files, the action %d", u.FilesDeleted, a.FilesDeleted)
			}
		case diff.Compact:
			k := int64(c.Compact.InputFiles)
			// Every input read, each whole but its leading magic; the
			// manifests, list and metadata besides.
			if u.FilesRead < k || u.BytesRead < c.Compact.InputBytes-4*k {
				t.Errorf("compaction of %d files (%d bytes) read %d files, %d bytes", k, c.Compact.InputBytes, u.FilesRead, u.BytesRead)
			}
			// The outputs, a manifest, the manifest list and the metadata.
			if u.FilesWritten < a.FilesAfter+3 || u.BytesWritten < a.BytesAfter || u.FilesDeleted != 0 {
				t.Errorf("compaction into %d files (%d bytes): wrote %d files, %d bytes, deleted %d", a.FilesAfter, a.BytesAfter, u.FilesWritten, u.BytesWritten, u.FilesDeleted)
			}
			if u.CPUSeconds <= 0 {
				t.Errorf("compaction: no CPU time")
			}
		}
	}
}

// TestCPUClockApportions: CPU time used while actions overlap is split
// among them, and marks them shared; an action alone gets all of it.
func TestCPUClockApportions(t *testing.T) {
	now := 0.0
	c := newCPUClock(func() (float64, bool) { return now, true })
	a := c.start()
	now = 2 // a alone: 2s
	b := c.start()
	now = 6 // both: 4s, 2s each
	if got := c.stop(a); got != 4 || !a.shared {
		t.Fatalf("a: %v s, shared %v; want 4, true", got, a.shared)
	}
	now = 7 // b alone: 1s
	if got := c.stop(b); got != 3 || !b.shared {
		t.Fatalf("b: %v s, shared %v; want 3, true", got, b.shared)
	}
	d := c.start()
	now = 8.5
	if got := c.stop(d); got != 1.5 || d.shared {
		t.Fatalf("d: %v s, shared %v; want 1.5, false", got, d.shared)
	}
	none := newCPUClock(func() (float64, bool) { return 0, false })
	if s := none.start(); s != nil || none.stop(s) != 0 {
		t.Fatal("an unreadable clock counts something")
	}
}

// TestOtherTablesReferencesApart: the run's first deletion (the expiry of
// lake.sales.orders, first in the plan's order) reads the other table's
// references; apply counts that read apart, in the run-level entry, beside
// the plan's estimate of it (within the ±10% target), and the expiry's own
// actual is its own work only: within ±10% of its estimate, which the
// read would otherwise exceed.
func TestOtherTablesReferencesApart(t *testing.T) {
	e := newEnv(t, "")
	e.debtTable(orders, nil)
	other := e.lake.CreateTable(t, "sales.other", testkit.TableOptions{})
	testkit.Append(t, other, 8, 20, 1)
	p := e.plan()
	if p.Summary.OtherTablesRead != 1 || p.Summary.OtherTablesReferences.Requests.Get == 0 {
		t.Fatalf("plan: other tables read %d, estimate %+v", p.Summary.OtherTablesRead, p.Summary.OtherTablesReferences)
	}
	// One table at a time, in the plan's order, as the estimate assumes:
	// lake.sales.other's commits land after the expiry read it.
	res, err := Apply(context.Background(), e.cfg, e.sess, p, ApplyOptions{Version: "test", Parallelism: 1})
	if err != nil || res.Failed() {
		t.Fatalf("apply: %v\n%s", err, describe(res))
	}
	rc := res.OtherTablesReferences
	if rc == nil || rc.Estimate == nil || rc.Actual == nil {
		t.Fatalf("no run-level entry for other tables' references: %+v", rc)
	}
	within := func(what string, est, act int64) {
		t.Helper()
		if act == 0 || float64(est) < 0.9*float64(act) || float64(est) > 1.1*float64(act) {
			t.Errorf("%s: estimate %d, actual %d: outside ±10%%", what, est, act)
		}
	}
	e0, a0 := *rc.Estimate, *rc.Actual
	t.Logf("other tables' references: estimate %+v, actual %+v", e0, a0)
	within("references GETs", e0.Requests.Get, a0.Requests.Get)
	within("references files read", e0.FilesRead, a0.FilesRead)
	within("references bytes read", e0.BytesRead, a0.BytesRead)
	var exp *ActionResult
	for i, a := range tableResult(t, res, "lake."+orders).Actions {
		if a.Type == diff.ExpireSnapshots {
			exp = &tableResult(t, res, "lake."+orders).Actions[i]
		}
	}
	if exp == nil || exp.Actual == nil || exp.Estimate == nil || exp.FilesDeleted == 0 {
		t.Fatalf("no expiry that deleted files: %+v", exp)
	}
	t.Logf("expiry: estimate %+v, actual %+v", *exp.Estimate, *exp.Actual)
	if a0.Requests.Get < exp.Estimate.Requests.Get/5 {
		t.Fatalf("the other table's read (%d GETs) is too small against the expiry's (%d) for the test to tell them apart", a0.Requests.Get, exp.Estimate.Requests.Get)
	}
	within("expiry GETs", exp.Estimate.Requests.Get, exp.Actual.Requests.Get)
	within("expiry files read", exp.Estimate.FilesRead, exp.Actual.FilesRead)
}
