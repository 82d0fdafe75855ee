package orphans_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// scopeLake is a sqlite catalog whose warehouse is on a private S3 server,
// with the server's settings in the catalog block only (the tables'
// metadata properties hold none), and a config for it with orphanBlock
// as the policy's orphan_files body.
type scopeLake struct {
	env   testenv.S3Env
	dir   string
	cat   catalog.Catalog
	s3io  func(bucket string) iceio.IO
	write func(url, body string)
	list  func(url string) []string
}

func newScopeLake(t *testing.T) *scopeLake {
	t.Helper()
	ctx := context.Background()
	env, _ := testenv.StartS3(t)
	dir := t.TempDir()
	db, err := lakehouse.OpenSQLiteDB(filepath.Join(dir, "catalog.db"))
	must(t, err)
	t.Cleanup(func() { _ = db.Close() })
	props := iceberg.Properties(env.Properties())
	props["warehouse"] = env.URL("warehouse")
	cat, err := lakehouse.NewSQLCatalog("lake", db, sqlcat.SQLite, props)
	must(t, err)
	must(t, cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil))
	l := &scopeLake{env: env, dir: dir, cat: cat}
	l.s3io = func(bucket string) iceio.IO {
		f, err := iceio.LoadFS(ctx, env.Properties(), "s3://"+bucket+"/")
		must(t, err)
		return f
	}
	l.write = func(url, body string) {
		b, _, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
		must(t, l.s3io(b).(iceio.WriteFileIO).WriteFile(url, []byte(body)))
	}
	l.list = func(url string) []string {
		b, _, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
		var out []string
		err := l.s3io(b).(iceio.ListableIO).WalkDir(url, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, p)
			}
			return err
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	return l
}

func (l *scopeLake) config(t *testing.T, orphanBlock string) *config.Config {
	t.Helper()
	hcl := "catalog \"lake\" {\n  type = \"sql\"\n  uri = \"sqlite:" + filepath.Join(l.dir, "catalog.db") + "\"\n  warehouse = \"" + l.env.URL("warehouse") + "\"\n  properties = {\n"
	for k, v := range l.env.Properties() {
		hcl += "    \"" + k + "\" = \"" + v + "\"\n"
	}
	hcl += "  }\n}\npolicy \"sweep\" {\n  orphan_files {\n    older_than = \"3d\"\n" + orphanBlock + "  }\n}\ntables \"lake.ns.*\" {\n  policy = policy.sweep\n}\n"
	must(t, os.WriteFile(filepath.Join(l.dir, "main.icewright.hcl"), []byte(hcl), 0o644))
	cfg, diags := config.Load(l.dir, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return cfg
}

// scopePlanApply plans lake.ns.t ten days from now (object stores have no
// settable mtime) and, when the plan has an orphan action, applies it.
func scopePlanApply(t *testing.T, cfg *config.Config) (*apply.Results, []string, string) {
	t.Helper()
	ctx := context.Background()
	later := func() time.Time { return time.Now().Add(10 * 24 * time.Hour) }
	sess := providers.Open(cfg, providers.Options{Now: later})
	t.Cleanup(func() { _ = sess.Close() })
	plan, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Version: "test", Now: later})
	must(t, err)
	if len(plan.Errors) > 0 {
		t.Fatalf("plan errors %v", plan.Errors)
	}
	tp := planOf(t, plan, "lake.ns.t")
	var refusal string
	for _, r := range tp.Refusals {
		refusal += r.Reason
	}
	o := orphansOf(tp)
	if o == nil {
		return nil, nil, refusal
	}
	res, err := apply.Apply(ctx, cfg, sess, plan, apply.ApplyOptions{Version: "test", Now: later})
	must(t, err)
	return res, o.Paths, refusal
}

// withDataPath creates lake.ns.t on the table bucket with 2 commits, then
// points its write.data.path at dataPath, as another engine could: iceberg-go
// writes only to the bucket of the table location.
func (l *scopeLake) withDataPath(t *testing.T, dataPath string) *table.Table {
	t.Helper()
	ctx := context.Background()
	tbl, err := l.cat.CreateTable(ctx, table.Identifier{"ns", "t"}, lakehouse.EventsSchema())
	must(t, err)
	tbl = testkit.Append(t, tbl, 2, 10, 1)
	tx := tbl.NewTransaction()
	must(t, tx.SetProperties(iceberg.Properties{"write.data.path": dataPath}))
	tbl, err = tx.Commit(ctx)
	must(t, err)
	return tbl
}

// Issue 17.4: a write.data.path on another bucket is listed and deleted
// with the catalog block's storage settings (the table's metadata has no
// endpoint or credentials): the plan finds the stray there, apply deletes
// exactly it, and the objects of both buckets are checked afterwards.
func TestSweepOtherBucketUsesCatalogSettingsS3(t *testing.T) {
	l := newScopeLake(t)
	other := "s3://" + l.env.OtherBucket + "/" + l.env.Prefix + "/t-data"
	tbl := l.withDataPath(t, other)
	for k := range tbl.Properties() {
		if strings.HasPrefix(k, "s3.") {
			t.Fatalf("the table's metadata has storage setting %s: the test would not tell", k)
		}
	}
	// A file of another writer next to the stray: not an Iceberg name,
	// reported only, and kept.
	l.write(other+"/_SUCCESS", "")
	stray := other + "/00000-9-stray.parquet"
	l.write(stray, "stray")
	onOther := slices.DeleteFunc(l.list(other), func(p string) bool { return p == stray })
	mainBefore := l.list(l.env.URL("warehouse"))

	res, paths, refusal := scopePlanApply(t, l.config(t, ""))
	if refusal != "" || !slices.Equal(paths, []string{stray}) {
		t.Fatalf("plan paths %v, refusal %q: want only %s", paths, refusal, stray)
	}
	if ar := actionResult(t, res, "lake.ns.t"); ar.FilesDeleted != 1 || len(ar.DeleteErrors) > 0 {
		t.Fatalf("result %+v", ar)
	}
	if got := l.list(other); !slices.Equal(got, onOther) {
		t.Fatalf("other bucket after apply %v, want %v", got, onOther)
	}
	if got := l.list(l.env.URL("warehouse")); !slices.Equal(got, mainBefore) {
		t.Fatalf("table bucket after apply %v, want %v", got, mainBefore)
	}
}

// Issue 17.5: a configured root with no objects yet is an empty listing on
// S3, as it is locally; the sweep of the rest goes on.
func TestSweepEmptyRootS3(t *testing.T) {
	l := newScopeLake(t)
	empty := l.env.URL("nothing-yet", "t")
	tbl, err := l.cat.CreateTable(context.Background(), table.Identifier{"ns", "t"}, lakehouse.EventsSchema(),
		catalog.WithProperties(iceberg.Properties{"write.folder-storage.path": empty}))
	must(t, err)
	tbl = testkit.Append(t, tbl, 1, 10, 1)
	stray := tbl.Location() + "/data/00000-9-stray.parquet"
	l.write(stray, "stray")
	res, paths, refusal := scopePlanApply(t, l.config(t, ""))
	if refusal != "" || !slices.Equal(paths, []string{stray}) {
		t.Fatalf("plan paths %v, refusal %q", paths, refusal)
	}
	if ar := actionResult(t, res, "lake.ns.t"); ar.FilesDeleted != 1 {
		t.Fatalf("result %+v", ar)
	}
}

// Issue 17.5: a write.data.path at a bucket root is refused, naming the
// root, unless the policy names it in allow_storage_roots; then the whole
// bucket is swept and only its stray goes.
func TestSweepBucketRootS3(t *testing.T) {
	l := newScopeLake(t)
	root := "s3://" + l.env.OtherBucket
	l.withDataPath(t, root)
	stray := root + "/00000-9-stray.parquet"
	l.write(stray, "stray")
	before := l.list(root + "/")

	_, paths, refusal := scopePlanApply(t, l.config(t, ""))
	if paths != nil || !strings.Contains(refusal, `"`+root+`/"`) || !strings.Contains(refusal, "allow_storage_roots") {
		t.Fatalf("paths %v, refusal %q", paths, refusal)
	}
	if got := l.list(root + "/"); !slices.Equal(got, before) {
		t.Fatalf("bucket changed by a refused sweep: %v", got)
	}

	res, paths, refusal := scopePlanApply(t, l.config(t, "    allow_storage_roots = [\""+root+"\"]\n"))
	if refusal != "" || !slices.Equal(paths, []string{stray}) {
		t.Fatalf("opted in: paths %v, refusal %q", paths, refusal)
	}
	if ar := actionResult(t, res, "lake.ns.t"); ar.FilesDeleted != 1 {
		t.Fatalf("result %+v", ar)
	}
	want := slices.DeleteFunc(slices.Clone(before), func(p string) bool { return p == stray })
	if got := l.list(root + "/"); !slices.Equal(got, want) {
		t.Fatalf("bucket after apply %v, want %v", got, want)
	}
}
