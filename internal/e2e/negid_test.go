package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// The corpus table of issue 32 item 1: its head's snapshot id is negative,
// which iceberg-go v0.7.0's snapshot producers take for "no parent", so a
// compaction committed through them dropped the part=1 file (3 rows became
// 1) and the same apply's expiry deleted it from storage. Under binpack,
// sort and binpack with expiry (min_input_files = 1 each): apply either
// succeeds or the plan refuses with a reason; the 3 rows keep their values
// (iceberg-go, and DuckDB when it is installed) and the part=1 file stays
// live and on disk.
func TestNegativeHeadCorpusTable(t *testing.T) {
	const name = "duckdb-equality-delete-cross-partition"
	var ct corpusTable
	for _, c := range loadCorpus(t) {
		if c.Name == name {
			ct = c
		}
	}
	if ct.Name == "" {
		t.Fatalf("%s is not in the corpus README", name)
	}
	for _, pol := range []struct{ name, hcl, blocks string }{
		{name: "binpack", hcl: `
  compaction {
    strategy        = "binpack"
    min_input_files = 1
  }`},
		{name: "sort", hcl: `
  compaction {
    strategy        = "sort"
    min_input_files = 1
  }`, blocks: "table \"lake.ns.t\" {\n  policy = policy.corpus\n  sort_order = [\"key\"]\n}\n"},
		{name: "binpack_expiry", hcl: `
  compaction {
    strategy        = "binpack"
    min_input_files = 1
  }
  snapshot_retention {
    max_age       = "1s"
    min_snapshots = 1
  }`},
	} {
		t.Run(pol.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			be := sqliteFile(ctx, t)
			createNamespace(ctx, t, be.cat, "ns")
			ident := table.Identifier{"ns", "t"}
			loc := strings.TrimPrefix(be.fixtureLocation("ns", "t"), "file://")
			md := testkit.CopyTable(t, filepath.Join(corpusDir(t), name), loc, ct.Current)
			be.register(ctx, t, ident, "file://"+md)
			before, err := be.cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			if cur := before.CurrentSnapshot(); cur == nil || cur.SnapshotID != -653171173268680982 {
				t.Fatalf("the fixture's head must be the negative id: %+v", cur)
			}
			goBefore, err := goFingerprint(ctx, before)
			if err != nil || goBefore.Rows != 3 {
				t.Fatalf("iceberg-go reads %d rows (%v), want 3", goBefore.Rows, err)
			}
			part1 := part1Files(liveDataFiles(ctx, t, before))
			if len(part1) != 1 {
				t.Fatalf("want one live part=1 file, got %v", part1)
			}

			cfg := writeCorpusConfig(t, be, "ns", pol.hcl, pol.blocks)
			now := time.Now()
			p, res := planApply(ctx, t, cfg, func() time.Time { return now }, nil)
			tp := findTable(t, p, "lake.ns.t")
			t.Logf("plan: %v refusals %+v", actionTypes(tp), tp.Refusals)
			if slices.Contains(actionTypes(tp), diff.Compact) {
				t.Errorf("compaction planned on a negative head: %v", actionTypes(tp))
			}
			if !slices.ContainsFunc(tp.Refusals, func(r diff.Refusal) bool {
				return r.Action == string(diff.Compact) && strings.Contains(r.Reason, "parentSnapshot")
			}) {
				t.Errorf("want compaction refused with the upstream defect named: %+v", tp.Refusals)
			}
			requireAppliedButRefusals(t, res)

			after, err := be.cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := goFingerprint(ctx, after); err != nil || !got.equal(goBefore) {
				t.Errorf("iceberg-go reads other rows after apply (%v):\n before %v\n after  %v", err, goBefore, got)
			}
			if got := part1Files(liveDataFiles(ctx, t, after)); !slices.Equal(got, part1) {
				t.Errorf("part=1 file no longer live: before %v, after %v", part1, got)
			}
			for _, f := range part1 {
				if _, err := os.Stat(strings.TrimPrefix(f, "file://")); err != nil {
					t.Errorf("part=1 file gone from storage: %v", err)
				}
			}
			requireReferencedPresent(ctx, t, name, after)
			t.Run("duckdb", func(t *testing.T) {
				duck := testenv.DuckDBReader(t)
				got, err := duckFingerprint(ctx, duck, after)
				if err != nil {
					t.Fatal(err)
				}
				// iceberg-go and DuckDB hash values alike (the corpus
				// test compares each with itself); 3 rows either way.
				if got.Rows != 3 {
					t.Errorf("DuckDB reads %d rows after apply, want 3", got.Rows)
				}
				first, err := duckFingerprint(ctx, duck, before)
				if err != nil || !got.equal(first) {
					t.Errorf("DuckDB reads other values after apply (%v):\n before %v\n after  %v", err, first, got)
				}
			})
		})
	}
}

func part1Files(paths []string) []string {
	return slices.DeleteFunc(paths, func(p string) bool { return !strings.Contains(p, "/part=1/") })
}

// requireAppliedButRefusals fails on any action that failed in apply and
// on any table error other than the plan's own refusals.
func requireAppliedButRefusals(t testing.TB, res *apply.Results) {
	t.Helper()
	for _, tr := range res.Tables {
		for _, a := range tr.Actions {
			if a.Error != "" {
				t.Errorf("apply %s: %s: %s", tr.Address, a.Type, a.Error)
			}
		}
		if tr.Error != "" && !strings.HasPrefix(tr.Error, "the plan refused actions: ") {
			t.Errorf("apply %s: %s", tr.Address, tr.Error)
		}
	}
}

// requireHeadRefusals fails unless the plan refuses each of kinds, naming
// iceberg-go's defect, and plans none of them.
func requireHeadRefusals(t testing.TB, tp *diff.TablePlan, kinds ...diff.ActionType) {
	t.Helper()
	for _, k := range kinds {
		if actionOf(tp, k) != nil {
			t.Errorf("%s planned on a head with an id <= 0: %v", k, actionTypes(tp))
		}
		if !slices.ContainsFunc(tp.Refusals, func(r diff.Refusal) bool {
			return r.Action == string(k) && strings.Contains(r.Reason, "parentSnapshot")
		}) {
			t.Errorf("want %s refused with the upstream defect named: %+v", k, tp.Refusals)
		}
	}
}

// TestNegativeHeadOwnTable: a table iceberg-go wrote, copied with its head
// snapshot (and an older one) renumbered to negative ids, goes through
// every commit path. What adds a snapshot (compaction under binpack, sort
// and zorder; rewrite_manifests) is refused in the plan and adds nothing;
// properties, the sort order, expiry and the orphan sweep run. Rows, live
// files and the head stay; every referenced file is present. The
// executors refuse too (an old saved plan): called directly they fail with
// ErrRefused and leave the metadata as it was.
func TestNegativeHeadOwnTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := sqliteFile(ctx, t)
	createNamespace(ctx, t, be.cat, "ns")
	// The source is outside the policies' namespace: they must not touch it.
	createNamespace(ctx, t, be.cat, "src")
	srcLoc := be.location("src", "t")
	src, err := be.cat.CreateTable(ctx, table.Identifier{"src", "t"}, eventsSchema, catalog.WithLocation(srcLoc))
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 6; i++ {
		src = appendRows(ctx, t, src, i*10, 10)
	}
	snaps := src.Metadata().Snapshots()
	head, older := snaps[len(snaps)-1].SnapshotID, snaps[2].SnapshotID
	ids := map[int64]int64{head: -head, older: -older}
	if head <= 0 || older <= 0 {
		t.Fatalf("iceberg-go wrote ids %d, %d", older, head)
	}
	current, err := filepath.Rel(strings.TrimPrefix(srcLoc, "file://"), strings.TrimPrefix(src.MetadataLocation(), "file://"))
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(30 * 24 * time.Hour)
	policies := []struct {
		name, hcl, blocks string
		refused           []diff.ActionType
		runs              []diff.ActionType
	}{
		{name: "every_kind", hcl: `
  properties = { "icewright.test" = "negative-head" }
  compaction {
    strategy        = "binpack"
    min_input_files = 2
  }
  manifests {
    max_count = 1
  }
  snapshot_retention {
    max_age       = "1d"
    min_snapshots = 1
  }
  orphan_files {
    older_than       = "3d"
    max_orphan_ratio = 0.95
  }`, blocks: "table \"lake.ns.t\" {\n  policy = policy.corpus\n  sort_order = [\"id\"]\n}\n",
			refused: []diff.ActionType{diff.Compact, diff.RewriteManifests},
			runs:    []diff.ActionType{diff.UpdateProperties, diff.ReplaceSortOrder, diff.ExpireSnapshots, diff.RemoveOrphanFiles}},
		{name: "sort", hcl: `
  compaction {
    strategy        = "sort"
    min_input_files = 2
  }`, blocks: "table \"lake.ns.t\" {\n  policy = policy.corpus\n  sort_order = [\"id\"]\n}\n",
			refused: []diff.ActionType{diff.Compact}, runs: []diff.ActionType{diff.ReplaceSortOrder}},
		{name: "zorder", hcl: `
  compaction {
    strategy        = "zorder"
    zorder_columns  = ["id", "category"]
    min_input_files = 2
  }`, refused: []diff.ActionType{diff.Compact}},
	}
	for _, pol := range policies {
		t.Run(pol.name, func(t *testing.T) {
			ident := table.Identifier{"ns", "t"}
			loc := strings.TrimPrefix(be.fixtureLocation("ns", "t_"+pol.name), "file://")
			md := testkit.CopyTable(t, strings.TrimPrefix(srcLoc, "file://"), loc, current, lakehouse.SnapshotIDs(ids))
			backdate(t, loc, later.Add(-10*24*time.Hour))
			orphan := filepath.Join(loc, "data", "icewright-negid-orphan.parquet")
			testkit.WriteFileAt(t, orphan, 10, later.Add(-10*24*time.Hour))
			if err := be.cat.DropTable(ctx, ident); err != nil && !strings.Contains(err.Error(), "not") {
				t.Fatal(err)
			}
			be.register(ctx, t, ident, "file://"+md)
			before, err := be.cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			if got := before.CurrentSnapshot().SnapshotID; got != -head {
				t.Fatalf("copied head is %d, want %d", got, -head)
			}
			fpBefore, err := goFingerprint(ctx, before)
			if err != nil || fpBefore.Rows != 60 {
				t.Fatalf("iceberg-go reads %d rows (%v), want 60", fpBefore.Rows, err)
			}
			filesBefore := liveDataFiles(ctx, t, before)

			cfg := writeCorpusConfig(t, be, "ns", pol.hcl, pol.blocks)
			now := func() time.Time { return later }
			p, res := planApply(ctx, t, cfg, now, nil)
			tp := findTable(t, p, "lake.ns.t")
			t.Logf("plan: %v refusals %+v", actionTypes(tp), tp.Refusals)
			requireHeadRefusals(t, tp, pol.refused...)
			for _, k := range pol.runs {
				if actionOf(tp, k) == nil {
					t.Errorf("%s adds no snapshot and must still be planned: %v", k, actionTypes(tp))
				}
			}
			requireAppliedButRefusals(t, res)

			after, err := be.cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			if got := after.CurrentSnapshot().SnapshotID; got != -head {
				t.Errorf("head moved from %d to %d", -head, got)
			}
			known := map[int64]bool{}
			for _, s := range before.Metadata().Snapshots() {
				known[s.SnapshotID] = true
			}
			for _, s := range after.Metadata().Snapshots() {
				if !known[s.SnapshotID] {
					t.Errorf("apply added snapshot %d", s.SnapshotID)
				}
			}
			if len(pol.runs) == 0 && after.MetadataLocation() != before.MetadataLocation() {
				t.Errorf("only refused actions, yet the metadata moved: %s -> %s", before.MetadataLocation(), after.MetadataLocation())
			}
			if got, err := goFingerprint(ctx, after); err != nil || !got.equal(fpBefore) {
				t.Errorf("iceberg-go reads other rows after apply (%v):\n before %v\n after  %v", err, fpBefore, got)
			}
			if got := liveDataFiles(ctx, t, after); !slices.Equal(got, filesBefore) {
				t.Errorf("live files changed:\n before %v\n after  %v", filesBefore, got)
			}
			requireReferencedPresent(ctx, t, pol.name, after)
			if slices.Contains(pol.runs, diff.ExpireSnapshots) && len(after.Metadata().Snapshots()) >= len(before.Metadata().Snapshots()) {
				t.Errorf("expiry expired nothing: %d snapshots", len(after.Metadata().Snapshots()))
			}
			if _, err := os.Stat(orphan); slices.Contains(pol.runs, diff.RemoveOrphanFiles) != (err != nil) {
				t.Errorf("orphan %s: %v (orphan sweep planned: %v)", orphan, err, slices.Contains(pol.runs, diff.RemoveOrphanFiles))
			}

			// An old saved plan: the executors refuse on their own.
			sess := openSession(cfg, now)
			defer sess.Close()
			ep, ok := cfg.Resolve("lake.ns.t")
			if !ok {
				t.Fatal("policy not resolved")
			}
			for _, a := range []diff.Action{
				{Type: diff.Compact, Compact: &diff.CompactAction{Strategy: "binpack"}},
				{Type: diff.RewriteManifests, Manifests: &diff.ManifestsAction{}},
			} {
				h, err := sess.Table(ctx, "lake.ns.t")
				if err != nil {
					t.Fatal(err)
				}
				exec, _ := sess.Executor(a.Type)
				_, _, err = exec.Execute(ctx, providers.ExecRequest{Table: h, Policy: ep, Actions: []diff.Action{a}, Now: now})
				if !errors.Is(err, providers.ErrRefused) || !strings.Contains(err.Error(), "parentSnapshot") {
					t.Errorf("%s executor on a head <= 0: %v, want a refusal naming the defect", a.Type, err)
				}
				if h2, err := sess.Table(ctx, "lake.ns.t"); err != nil || h2.MetadataLocation() != h.MetadataLocation() {
					t.Errorf("%s executor moved the metadata (%v)", a.Type, err)
				}
			}
		})
	}
}
