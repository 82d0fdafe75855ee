package orphans_test

// Issue 17 on the real S3 server (the shared versitygw of
// scripts/services.sh), with faults injected by testenv.FaultProxy in front
// of it. Every test checks the objects in the bucket afterwards, read
// directly (not through the proxy), not only the report.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
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
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/orphans"
	"github.com/icewright/icewright/providers/testkit"
)

// s3Lake is a sqlite catalog whose tables live on the shared S3 server,
// reached through a fault proxy.
type s3Lake struct {
	t      *testing.T
	dir    string
	env    testenv.S3Env // direct
	proxy  *testenv.FaultProxy
	cat    *sqlcat.Catalog
	direct iceio.IO // the bucket without the proxy, to check objects
	cfg    *config.Config
	later  time.Time // the clock of plan and apply: every file is old
}

func newS3Lake(t *testing.T, tables ...string) *s3Lake {
	t.Helper()
	ctx := context.Background()
	env := testenv.S3(t)
	proxy := testenv.StartFaultProxy(t, env.Endpoint)
	penv := env.Through(proxy)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "catalog.db")
	db, err := lakehouse.OpenSQLiteDB(dbPath)
	must(t, err)
	t.Cleanup(func() { _ = db.Close() })
	props := iceberg.Properties(penv.Properties())
	props["warehouse"] = penv.URL("warehouse")
	cat, err := lakehouse.NewSQLCatalog("lake", db, sqlcat.SQLite, props)
	must(t, err)
	must(t, cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil))
	for _, name := range tables {
		tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", name}, lakehouse.EventsSchema(), catalog.WithLocation(penv.URL("warehouse", name)))
		must(t, err)
		testkit.Append(t, tbl, 2, 10, 1)
	}
	direct, err := iceio.LoadFS(ctx, env.Properties(), env.URL())
	must(t, err)

	hcl := "catalog \"lake\" {\n  type = \"sql\"\n  uri = \"sqlite:" + dbPath + "\"\n  warehouse = \"" + penv.URL("warehouse") + "\"\n  properties = {\n"
	for k, v := range penv.Properties() {
		hcl += fmt.Sprintf("    %q = %q\n", k, v)
	}
	// A short deadline, so a stalled server fails within seconds.
	hcl += fmt.Sprintf("    %q = \"1s\"\n", providers.RequestTimeoutProperty)
	hcl += "  }\n}\n" + `
policy "sweep" {
  properties = {
    "write.parquet.compression-codec" = "zstd"
  }
  orphan_files {
    older_than = "3d"
    quarantine = "7d"
  }
}

tables "lake.sales.*" {
  policy = policy.sweep
}
`
	must(t, os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(hcl), 0o644))
	cfg, diags := config.Load(dir, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return &s3Lake{t: t, dir: dir, env: env, proxy: proxy, cat: cat, direct: direct, cfg: cfg, later: time.Now().Add(10 * 24 * time.Hour)}
}

// url is the s3:// URL of elem below the test's prefix.
func (l *s3Lake) url(elem ...string) string { return l.env.URL(elem...) }

func (l *s3Lake) session() *providers.Session {
	sess := providers.Open(l.cfg, providers.Options{Now: func() time.Time { return l.later }})
	l.t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// strays writes n stray files into table name's data directory.
func (l *s3Lake) strays(name string, n int) []string {
	var out []string
	for i := range n {
		p := l.url("warehouse", name, "data", fmt.Sprintf("stray-%d.parquet", i))
		must(l.t, l.direct.(iceio.WriteFileIO).WriteFile(p, []byte(fmt.Sprintf("stray %d of %s", i, name))))
		out = append(out, p)
	}
	return out
}

// objects lists every object under the table's location, relative to it,
// with its content.
func (l *s3Lake) objects(name string) map[string]string {
	l.t.Helper()
	root := l.url("warehouse", name)
	out := map[string]string{}
	must(l.t, l.direct.(iceio.ListableIO).WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := l.direct.Open(p)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(f)
		_ = f.Close()
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, "s3://"), strings.TrimPrefix(root, "s3://")+"/")
		out[rel] = string(b)
		return nil
	}))
	return out
}

func (l *s3Lake) plan(ctx context.Context, sess *providers.Session) *diff.Plan {
	l.t.Helper()
	p, err := apply.Plan(ctx, l.cfg, sess, apply.PlanOptions{Version: "test", Now: func() time.Time { return l.later }})
	must(l.t, err)
	return p
}

func (l *s3Lake) apply(ctx context.Context, sess *providers.Session, p *diff.Plan) *apply.Results {
	l.t.Helper()
	res, err := apply.Apply(ctx, l.cfg, sess, p, apply.ApplyOptions{Version: "test", Now: func() time.Time { return l.later }})
	must(l.t, err)
	return res
}

func runIDOf(t *testing.T, objs map[string]string) string {
	t.Helper()
	var runs []string
	for k := range objs {
		if rest, ok := strings.CutPrefix(k, orphans.QuarantineDir+"/"); ok {
			run, _, _ := strings.Cut(rest, "/")
			if !slices.Contains(runs, run) {
				runs = append(runs, run)
			}
		}
	}
	if len(runs) != 1 {
		t.Fatalf("quarantine runs in the bucket: %v", runs)
	}
	return runs[0]
}

func resultsJSON(t *testing.T, r *apply.Results) string {
	t.Helper()
	b, err := json.Marshal(r)
	must(t, err)
	return string(b)
}

// TestS3QuarantineFinalManifestWriteFails: the second PUT of the run's
// manifest (the final one, after the moves) answers 500 every time. The
// apply fails the action and exits 1 (Results.Failed), saying so in text
// and JSON; the files are in the quarantine under the first manifest
// (moved=false). A restore while GETs of the quarantined copies answer 503
// restores nothing, keeps the manifest and fails; once the store answers,
// restore puts every file back and only then removes the manifest.
func TestS3QuarantineFinalManifestWriteFails(t *testing.T) {
	ctx := context.Background()
	l := newS3Lake(t, "orders")
	strays := l.strays("orders", 5)
	before := l.objects("orders")
	sess := l.session()
	p := l.plan(ctx, sess)
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors %+v", p.Errors)
	}
	if o := orphansOf(planOf(t, p, "lake.sales.orders")); o == nil || len(o.Paths) != 5 {
		t.Fatalf("plan: %+v", planOf(t, p, "lake.sales.orders"))
	}
	l.proxy.Add(testenv.Fault{Method: "PUT", Path: orphans.QuarantineManifestName, Nth: 2, Times: 100, Status: 500, Code: "InternalError"})
	res := l.apply(ctx, sess, p)
	ar := actionResult(t, res, "lake.sales.orders")
	if !res.Failed() || ar.Status != apply.StatusFailed || ar.FilesQuarantined != 5 || len(ar.DeleteErrors) != 1 || !strings.Contains(ar.DeleteErrors[0], "final manifest") {
		t.Fatalf("apply with the final manifest write failing: failed=%v %+v", res.Failed(), ar)
	}
	if j := resultsJSON(t, res); !strings.Contains(j, `"status":"failed"`) || !strings.Contains(j, "final manifest") {
		t.Fatalf("apply -json does not say it failed: %s", j)
	}
	after := l.objects("orders")
	run := runIDOf(t, after)
	manKey := orphans.QuarantineDir + "/" + run + "/" + orphans.QuarantineManifestName
	var man orphans.QuarantineManifest
	must(t, json.Unmarshal([]byte(after[manKey]), &man))
	if len(man.Files) != 5 {
		t.Fatalf("manifest in the bucket: %+v", man)
	}
	for i, s := range strays {
		rel := fmt.Sprintf("data/stray-%d.parquet", i)
		if _, ok := after[rel]; ok {
			t.Fatalf("%s still in place", s)
		}
		if after[orphans.QuarantineDir+"/"+run+"/"+rel] != before[rel] {
			t.Fatalf("%s not in the quarantine", rel)
		}
	}

	// Restore while the quarantined copies cannot be read.
	l.proxy.Clear()
	l.proxy.Add(testenv.Fault{Method: "GET", Path: orphans.QuarantineDir + "/" + run + "/data/", Status: 503, Code: "SlowDown"})
	rr, err := sess.RestoreQuarantine(ctx, "lake.sales.orders", run)
	must(t, err)
	if len(rr.Restored) != 0 || len(rr.Refused) != 5 || rr.ManifestKept == "" || !strings.Contains(rr.Refused[0], "could not be checked") {
		t.Fatalf("restore with GETs failing: %+v", rr)
	}
	if got := l.objects("orders"); !mapsEqualS(got, after) {
		t.Fatalf("a restore that could not read the copies changed the bucket:\n got %v\nwant %v", keys(got), keys(after))
	}
	if l.proxy.Faulted() == 0 {
		t.Fatal("no request was faulted")
	}

	l.proxy.Clear()
	rr, err = sess.RestoreQuarantine(ctx, "lake.sales.orders", run)
	must(t, err)
	if len(rr.Restored) != 5 || len(rr.Refused) != 0 || rr.ManifestKept != "" {
		t.Fatalf("restore: %+v", rr)
	}
	if got := l.objects("orders"); !mapsEqualS(dataOnly(got), dataOnly(before)) {
		t.Fatalf("after restore the bucket differs:\n got %v\nwant %v", keys(got), keys(before))
	}
}

// TestS3QuarantineMoveFailures: one quarantined copy cannot be written
// (500 on its PUT), one original cannot be deleted (an InternalError for
// its key in the batch's DeleteObjects, however often it is sent again). The
// counts say exactly where each file is: 3 moved, 1 still in place, 1 in
// both places; the action fails; the bucket holds exactly that; the
// manifest lists the 4 files that are in the quarantine; restore puts back
// the moved ones and drops the copy of the one in both places.
func TestS3QuarantineMoveFailures(t *testing.T) {
	ctx := context.Background()
	l := newS3Lake(t, "orders")
	l.strays("orders", 5)
	before := l.objects("orders")
	sess := l.session()
	p := l.plan(ctx, sess)
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors %+v", p.Errors)
	}
	l.proxy.Add(testenv.Fault{Method: "PUT", Path: "/data/stray-1.parquet", Status: 500, Code: "InternalError"})
	// The originals go in one DeleteObjects (issue 30): stray-2's key is
	// answered with a per-key error.
	l.proxy.Add(testenv.Fault{Method: http.MethodPost, Query: "delete", Answer: testenv.DeleteObjectsFailing(t, l.env.Bucket, l.direct.Remove, func(_ int, key string) bool {
		return strings.HasSuffix(key, "/data/stray-2.parquet")
	}, "InternalError")})
	res := l.apply(ctx, sess, p)
	ar := actionResult(t, res, "lake.sales.orders")
	if !res.Failed() || ar.Status != apply.StatusFailed || ar.FilesQuarantined != 3 || ar.FilesNotMoved != 1 || ar.FilesInBothPlaces != 1 || len(ar.DeleteErrors) != 2 {
		t.Fatalf("apply: failed=%v %+v", res.Failed(), ar)
	}
	j := resultsJSON(t, res)
	for _, want := range []string{`"files_quarantined":3`, `"files_not_moved":1`, `"files_in_both_places":1`, "stray-1.parquet: not quarantined, still in place", "stray-2.parquet: copied into the quarantine, original still in place"} {
		if !strings.Contains(j, want) {
			t.Fatalf("apply -json lacks %q: %s", want, j)
		}
	}
	after := l.objects("orders")
	run := runIDOf(t, after)
	q := orphans.QuarantineDir + "/" + run + "/"
	for i, where := range []string{"quarantine", "place", "both", "quarantine", "quarantine"} {
		rel := fmt.Sprintf("data/stray-%d.parquet", i)
		_, inPlace := after[rel]
		_, inRun := after[q+rel]
		if got := map[[2]bool]string{{true, false}: "place", {false, true}: "quarantine", {true, true}: "both", {false, false}: "nowhere"}[[2]bool{inPlace, inRun}]; got != where {
			t.Errorf("%s is in %s, want %s", rel, got, where)
		}
	}
	var man orphans.QuarantineManifest
	must(t, json.Unmarshal([]byte(after[q+orphans.QuarantineManifestName]), &man))
	if len(man.Files) != 4 {
		t.Fatalf("manifest lists %d files, want the 4 in the quarantine: %+v", len(man.Files), man.Files)
	}

	l.proxy.Clear()
	l.restoreAll(ctx, sess, "orders", run, 4, before)
}

// TestS3ListingCutShort: every listing of the table's storage is cut off
// mid-body. The plan does not propose any deletion for that table (it is
// an error or a refusal), and nothing in the bucket changes.
func TestS3ListingCutShort(t *testing.T) {
	ctx := context.Background()
	l := newS3Lake(t, "orders")
	l.strays("orders", 2)
	before := l.objects("orders")
	l.proxy.Add(testenv.Fault{Method: "GET", Query: "list-type", Cut: true})
	sess := l.session()
	p := l.plan(ctx, sess)
	for _, tp := range p.Tables {
		if o := orphansOf(tp); o != nil {
			t.Fatalf("a plan on a cut listing proposes deleting %v", o.Paths)
		}
		if len(tp.Refusals) > 0 {
			t.Logf("refused: %+v", tp.Refusals)
		}
	}
	if len(p.Errors) == 0 && (len(p.Tables) != 1 || len(p.Tables[0].Refusals) == 0) {
		t.Fatalf("a cut listing is neither an error nor a refusal: %+v", p)
	}
	t.Logf("plan errors: %+v", p.Errors)
	if l.proxy.Faulted() == 0 {
		t.Fatal("no listing was cut")
	}
	res := l.apply(ctx, sess, p)
	if !res.Failed() {
		t.Fatalf("apply of a plan with an error succeeded: %+v", res.Summary)
	}
	if got := l.objects("orders"); !mapsEqualS(dataOnly(got), dataOnly(before)) {
		t.Fatalf("bucket changed: %v", keys(got))
	}
}

// TestS3StalledServerFailsOneTable: every request for one table's objects
// stalls (the server accepts and never answers), as a stopped server does.
// With a 1s request timeout the plan fails that table within seconds and
// plans the other; an apply with the stall starting mid-run fails that
// table, applies the other, and nothing hangs.
func TestS3StalledServerFailsOneTable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := newS3Lake(t, "stuck", "fine")
	l.strays("stuck", 2)
	l.strays("fine", 2)
	stuckBefore := l.objects("stuck")
	sess := l.session()

	l.proxy.Add(testenv.Fault{Path: "/warehouse/stuck/", Stall: true})
	start := time.Now()
	p := l.plan(ctx, sess)
	took := time.Since(start)
	if took > 90*time.Second {
		t.Fatalf("plan took %s with a stalled table", took)
	}
	var failed []string
	for _, e := range p.Errors {
		failed = append(failed, e.Address)
	}
	if !slices.Equal(failed, []string{"lake.sales.stuck"}) {
		t.Fatalf("plan errors %+v (took %s)", p.Errors, took)
	}
	if !strings.Contains(p.Errors[0].Message, "no progress") && !strings.Contains(p.Errors[0].Message, "deadline") {
		t.Fatalf("the error does not say the server stalled: %s", p.Errors[0].Message)
	}
	// The other table is planned; its sweep is refused, rightly: with one
	// table unreadable, no one can tell that it does not lie inside the
	// sweep.
	fine := planOf(t, p, "lake.sales.fine")
	if len(fine.Actions) != 1 || fine.Actions[0].Type != diff.UpdateProperties || len(fine.Refusals) != 1 || !strings.Contains(fine.Refusals[0].Reason, "lake.sales.stuck") {
		t.Fatalf("the other table: %+v", fine)
	}
	t.Logf("plan with one stalled table took %s", took)

	// Apply a clean plan of both, with the stall from the start of apply.
	l.proxy.Clear()
	l.proxy.Release()
	p = l.plan(ctx, sess)
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors %+v", p.Errors)
	}
	l.proxy.Add(testenv.Fault{Path: "/warehouse/stuck/", Stall: true})
	start = time.Now()
	res, err := apply.Apply(ctx, l.cfg, sess, p, apply.ApplyOptions{Version: "test", Now: func() time.Time { return l.later }, MaxRetries: -1})
	must(t, err)
	took = time.Since(start)
	if took > 2*time.Minute {
		t.Fatalf("apply took %s", took)
	}
	for _, tr := range res.Tables {
		switch tr.Address {
		case "lake.sales.stuck":
			if tr.Status != apply.StatusFailed {
				t.Errorf("stuck: %s", tr.Status)
			}
		case "lake.sales.fine":
			// Its properties are applied.
			for _, a := range tr.Actions {
				if a.Type == diff.UpdateProperties && a.Status != apply.StatusDone {
					t.Errorf("fine: %+v", a)
				}
				// Its sweep runs: the session knows every table's location
				// from the plan (the session caches table locations), so the stalled
				// table need not be read again.
				if a.Type == diff.RemoveOrphanFiles && a.Status == apply.StatusFailed && !strings.Contains(a.Error, "other tables") {
					t.Errorf("fine's sweep: %+v", a)
				}
			}
		}
	}
	l.proxy.Clear()
	l.proxy.Release()
	if got := l.objects("stuck"); !mapsEqualS(got, stuckBefore) {
		t.Fatalf("stalled table's bucket changed: %v", keys(got))
	}
	if tbl, err := l.cat.LoadTable(ctx, table.Identifier{"sales", "fine"}); err != nil || tbl.Properties()["write.parquet.compression-codec"] != "zstd" {
		t.Fatalf("the other table was not applied: %v", err)
	}
	t.Logf("apply with one stalled table took %s", took)
}

// TestS3QuarantineForbiddenRefusedInPlan is issue 17.6: the store answers
// 403 to every write under .icewright-quarantine/. The plan says so (a refusal
// of remove_orphan_files naming the quarantine) before any move, the apply
// fails that table, and every file is where it was.
func TestS3QuarantineForbiddenRefusedInPlan(t *testing.T) {
	ctx := context.Background()
	l := newS3Lake(t, "orders")
	l.strays("orders", 3)
	before := l.objects("orders")
	l.proxy.Add(testenv.Fault{Method: "PUT", Path: "/" + orphans.QuarantineDir + "/", Status: 403, Code: "AccessDenied"})
	sess := l.session()
	p := l.plan(ctx, sess)
	tp := planOf(t, p, "lake.sales.orders")
	if o := orphansOf(tp); o != nil {
		t.Fatalf("the plan quarantines into a forbidden prefix: %+v", o)
	}
	if len(tp.Refusals) != 1 || !strings.Contains(tp.Refusals[0].Reason, "refuses writes under "+orphans.QuarantineDir) || !strings.Contains(tp.Refusals[0].Reason, "AccessDenied") {
		t.Fatalf("refusals %+v", tp.Refusals)
	}
	res := l.apply(ctx, sess, p)
	if !res.Failed() {
		t.Fatalf("apply of a refused sweep succeeded: %+v", res.Summary)
	}
	if got := l.objects("orders"); !mapsEqualS(dataOnly(got), dataOnly(before)) {
		t.Fatalf("bucket changed: %v", keys(got))
	}
	if n := len(l.proxy.Requests("PUT", "/"+orphans.QuarantineDir+"/")); n != 1 {
		t.Fatalf("%d PUTs under the quarantine, want the one probe (a 403 is not retried)", n)
	}
}

func mapsEqualS(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// dataOnly drops the metadata/ objects (apply's property commit adds one)
// and keeps everything else, the quarantine included.
func dataOnly(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !strings.HasPrefix(k, "metadata/") {
			out[k] = v
		}
	}
	return out
}
