package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/testenv"
)

// sparkTimestamp is a Spark SQL timestamp literal with an explicit offset,
// so that no session time zone decides which instant it names.
func sparkTimestamp(at time.Time) string {
	return "TIMESTAMP '" + at.UTC().Format("2006-01-02 15:04:05.000") + "+00:00'"
}

// sparkHistory writes a Spark table whose history releases every kind of
// file an expiry deletes: data files rewritten by a copy-on-write delete,
// position delete files of a merge-on-read update, manifests and manifest
// lists; a tag holds the delete's snapshot (so that what it reaches is kept
// past any count or age). It returns the snapshot ids in commit order.
func (l *foreignLake) sparkHistory(ctx context.Context, t *testing.T, name string) []int64 {
	t.Helper()
	n := l.name(name)
	stmts := []string{"CREATE TABLE " + n + " " + sparkColumns + " USING iceberg PARTITIONED BY (bucket(2, id)) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='copy-on-write', 'write.update.mode'='merge-on-read')"}
	for k := 0; k < 4; k++ {
		stmts = append(stmts, "INSERT INTO "+n+" "+sparkRows(k*50, k*50+50))
	}
	stmts = append(stmts,
		"DELETE FROM "+n+" WHERE id < 30",
		"UPDATE "+n+" SET amount = amount + 1 WHERE id % 11 = 0",
		"SELECT snapshot_id FROM "+n+".snapshots ORDER BY committed_at")
	res := l.sql(ctx, t, stmts...)
	var ids []int64
	for _, row := range res[len(res)-1].table(t) {
		var id int64
		if _, err := fmt.Sscan(*row[0], &id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	l.sql(ctx, t, fmt.Sprintf("ALTER TABLE %s CREATE TAG audit AS OF VERSION %d", n, ids[4]))
	return ids
}

// TestForeignDifferentialExpireSnapshots runs Spark's expire_snapshots and
// icewright's snapshot retention on two copies of one Spark-written history,
// with the same cutoff (older_than = max_age before the plan's clock) and
// the same count kept (retain_last = min_snapshots), and requires the same
// snapshots expired (those icewright's plan listed) and the same files gone
// from storage.
func TestForeignDifferentialExpireSnapshots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l := newForeignLake(ctx, t)
	ids := l.sparkHistory(ctx, t, "history")
	gap()
	cutoff := time.Now().Truncate(time.Millisecond)
	gap()
	// One snapshot younger than the cutoff: both keep it.
	l.sql(ctx, t, "INSERT INTO "+l.name("history")+" "+sparkRows(1000, 1010))
	l.copyTable(ctx, t, "history", "history_spark")
	l.copyTable(ctx, t, "history", "history_icewright")
	dirs := map[string]string{}
	before := map[string]map[string]time.Time{}
	for _, c := range []string{"history_spark", "history_icewright"} {
		dirs[c] = localPath(l.load(ctx, t, c).Location())
		before[c] = tableFiles(t, dirs[c])
	}
	allIDs := func(c string) []int64 {
		var out []int64
		for _, s := range l.load(ctx, t, c).Metadata().Snapshots() {
			out = append(out, s.SnapshotID)
		}
		slices.Sort(out)
		return out
	}
	idsBefore := allIDs("history_spark")
	if len(idsBefore) != len(ids)+1 || !slices.Equal(idsBefore, allIDs("history_icewright")) {
		t.Fatalf("setup: copies hold snapshots %v and %v, the writer made %v and one more", idsBefore, allIDs("history_icewright"), ids)
	}

	const retain = 2
	res := l.sql(ctx, t, fmt.Sprintf("CALL %s.system.expire_snapshots(table => '%s.history_spark', older_than => %s, retain_last => %d)",
		l.label, l.ns, sparkTimestamp(cutoff), retain))
	t.Logf("Spark expire_snapshots: %s", strings.Join(derefRow(res[0].table(t)[0]), " "))

	now := cutoff.Add(24 * time.Hour)
	cfg := l.configFor(t, "history_icewright", fmt.Sprintf(`
  snapshot_retention {
    max_age       = "1d"
    min_snapshots = %d
  }`, retain))
	p, applied := planApply(ctx, t, cfg, func() time.Time { return now }, nil)
	requireApplied(t, applied)
	exp := actionOf(findTable(t, p, l.name("history_icewright")), diff.ExpireSnapshots)
	if exp == nil {
		t.Fatal("icewright plans no expiry")
	}

	sparkKept, icewrightKept := allIDs("history_spark"), allIDs("history_icewright")
	if !slices.Equal(sparkKept, icewrightKept) {
		t.Errorf("snapshots kept: Spark %v, icewright %v", sparkKept, icewrightKept)
	}
	var sparkExpired []int64
	for _, id := range idsBefore {
		if !slices.Contains(sparkKept, id) {
			sparkExpired = append(sparkExpired, id)
		}
	}
	planned := slices.Sorted(slices.Values(exp.Expire.SnapshotIDs))
	if !slices.Equal(planned, sparkExpired) {
		t.Errorf("expired: icewright's plan lists %v, Spark expired %v", planned, sparkExpired)
	}
	if len(sparkExpired) == 0 {
		t.Fatal("Spark expired nothing: the comparison proves nothing")
	}

	gone := map[string][]string{}
	for c, files := range before {
		after := tableFiles(t, dirs[c])
		for rel := range files {
			if _, ok := after[rel]; !ok {
				gone[c] = append(gone[c], rel)
			}
		}
		slices.Sort(gone[c])
	}
	t.Logf("files gone: Spark %d, icewright %d (icewright planned %d)", len(gone["history_spark"]), len(gone["history_icewright"]), exp.Expire.FilesToDelete)
	if !slices.Equal(gone["history_spark"], gone["history_icewright"]) {
		t.Errorf("files gone differ:\n Spark  %v\n icewright %v", gone["history_spark"], gone["history_icewright"])
	}
	// Spark's counts (data, position delete, equality delete files,
	// manifests, manifest lists, statistics) add up to what left its copy.
	var counted int
	for _, v := range derefRow(res[0].table(t)[0]) {
		var n int
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatalf("expire_snapshots count %q: %v", v, err)
		}
		counted += n
	}
	if counted != len(gone["history_spark"]) {
		t.Errorf("Spark's expire_snapshots counts %d deleted files, %d left its copy", counted, len(gone["history_spark"]))
	}
	if int64(len(gone["history_icewright"])) != exp.Expire.FilesToDelete {
		t.Errorf("icewright deleted %d files, its plan said %d", len(gone["history_icewright"]), exp.Expire.FilesToDelete)
	}
	kinds := map[string]bool{}
	for _, rel := range gone["history_spark"] {
		switch {
		case strings.HasPrefix(rel, "data/") && strings.Contains(rel, "-deletes"):
			kinds["position deletes"] = true
		case strings.HasPrefix(rel, "data/"):
			kinds["data"] = true
		case strings.HasPrefix(filepath.Base(rel), "snap-"):
			kinds["manifest lists"] = true
		case strings.HasSuffix(rel, ".avro"):
			kinds["manifests"] = true
		}
	}
	if len(kinds) < 3 {
		t.Errorf("the expiry released only %v: the history should release data files, manifests and manifest lists", slices.Sorted(maps.Keys(kinds)))
	}
	requireReferencedPresent(ctx, t, "history_icewright", l.load(ctx, t, "history_icewright"))
	requireReferencedPresent(ctx, t, "history_spark", l.load(ctx, t, "history_spark"))
}

// orphanStray is a file laid in a table's directory for the orphan
// comparison: where, and how old.
type orphanStray struct {
	rel string
	old bool
}

// orphanStrays are the files every kind of orphan rule looks at: plain
// old and young orphans, other engines' staging directories, hidden and
// non-Iceberg names, a metadata file no log names, and icewright's own
// quarantine.
var orphanStrays = []orphanStray{
	{"data/orphan-old.parquet", true},
	{"data/orphan-young.parquet", false},
	{"metadata/orphan-old-m0.avro", true},
	{"metadata/99999-0b2c9a7e-orphan.metadata.json", true},
	{"data/_temporary/0/_temporary/attempt_1/part-00000.parquet", true},
	{"data/.spark-staging-1/part-00000.parquet", true},
	{"data/notes.txt", true},
	{"data/_SUCCESS", true},
	{"data/.orphan-old.parquet.crc", true},
	{".icewright-quarantine/20240101T000000Z/data/x.parquet", true},
}

// orphanDifference is one row of docs/orphans.md's table "icewright vs
// Spark's remove_orphan_files".
type orphanDifference struct {
	spark, icewright bool
}

// loadOrphanDifferences reads that table: by "table/file", whether Spark
// lists the file and whether icewright's plan deletes it.
func loadOrphanDifferences(t testing.TB) map[string]orphanDifference {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "docs", "orphans.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "## icewright vs Spark's remove_orphan_files")
	if !ok {
		t.Fatal("docs/orphans.md has no section \"icewright vs Spark's remove_orphan_files\"")
	}
	out := map[string]orphanDifference{}
	yes := map[string]bool{"yes": true, "no": false}
	for _, line := range strings.Split(section, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "## ") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 5 {
			continue
		}
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		s, sok := yes[cells[2]]
		i, iok := yes[cells[3]]
		if !sok || !iok {
			continue // the header and its rule
		}
		out[cells[0]+"/"+cells[1]] = orphanDifference{spark: s, icewright: i}
	}
	if len(out) == 0 {
		t.Fatal("docs/orphans.md: the table \"icewright vs Spark's remove_orphan_files\" has no rows")
	}
	return out
}

// TestForeignDifferentialRemoveOrphanFiles lays stray files in two
// Spark-written tables, then asks Spark's remove_orphan_files (dry run) and
// icewright's plan, with the same cutoff, which files are orphans. `strays`
// gets every file of orphanStrays, and its metadata log is cut to two
// entries (Spark's older metadata.json files are unreferenced; every file
// Spark wrote is made as old as the old strays); `escaped` is partitioned by a string
// whose values Java writes escaped into directory names ("s=a%3Ab") and
// gets one old orphan. Where the tools disagree, docs/orphans.md's table
// must say so (table, file, each tool's answer), and every row of that
// table must be a disagreement seen here: the table is exactly the
// differences.
func TestForeignDifferentialRemoveOrphanFiles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	documented := loadOrphanDifferences(t)
	l := newForeignLake(ctx, t)
	l.sparkHistory(ctx, t, "strays")
	// The metadata log keeps two entries from here on: the older
	// metadata.json files Spark wrote are no longer referenced.
	l.sql(ctx, t, "ALTER TABLE "+l.name("strays")+" SET TBLPROPERTIES ('write.metadata.previous-versions-max'='2')",
		"INSERT INTO "+l.name("strays")+" "+sparkRows(1000, 1010))
	esc := l.name("escaped")
	l.sql(ctx, t,
		"CREATE TABLE "+esc+" (id BIGINT, s STRING) USING iceberg PARTITIONED BY (s) TBLPROPERTIES ('format-version'='2')",
		"INSERT INTO "+esc+" SELECT id, CASE WHEN id % 2 = 0 THEN 'a:b' ELSE 'c d' END FROM range(0, 20)",
		"INSERT INTO "+esc+" SELECT id, CASE WHEN id % 2 = 0 THEN 'a:b' ELSE 'c d' END FROM range(20, 40)")
	strays := map[string][]orphanStray{"strays": orphanStrays, "escaped": {{"data/orphan-old.parquet", true}}}
	now := time.Now()
	old, young := now.Add(-foreignSkew), now.Add(-time.Hour)
	cutoff := now.Add(-72 * time.Hour)
	cfg := l.config(t, `
  orphan_files {
    older_than       = "3d"
    max_orphan_ratio = 0.95
  }`)
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(strays)) {
		dir := localPath(l.load(ctx, t, name).Location())
		// Everything Spark wrote is as old as the old strays, so that
		// what it left unreferenced is judged by both tools too.
		for f := range tableFiles(t, dir) {
			if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(f)), old, old); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range strays[name] {
			p := filepath.Join(dir, filepath.FromSlash(s.rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("not referenced by any snapshot"), 0o644); err != nil {
				t.Fatal(err)
			}
			at := young
			if s.old {
				at = old
			}
			if err := os.Chtimes(p, at, at); err != nil {
				t.Fatal(err)
			}
		}
		rel := func(p string) string {
			r, err := filepath.Rel(dir, localPath(p))
			if err != nil || strings.HasPrefix(r, "..") {
				t.Fatalf("%s is outside the table %s", p, dir)
			}
			return filepath.ToSlash(r)
		}
		sparkSays := map[string]bool{}
		res := l.sql(ctx, t, fmt.Sprintf("CALL %s.system.remove_orphan_files(table => '%s.%s', older_than => %s, dry_run => true)",
			l.label, l.ns, name, sparkTimestamp(cutoff)))
		for _, row := range res[0].table(t) {
			sparkSays[rel(*row[0])] = true
		}
		p := planOnly(ctx, t, cfg, func() time.Time { return now })
		tp := findTable(t, p, l.name(name))
		icewrightSays := map[string]bool{}
		if act := actionOf(tp, diff.RemoveOrphanFiles); act != nil {
			for _, path := range act.Orphans.Paths {
				icewrightSays[rel(path)] = true
			}
		}
		t.Logf("%s: Spark lists %v; icewright plans %v, refuses %+v", name, slices.Sorted(maps.Keys(sparkSays)), slices.Sorted(maps.Keys(icewrightSays)), tp.Refusals)
		if !sparkSays["data/orphan-old.parquet"] {
			t.Errorf("%s: Spark does not list the plain old orphan", name)
		}
		for _, f := range slices.Sorted(maps.Keys(tableFiles(t, dir))) {
			key := name + "/" + f
			got := orphanDifference{spark: sparkSays[f], icewright: icewrightSays[f]}
			want, ok := documented[key]
			switch {
			case got.spark == got.icewright && ok:
				t.Errorf("%s: docs/orphans.md lists a difference (Spark %v, icewright %v), both tools answer %v", key, want.spark, want.icewright, got.spark)
			case got.spark != got.icewright && !ok:
				t.Errorf("%s: Spark lists it %v, icewright %v: a difference docs/orphans.md does not explain", key, got.spark, got.icewright)
			case got.spark != got.icewright && got != want:
				t.Errorf("%s: Spark lists it %v, icewright %v; docs/orphans.md says Spark %v, icewright %v", key, got.spark, got.icewright, want.spark, want.icewright)
			}
			seen[key] = true
		}
		for f := range sparkSays {
			if !seen[name+"/"+f] {
				t.Errorf("%s: Spark lists %s, which is not in the table's directory", name, f)
			}
		}
	}
	for key := range documented {
		if !seen[key] {
			t.Errorf("docs/orphans.md lists %s, which the test does not lay down", key)
		}
	}
}
