package apply

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// whereHCL scopes compaction to the last two of four days (testkit.Day0 is
// 2026-11-01), on a day-partitioned and an unpartitioned table, and gives a
// third table a where naming a column it does not have.
const whereHCL = `
policy "scoped" {
  target_file_size = "64MiB"
  compaction {
    min_input_files = 2
    where           = "event_ts >= '2026-11-03T00:00:00Z'"
  }
}

policy "broken_where" {
  target_file_size = "64MiB"
  compaction {
    min_input_files = 2
    where           = "no_such_column > 1"
  }
}

table "lake.scoped.daily" { policy = policy.scoped }
table "lake.scoped.flat" { policy = policy.scoped }
table "lake.scoped.broken" { policy = policy.broken_where }
`

// filesByPartition maps each partition path of the current snapshot to its
// data files.
func filesByPartition(t *testing.T, tbl *table.Table) map[string][]string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, task := range tasks {
		f := task.File
		key := fmt.Sprint(f.Partition()) // one field, or none
		out[key] = append(out[key], f.FilePath())
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// The plan of a `where`-scoped compaction lists only the matching days, and
// apply rewrites exactly the files the plan counted, leaving the other days'
// files as they were. A where naming an unknown column fails that table
// alone; an unpartitioned table's files all may match a partition filter.
func TestWhereScopesPlanAndApply(t *testing.T) {
	e := newEnv(t, whereHCL)
	daily := e.lake.CreateTable(t, "scoped.daily", testkit.TableOptions{Partitioned: true})
	daily = testkit.Append(t, daily, 12, 10, 4) // 3 small files on each of 4 days
	flat := e.lake.CreateTable(t, "scoped.flat", testkit.TableOptions{})
	testkit.Append(t, flat, 3, 10, 4)
	broken := e.lake.CreateTable(t, "scoped.broken", testkit.TableOptions{Partitioned: true})
	testkit.Append(t, broken, 4, 10, 2)
	before := filesByPartition(t, daily)
	if len(before) != 4 {
		t.Fatalf("want 4 partitions before, got %v", before)
	}

	p := e.plan()
	if len(p.Errors) != 1 || p.Errors[0].Address != "lake.scoped.broken" {
		t.Fatalf("want one error, for lake.scoped.broken; got %v", p.Errors)
	}
	msg := p.Errors[0].Message
	for _, want := range []string{"compaction.where", "main.icewright.hcl:", "no_such_column"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("error %q does not name %q", msg, want)
		}
	}

	act := actionOf(tablePlan(t, p, "lake.scoped.daily"), diff.Compact)
	if act == nil {
		t.Fatal("daily: no compact action")
	}
	c := act.Compact
	var parts []string
	for _, g := range c.Groups {
		parts = append(parts, g.Partition)
	}
	slices.Sort(parts)
	if want := []string{"event_day=2026-11-03", "event_day=2026-11-04"}; !slices.Equal(parts, want) {
		t.Fatalf("daily: planned partitions %v, want %v", parts, want)
	}
	if c.InputFiles != 6 || c.Where != "event_ts >= '2026-11-03T00:00:00Z'" {
		t.Fatalf("daily: input_files %d (want 6), where %q", c.InputFiles, c.Where)
	}

	flatAct := actionOf(tablePlan(t, p, "lake.scoped.flat"), diff.Compact)
	if flatAct == nil || flatAct.Compact.InputFiles != 3 || flatAct.Compact.Where == "" {
		t.Fatalf("flat: want all 3 files planned under the where, got %+v", flatAct)
	}

	res := e.apply(p, false)
	if tr := tableResult(t, res, "lake.scoped.daily"); tr.Status != "done" {
		t.Fatalf("daily not done:\n%s", describe(res))
	}
	after := filesByPartition(t, e.lake.Reload(t, "scoped.daily"))
	rewritten := 0
	for part, files := range before {
		got := after[part]
		if slices.Equal(got, files) {
			continue
		}
		if len(got) != 1 {
			t.Fatalf("partition %s: %d files after compaction, want 1", part, len(got))
		}
		rewritten += len(files)
	}
	if rewritten != c.InputFiles {
		t.Fatalf("apply rewrote %d files, the plan showed %d (before %v, after %v)", rewritten, c.InputFiles, before, after)
	}
	if testkit.ScanRows(t, e.lake.Reload(t, "scoped.daily")) != 120 {
		t.Fatal("daily: rows changed")
	}
	if got := len(filesByPartition(t, e.lake.Reload(t, "scoped.flat"))["map[]"]); got != 1 {
		t.Fatalf("flat: %d files after apply, want 1", got)
	}
}

// A where relative to now is evaluated at the plan's clock by the plan, and
// apply rewrites the files the plan's groups name: a saved plan applied a
// day later to an unchanged table compacts the window it showed. On a
// table changed since the plan, the fresh plan (at apply's clock) bounds
// the approved groups: the day that left the window is not applied, and
// the files that arrived are not touched.
func TestWhereRelativeToNow(t *testing.T) {
	for _, changed := range []bool{false, true} {
		t.Run(fmt.Sprintf("changed=%v", changed), func(t *testing.T) { whereRelativeToNow(t, changed) })
	}
}

func whereRelativeToNow(t *testing.T, changed bool) {
	e := newEnv(t, `
policy "recent" {
  target_file_size = "64MiB"
  compaction {
    min_input_files = 2
    where           = "event_ts >= current_date - interval '2' day"
  }
}

table "lake.recent.daily" { policy = policy.recent }
`)
	clock := time.Date(2026, 11, 4, 9, 0, 0, 0, time.UTC) // testkit's fourth day
	e.sess = providers.Open(e.cfg, providers.Options{Now: func() time.Time { return clock }})
	sess := e.sess
	t.Cleanup(func() { _ = sess.Close() })
	daily := testkit.Append(t, e.lake.CreateTable(t, "recent.daily", testkit.TableOptions{Partitioned: true}), 12, 10, 4)
	before := filesByPartition(t, daily)
	if len(before) != 4 {
		t.Fatalf("want 4 partitions before, got %v", before)
	}

	p, err := Plan(context.Background(), e.cfg, e.sess, PlanOptions{Version: "test", Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	act := actionOf(tablePlan(t, p, "lake.recent.daily"), diff.Compact)
	if act == nil {
		t.Fatalf("no compact action: %+v", p)
	}
	var parts []string
	for _, g := range act.Compact.Groups {
		parts = append(parts, g.Partition)
	}
	slices.Sort(parts)
	if want := []string{"event_day=2026-11-02", "event_day=2026-11-03", "event_day=2026-11-04"}; !slices.Equal(parts, want) || act.Compact.InputFiles != 9 {
		t.Fatalf("planned partitions %v with %d files at %s, want %v with 9", parts, act.Compact.InputFiles, clock, want)
	}

	var arrived []string
	if changed {
		// One more file in each day; the table's metadata moved.
		grown := filesByPartition(t, testkit.Append(t, e.lake.Reload(t, "recent.daily"), 4, 1, 4))
		for part, files := range grown {
			for _, f := range files {
				if !slices.Contains(before[part], f) {
					arrived = append(arrived, f)
				}
			}
		}
		if len(arrived) != 4 {
			t.Fatalf("arrived %v", arrived)
		}
	}
	clock = clock.Add(24 * time.Hour) // current_date - 2 days is now 2026-11-03
	tr := tableResult(t, e.applyAt(p, true, clock), "lake.recent.daily")
	if tr.Status != "done" {
		t.Fatalf("apply: %+v", tr)
	}
	after := filesByPartition(t, e.lake.Reload(t, "recent.daily"))
	var rewritten []string
	for part, files := range before {
		kept := slices.DeleteFunc(slices.Clone(after[part]), func(f string) bool { return slices.Contains(arrived, f) })
		switch {
		case slices.Equal(kept, files):
		case len(kept) == 1 && !slices.Contains(files, kept[0]):
			rewritten = append(rewritten, part)
		default:
			t.Fatalf("partition %s: %v after apply, want one new file or the 3 it had", part, kept)
		}
	}
	for _, f := range arrived {
		if !slices.ContainsFunc(slices.Collect(maps.Values(after)), func(fs []string) bool { return slices.Contains(fs, f) }) {
			t.Fatalf("%s arrived after the plan and is gone", f)
		}
	}
	slices.Sort(rewritten)
	// filesByPartition keys are the partition tuples (days since 1970).
	day := func(d int) string {
		return fmt.Sprint(map[int]any{1000: int32(time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)})
	}
	want := []string{day(2), day(3), day(4)} // the plan's window
	if changed {
		want = want[1:] // bounded by the fresh plan's
		var notes []string
		for _, a := range tr.Actions {
			if a.Type == diff.Compact {
				notes = a.NotApplied
			}
		}
		if len(notes) != 1 || !strings.Contains(notes[0], `partition "event_day=2026-11-02", 3 files): a fresh plan no longer compacts this partition`) {
			t.Fatalf("not applied: %q", notes)
		}
	}
	if !slices.Equal(rewritten, want) {
		t.Fatalf("apply at %s rewrote partitions %v, want %v", clock, rewritten, want)
	}
	if rows, want := testkit.ScanRows(t, e.lake.Reload(t, "recent.daily")), int64(120+len(arrived)); rows != want {
		t.Fatalf("%d rows, want %d", rows, want)
	}
}
