package orphans

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

func TestRemoveOrphanFilesRules(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	now := time.Now()
	old := now.Add(-10 * 24 * time.Hour)
	root := testkit.LocalPath(t, tbl.Location())
	data := filepath.Join(root, "data")
	write := func(p string, mtime time.Time) string {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("stray"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	oldStray := write(filepath.Join(data, "old-stray.parquet"), old)
	youngStray := write(filepath.Join(data, "young-stray.parquet"), now)
	outside := write(filepath.Join(l.Dir, "outside.parquet"), old)
	target := write(filepath.Join(l.Dir, "elsewhere", "target.parquet"), old)
	link := filepath.Join(data, "link.parquet")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	linkDir := filepath.Join(data, "linkdir")
	if err := os.Symlink(filepath.Dir(target), linkDir); err != nil {
		t.Fatal(err)
	}
	// A live data file listed by mistake, made old.
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	live := testkit.LocalPath(t, tasks[0].File.FilePath())
	if err := os.Chtimes(live, old, old); err != nil {
		t.Fatal(err)
	}
	// And the current metadata file and a manifest list, made old too.
	metaFile := testkit.LocalPath(t, tbl.MetadataLocation())
	manifestList := testkit.LocalPath(t, tbl.CurrentSnapshot().ManifestList)
	for _, p := range []string{metaFile, manifestList} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	spec := Spec{
		Paths: []string{oldStray, youngStray, outside, link, filepath.Join(linkDir, "target.parquet"), live,
			filepath.Join(data, "gone.parquet"), metaFile, manifestList},
		OlderThan: 3 * 24 * time.Hour, Now: now,
	}

	if _, err := Remove(ctx, l.Cat, tbl, Spec{Paths: spec.Paths, OlderThan: time.Hour, Now: now}); !errors.Is(err, store.ErrRefused) {
		t.Fatalf("older_than 1h: want store.ErrRefused, got %v", err)
	}

	res, err := Remove(ctx, l.Cat, tbl, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 1 {
		t.Fatalf("deleted %d, want only the old stray: %+v", res.FilesDeleted, res)
	}
	if _, err := os.Stat(oldStray); !os.IsNotExist(err) {
		t.Fatal("old stray survived")
	}
	for _, p := range []string{youngStray, outside, target, live, metaFile, manifestList} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s was deleted: %v", p, err)
		}
	}
	if _, err := os.Lstat(link); err != nil {
		t.Fatal("symlink deleted")
	}
	if len(res.Skipped) != 8 {
		t.Fatalf("skipped %d: %v", len(res.Skipped), res.Skipped)
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, l.Load()), testkit.Seq(0, 10))
}

func TestRemoveOrphanFilesRefusesGCDisabled(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(iceberg.Properties{"gc.enabled": "false"}), 0, 10)
	p := filepath.Join(testkit.LocalPath(t, tbl.Location()), "data", "stray.parquet")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	_, err := Remove(ctx, l.Cat, tbl, Spec{Paths: []string{p}, OlderThan: 72 * time.Hour, Now: time.Now()})
	if !errors.Is(err, store.ErrRefused) {
		t.Fatalf("want store.ErrRefused, got %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal("file deleted despite gc.enabled=false")
	}
}

func TestNormPath(t *testing.T) {
	cases := map[string]string{
		"s3a://b/k//x/":        "s3://b/k/x",
		"/tmp/a//b":            "file:///tmp/a/b",
		"file:///tmp/a/b":      "file:///tmp/a/b",
		"S3://bucket/key.avro": "s3://bucket/key.avro",
	}
	for in, want := range cases {
		if got := store.NormPath(in); got != want {
			t.Errorf("store.NormPath(%q) = %q, want %q", in, got, want)
		}
	}
	roots := sweepRoots("file:///w/t", map[string]string{"write.data.path": "s3a://b/d"}, store.NormPath)
	if plainRootOf(roots, "/w/t/data/x") == "" || plainRootOf(roots, "s3://b/d/f") == "" {
		t.Fatal("in-scope path rejected")
	}
	for _, p := range []string{"/w/t", "/w/tx/data", "/w/t/../etc/passwd", "s3://b/dx"} {
		if plainRootOf(roots, p) != "" {
			t.Errorf("%s accepted as in scope", p)
		}
	}
	_ = slices.Contains[[]string]
}

func TestRemoveOrphanFilesQuarantine(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	root := testkit.LocalPath(t, tbl.Location())
	p := filepath.Join(root, "data", "sub", "stray.parquet")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("stray"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * 24 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	res, err := Remove(ctx, l.Cat, tbl, Spec{Paths: []string{p}, OlderThan: 72 * time.Hour, Now: time.Now(), Quarantine: true, RunID: "run1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesQuarantined != 1 || res.FilesDeleted != 0 {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatal("original still there")
	}
	moved := filepath.Join(root, QuarantineDir, "run1", "data", "sub", "stray.parquet")
	if b, err := os.ReadFile(moved); err != nil || string(b) != "stray" {
		t.Fatalf("quarantined copy: %q %v", b, err)
	}
}

// The apply-time re-check of nested tables names a table created since the
// plan inside the sweep, in another catalog, from the session's fresh
// listing (Spec.OtherTables).
func TestNestedAtApplySeesNewTables(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := testkit.NewLakehouse(t, filepath.Join(dir, "a"), "a")
	b := testkit.NewLakehouse(t, filepath.Join(dir, "b"), "b")
	tbl := a.CreateTable(t, "s.one", testkit.TableOptions{})
	a.CreateTable(t, "s.two", testkit.TableOptions{})
	sess := sessionFor(t, a, b)
	roots := sweepRoots(tbl.Location(), tbl.Properties(), store.NormPath)
	spec := Spec{Address: "a.s.one", OtherTables: sess.TableLocations}
	nestedAtApply := func() ([]string, error) {
		ts, self, err := tablesAtApply(ctx, a.Catalog, tbl, spec)
		if err != nil {
			return nil, err
		}
		return overlappingTables(self, ts.Locs, roots, make([]string, len(roots)), store.NormPath), nil
	}
	nested, err := nestedAtApply()
	if err != nil || len(nested) != 0 {
		t.Fatalf("before: nested %v %v", nested, err)
	}
	b.CreateTable(t, "q.inner", testkit.TableOptions{Location: tbl.Location() + "/data/inner"})
	nested, err = nestedAtApply()
	if err != nil || len(nested) != 1 || nested[0] != "b.q.inner" {
		t.Fatalf("nested %v %v", nested, err)
	}
}

// Apply's re-check keeps the listing's staging rule: a planned path inside
// another engine's staging directory (a plan of an icewright without the
// rule) is skipped, never deleted, while a real orphan beside it goes; and
// a quarantine run holding a file moved out of one is never purged.
func TestRemoveKeepsStagingDirectories(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	root := testkit.LocalPath(t, tbl.Location())
	old := time.Now().Add(-10 * 24 * time.Hour)
	var staged []string
	for _, rel := range []string{"data/_temporary/0/_temporary/attempt_1/part-0.parquet", "data/.hive-staging_hive_1/-ext-1/000000_0.parquet"} {
		p := filepath.Join(root, rel)
		testkit.WriteFileAt(t, p, 5, old)
		staged = append(staged, p)
	}
	stray := filepath.Join(root, "data", "stray.parquet")
	testkit.WriteFileAt(t, stray, 5, old)
	res, err := Remove(ctx, l.Cat, tbl, Spec{Paths: append([]string{stray}, staged...), OlderThan: 72 * time.Hour, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesDeleted != 1 || len(res.Skipped) != 2 {
		t.Fatalf("deleted %d, skipped %v: want the stray deleted and both staged files skipped", res.FilesDeleted, res.Skipped)
	}
	for _, p := range staged {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s deleted: %v", p, err)
		}
	}

	m := QuarantineManifest{TableUUID: "u", Files: []diff.QuarantinedFile{
		{Original: filepath.Join(root, "data", "x.parquet"), Quarantined: "/q/run/data/x.parquet"},
		{Original: staged[0], Quarantined: "/q/run/data/_temporary/0/_temporary/attempt_1/part-0.parquet"},
	}}
	rule := newStagingRule(tbl.Metadata(), store.NormPath)
	why := runProblem("/q/run", m, "u", func(p string) string { return rule.stagingDir(store.NormPath(p)) })
	if !strings.Contains(why, "other engines' staging directories ("+staged[0]+")") {
		t.Fatalf("run problem %q: want the staged original named", why)
	}
	if why := runProblem("/q/run", QuarantineManifest{TableUUID: "u", Files: m.Files[:1]}, "u", func(p string) string { return rule.stagingDir(store.NormPath(p)) }); why != "" {
		t.Fatalf("a run of the table's own files has a problem: %q", why)
	}
}
