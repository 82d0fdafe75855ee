package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/internal/testenv"
	"github.com/iceops/iceops/providers/testkit"
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
			for _, tr := range res.Tables {
				for _, a := range tr.Actions {
					if a.Error != "" {
						t.Errorf("apply: %s: %s", a.Type, a.Error)
					}
				}
				if tr.Error != "" && !strings.HasPrefix(tr.Error, "the plan refused actions: ") {
					t.Errorf("apply: %s", tr.Error)
				}
			}

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
