package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/internal/testenv"
)

// stallStrays is how many orphans the paused sweep has (the run
// had 24).
const stallStrays = 24

// TestCLIQuarantineWithS3Paused is issue 32 item 5, as its author runs it:
// the icewright binary applies a reviewed sweep (quarantine on S3) with the
// default request settings, and the S3 server, a private versitygw, is
// paused (SIGSTOP) mid-sweep, at the twelfth copy into the quarantine: the
// files move in batches of 8 (icewright.delete-batch-size; each batch copied,
// then its originals deleted with one DeleteObjects), so the first batch
// has moved and the second is being copied. The apply must exit 1 within 2 minutes (with the
// default 30s timeout and 8 copies in flight the breaker trips after one
// timeout, so about 35s; without it the run took more than 5 minutes),
// and its results must name every orphan with where it is: each file that
// moved in files_moved, each other one in delete_errors as still in place,
// in both places, or in a place unknown. Once the server is resumed, the
// bucket is checked against what the results say. After the pause at
// most one request per move in flight and StallLimit more reach the
// server: none is sent once the store is judged unresponsive.
//
// It runs at the defaults, not at a scaled timeout, since it takes well
// under the 2.5 minutes CI allows such a test.
func TestCLIQuarantineWithS3Paused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	l := newPausedLake(ctx, t, stallStrays, stallStrays, `    "icewright.delete-batch-size" = "8"
`, `
policy "sweep" {
  orphan_files {
    older_than       = "3d"
    quarantine       = "7d"
    max_orphan_ratio = 0.9
  }
}
`)
	// Pause the server at the twelfth CopyObject: the first batch has
	// moved, the second is being copied, the third is not started.
	r, took, after := l.applyPaused(ctx, testenv.Fault{Method: "PUT", Path: "/warehouse/t/.icewright-quarantine/", Query: "CopyObject", Nth: 12})
	if r.code != 1 {
		t.Errorf("apply with S3 paused mid-sweep: exit %d, want 1", r.code)
	}
	if took > 2*time.Minute {
		t.Errorf("apply with S3 paused mid-sweep took %s, want at most 2m", took)
	}
	t.Logf("apply with S3 paused mid-sweep took %s", took)
	if after > 8+3 {
		t.Errorf("%d requests reached the paused server after the pause, want at most 11 (8 moves in flight, 3 stalls to judge it)", after)
	}
	strays, direct := l.strays, l.direct

	var res apply.Results
	if err := json.Unmarshal([]byte(lastLine(r.stdout)), &res); err != nil {
		t.Fatalf("apply -json: %v", err)
	}
	var sweep *apply.ActionResult
	for i := range res.Tables {
		for j := range res.Tables[i].Actions {
			if a := &res.Tables[i].Actions[j]; a.Type == "remove_orphan_files" {
				sweep = a
			}
		}
	}
	if sweep == nil || sweep.Status != apply.StatusFailed {
		t.Fatalf("the sweep's result: %+v", sweep)
	}
	if !strings.Contains(r.stdout, "judged unresponsive") {
		t.Errorf("the results do not say the store was judged unresponsive")
	}

	// Every orphan is named once, with its place, and the bucket agrees.
	exists := func(p string) bool {
		f, err := direct.Open(p)
		if err != nil {
			return false
		}
		f.Close()
		return true
	}
	seen := map[string]string{}
	for _, m := range sweep.FilesMoved {
		orig, dest, ok := strings.Cut(m, " -> ")
		if !ok {
			t.Fatalf("files_moved line %q", m)
		}
		seen[orig] = "moved"
		if exists(orig) || !exists(dest) {
			t.Errorf("%s is listed as moved: at the original %t, in the quarantine %t", orig, exists(orig), exists(dest))
		}
	}
	counts := map[string]int{}
	for _, line := range sweep.DeleteErrors {
		orig, why, _ := strings.Cut(line, ": ")
		var place string
		switch {
		case strings.HasPrefix(why, "not quarantined, still in place"):
			place = "in place"
		case strings.HasPrefix(why, "copied into the quarantine, original still in place"):
			place = "both"
		case strings.HasPrefix(why, "place unknown"):
			place = "unknown"
		default:
			continue // the run's manifest, for one
		}
		if seen[orig] != "" {
			t.Errorf("%s is named twice (%s and %s)", orig, seen[orig], place)
		}
		seen[orig] = place
		counts[place]++
		if place == "in place" && !exists(orig) {
			t.Errorf("%s is listed as still in place but is not there", orig)
		}
		if place == "both" && !exists(orig) {
			t.Errorf("%s is listed as in both places but its original is not there", orig)
		}
	}
	for _, p := range strays {
		if seen[p] == "" {
			t.Errorf("%s is not named in the results", p)
		}
	}
	if int(sweep.FilesQuarantined) != len(sweep.FilesMoved) || int(sweep.FilesNotMoved) != counts["in place"] ||
		int(sweep.FilesInBothPlaces) != counts["both"] || int(sweep.FilesPlaceUnknown) != counts["unknown"] {
		t.Errorf("counts %d quarantined, %d not moved, %d both, %d unknown do not match the files named: %d moved, %v",
			sweep.FilesQuarantined, sweep.FilesNotMoved, sweep.FilesInBothPlaces, sweep.FilesPlaceUnknown, len(sweep.FilesMoved), counts)
	}
	if len(sweep.FilesMoved) != 8 || counts["in place"] < 8 {
		t.Errorf("%d moved, %d in place: want the first batch (8) moved and the third (8) not started", len(sweep.FilesMoved), counts["in place"])
	}
	t.Logf("places: %d moved, %v", len(sweep.FilesMoved), counts)
}

// TestCLIExpiryWithS3Paused: expiry's deletions after its commit stop on
// the same breaker. Its clock-dependent bound is scaled
// (icewright.request-timeout = 1s, so the breaker trips after about 1s of
// silence): the server is paused when the fifth released manifest list
// is deleted (batches of one key: icewright.delete-batch-size); the apply exits 1 within a minute, no new delete reaches
// the server, the action fails saying the store was judged unresponsive,
// and every released file is counted: deleted, left (unreferenced, for
// the next sweep) or named in delete_errors.
func TestCLIExpiryWithS3Paused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// One key per DeleteObjects request: the pause comes at a known
	// deletion, as with single DELETEs.
	l := newPausedLake(ctx, t, 24, 0, `    "icewright.request-timeout" = "1s"
    "icewright.delete-batch-size" = "1"
`, `
policy "sweep" {
  snapshot_retention {
    max_age       = "1s"
    min_snapshots = 1
  }
}
`)
	// Every snapshot but the current one past max_age = 1s, however fast
	// the 24 appends were made: planned again now, the plan expires 23, so
	// the fifth delete that pauses the server always comes.
	time.Sleep(1500 * time.Millisecond)
	if r := icewright(ctx, t, l.dir, "plan", "-out="+l.planFile); r.code != 0 || !strings.Contains(r.stdout, "- expire 23 snapshots") {
		t.Fatalf("plan after the snapshots aged: exit %d, want the expiry of 23 snapshots", r.code)
	}
	r, took, after := l.applyPaused(ctx, testenv.Fault{Method: "POST", Query: "delete", Nth: 5})
	if r.code != 1 {
		t.Errorf("apply with S3 paused mid-expiry: exit %d, want 1", r.code)
	}
	if took > time.Minute {
		t.Errorf("apply with S3 paused mid-expiry took %s, want at most 1m with a 1s timeout", took)
	}
	t.Logf("apply with S3 paused mid-expiry took %s", took)
	if after > 8+3 {
		t.Errorf("%d requests reached the paused server after the pause, want at most 11", after)
	}
	var res apply.Results
	if err := json.Unmarshal([]byte(lastLine(r.stdout)), &res); err != nil {
		t.Fatalf("apply -json: %v", err)
	}
	var exp *apply.ActionResult
	for i := range res.Tables {
		for j := range res.Tables[i].Actions {
			if a := &res.Tables[i].Actions[j]; a.Type == "expire_snapshots" {
				exp = a
			}
		}
	}
	// The breaker's judgement is in the error, or, when every released
	// file's delete was already under way (as many snapshots expired as
	// deletes run at once: how many are past max_age = 1s depends on the
	// machine's speed), in each file's delete error.
	if exp == nil || exp.Status != apply.StatusFailed || !exp.Committed ||
		!(strings.Contains(exp.Error, "judged unresponsive") || len(exp.DeleteErrors) > 0 && strings.Contains(exp.DeleteErrors[0], "judged unresponsive")) {
		t.Fatalf("the expiry's result: %+v", exp)
	}
	// Each expired snapshot released its manifest list and nothing else
	// (its manifests and data files are carried by the later snapshots).
	if exp.FilesDeleted+exp.FilesLeft+int64(len(exp.DeleteErrors)) != int64(exp.SnapshotsExpired) {
		t.Errorf("%d snapshots expired: %d files deleted, %d left, %d errors %v", exp.SnapshotsExpired, exp.FilesDeleted, exp.FilesLeft, len(exp.DeleteErrors), exp.DeleteErrors)
	}
}

// pausedLake is a sqlite catalog with one table, lake.sweep.t, on a private
// versitygw reached through a fault proxy, and an icewright configuration
// with a reviewed plan of it.
type pausedLake struct {
	t        *testing.T
	dir      string
	planFile string
	srv      *testenv.Server
	proxy    *testenv.FaultProxy
	direct   iceio.IO // the bucket without the proxy
	strays   []string // orphans aged past any guard
}

// newPausedLake makes the table with appends appends and strays orphans,
// writes the configuration (policy holds the policy "sweep" block;
// props, extra catalog properties) and saves the plan.
func newPausedLake(ctx context.Context, t *testing.T, appends, strays int, props, policy string) *pausedLake {
	t.Helper()
	s3, srv := testenv.StartS3(t)
	proxy := testenv.StartFaultProxy(t, s3.Endpoint)
	penv := s3.Through(proxy)
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "catalog.db")
	db, err := sql.Open(sqliteshim.ShimName, "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cprops := iceberg.Properties(penv.Properties())
	cprops["warehouse"] = penv.URL("warehouse")
	cat, err := sqlcat.NewCatalog(catalogName, db, sqlcat.SQLite, cprops)
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(ctx, t, cat, "sweep")
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sweep", "t"}, eventsSchema,
		catalog.WithLocation(penv.URL("warehouse", "t")))
	if err != nil {
		t.Fatal(err)
	}
	for j := range int64(appends) {
		tbl = appendRows(ctx, t, tbl, j*10, 10)
	}
	direct, err := iceio.LoadFS(ctx, s3.Properties(), s3.URL())
	if err != nil {
		t.Fatal(err)
	}
	l := &pausedLake{t: t, dir: dir, planFile: filepath.Join(dir, "reviewed.plan"), srv: srv, proxy: proxy, direct: direct}
	old := time.Now().Add(-10 * 24 * time.Hour)
	for i := range strays {
		p := s3.URL("warehouse", "t", "data", fmt.Sprintf("stray-%02d.parquet", i))
		if err := direct.(iceio.WriteFileIO).WriteFile(p, []byte(fmt.Sprintf("stray %d", i))); err != nil {
			t.Fatal(err)
		}
		// versitygw keeps objects as files: age them past the guard.
		local := filepath.Join(srv.Root(), strings.TrimPrefix(p, "s3://"))
		if err := os.Chtimes(local, old, old); err != nil {
			t.Fatal(err)
		}
		l.strays = append(l.strays, p)
	}
	src := fmt.Sprintf(`catalog "lake" {
  type      = "sql"
  uri       = "sqlite:%s"
  warehouse = %q
  properties = {
    "s3.endpoint"          = %q
    "s3.region"            = "us-east-1"
    "s3.access-key-id"     = env("E2E_S3_KEY")
    "s3.secret-access-key" = env("E2E_S3_SECRET")
%s  }
}
%s
tables "lake.sweep.*" {
  policy = policy.sweep
}
`, dbPath, penv.URL("warehouse"), penv.Endpoint, props, policy)
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("E2E_S3_KEY", s3.AccessKey)
	t.Setenv("E2E_S3_SECRET", s3.SecretKey)
	if r := icewright(ctx, t, dir, "plan", "-out="+l.planFile); r.code != 0 {
		t.Fatalf("plan -out = %d, want 0", r.code)
	}
	return l
}

// applyPaused applies the saved plan with -json, pausing the server
// (SIGSTOP) when the request f matches, and resumes it once apply has
// ended. It returns the run, its wall time, and how many requests reached
// the server after the pause.
func (l *pausedLake) applyPaused(ctx context.Context, f testenv.Fault) (cliResult, time.Duration, int64) {
	l.t.Helper()
	var atPause atomic.Int64
	f.Then = func() {
		atPause.Store(int64(len(l.proxy.Requests("", ""))))
		l.srv.Pause()
	}
	l.proxy.Add(f)
	start := time.Now()
	r := icewright(ctx, l.t, l.dir, "apply", "-auto-approve", "-json", l.planFile)
	took := time.Since(start)
	l.srv.Resume()
	if atPause.Load() == 0 {
		l.t.Fatal("the server was never paused: the apply sent fewer requests than planned")
	}
	return r, took, int64(len(l.proxy.Requests("", ""))) - atPause.Load()
}

// lastLine is the results document of apply -json: the last line of its
// JSON-lines stream.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
