// Command objstorebench drives the object-store orphan benchmark (run.sh):
//
//	objstorebench proxy -listen ADDR -upstream URL   counting proxy (GET /__counts, POST /__reset)
//	objstorebench setup -dir D -objects N -orphans M  the table and its N-M referenced objects
//	objstorebench orphans -dir D                      (re)write the M orphan objects
//	objstorebench bare|icewright|iceberg -dir D -endpoint URL
//	objstorebench expiry-setup -dir D -files N -kept K  a table whose expired snapshots alone own N data files
//	objstorebench expiry-reset -dir D                   put that table back as setup left it
//	objstorebench expiry-icewright|expiry-iceberg -dir D -endpoint URL
//	objstorebench expiry-verify -dir D                  what the last expiry left: all reachable, no expired file
//
// setup, orphans and the expiry's setup, reset and verify talk to the
// server directly; the measured runs go through -endpoint (the proxy).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/bench/plan/benchlake"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/providers"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "objstorebench:", err)
		os.Exit(1)
	}
}

// env is the benchmark's storage, saved by setup in DIR/env.json.
type env struct {
	Endpoint, AccessKey, SecretKey, Region, Bucket, Prefix string
	Objects, Orphans, PerDir                               int
	// The expiry case: data files its expired snapshots alone reach, and
	// those of the current snapshot.
	Expired, Kept int `json:",omitempty"`
}

func (e env) props(endpoint string) iceberg.Properties {
	return iceberg.Properties{"s3.endpoint": endpoint, "s3.access-key-id": e.AccessKey,
		"s3.secret-access-key": e.SecretKey, "s3.region": e.Region}
}

func (e env) location() string { return "s3://" + e.Bucket + "/" + e.Prefix + "/orphans" }

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: objstorebench proxy|setup|orphans|bare|icewright|iceberg|expiry-setup|expiry-reset|expiry-icewright|expiry-iceberg|expiry-verify ...")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", "", "benchmark directory (catalog, env.json)")
	endpoint := fs.String("endpoint", "", "S3 endpoint for the measured run (the proxy)")
	listen := fs.String("listen", "127.0.0.1:7071", "proxy: listen address")
	upstream := fs.String("upstream", os.Getenv("ICEWRIGHT_TEST_S3_ENDPOINT"), "proxy: the S3 server")
	objects := fs.Int("objects", 100000, "setup: objects in the table's location (referenced + orphans)")
	orphans := fs.Int("orphans", 20000, "setup: of which orphans")
	perDir := fs.Int("per-dir", 2000, "setup: objects per partition directory")
	files := fs.Int("files", 100000, "expiry-setup: data files only the expired snapshots reach")
	kept := fs.Int("kept", 1000, "expiry-setup: data files of the current snapshot")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx := context.Background()
	if args[0] == "proxy" {
		return proxy(*listen, *upstream)
	}
	if *dir == "" {
		return errors.New("-dir is required")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	*dir = abs
	if args[0] == "setup" || args[0] == "expiry-setup" {
		e := env{Endpoint: os.Getenv("ICEWRIGHT_TEST_S3_ENDPOINT"), AccessKey: os.Getenv("ICEWRIGHT_TEST_S3_ACCESS_KEY"),
			SecretKey: os.Getenv("ICEWRIGHT_TEST_S3_SECRET_KEY"), Region: "us-east-1", Bucket: os.Getenv("ICEWRIGHT_TEST_S3_BUCKET"),
			Prefix: fmt.Sprintf("objstorebench-%d", time.Now().Unix()), Objects: *objects, Orphans: *orphans, PerDir: *perDir}
		if e.Endpoint == "" || e.Bucket == "" {
			return errors.New("ICEWRIGHT_TEST_S3_* are not set (eval \"$(scripts/services.sh env)\")")
		}
		if args[0] == "expiry-setup" {
			e.Objects, e.Orphans, e.Expired, e.Kept = 0, 0, *files, *kept
			return expirySetup(ctx, *dir, e)
		}
		return setup(ctx, *dir, e)
	}
	raw, err := os.ReadFile(filepath.Join(abs, "env.json"))
	if err != nil {
		return err
	}
	var e env
	if err := json.Unmarshal(raw, &e); err != nil {
		return err
	}
	ep := e.Endpoint
	if *endpoint != "" {
		ep = *endpoint
	}
	switch args[0] {
	case "orphans":
		return putOrphans(ctx, e)
	case "bare":
		return bare(ctx, e, ep)
	case "icewright":
		return runIcewright(ctx, *dir, e, ep)
	case "iceberg":
		return runIceberg(ctx, *dir, e, ep)
	case "expiry-reset":
		return expiryReset(ctx, *dir, e)
	case "expiry-icewright":
		return runIcewrightExpiry(ctx, *dir, e, ep)
	case "expiry-iceberg":
		return runIcebergExpiry(ctx, *dir, e, ep)
	case "expiry-verify":
		return expiryVerify(ctx, *dir, e)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// counts are the requests the proxy saw, by S3 operation.
type counts struct {
	List          int64 `json:"list"`
	DeleteObjects int64 `json:"delete_objects"`
	Delete        int64 `json:"delete"`
	Get           int64 `json:"get"`
	Head          int64 `json:"head"`
	Put           int64 `json:"put"`
	Other         int64 `json:"other"`
}

func proxy(listen, upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	var c counts
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 256}
	// S3 signs the Host header: keep the client's.
	director := rp.Director
	rp.Director = func(r *http.Request) { host := r.Host; director(r); r.Host = host }
	return http.ListenAndServe(listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/__counts":
			_ = json.NewEncoder(w).Encode(map[string]int64{"list": atomic.LoadInt64(&c.List), "delete_objects": atomic.LoadInt64(&c.DeleteObjects),
				"delete": atomic.LoadInt64(&c.Delete), "get": atomic.LoadInt64(&c.Get), "head": atomic.LoadInt64(&c.Head),
				"put": atomic.LoadInt64(&c.Put), "other": atomic.LoadInt64(&c.Other)})
			return
		case r.URL.Path == "/__reset":
			c = counts{}
			return
		}
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodGet && (q.Has("list-type") || q.Has("prefix") || q.Has("delimiter")):
			atomic.AddInt64(&c.List, 1)
		case r.Method == http.MethodPost && q.Has("delete"):
			atomic.AddInt64(&c.DeleteObjects, 1)
		case r.Method == http.MethodDelete:
			atomic.AddInt64(&c.Delete, 1)
		case r.Method == http.MethodGet:
			atomic.AddInt64(&c.Get, 1)
		case r.Method == http.MethodHead:
			atomic.AddInt64(&c.Head, 1)
		case r.Method == http.MethodPut:
			atomic.AddInt64(&c.Put, 1)
		default:
			atomic.AddInt64(&c.Other, 1)
		}
		rp.ServeHTTP(w, r)
	}))
}

func client(e env, endpoint string) *s3.Client {
	return s3.New(s3.Options{Region: e.Region, BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(e.AccessKey, e.SecretKey, "")})
}

func openCatalog(dir string, e env, endpoint string) (*sqlcat.Catalog, func(), error) {
	db, err := lakehouse.OpenSQLiteDB(filepath.Join(dir, "catalog.db"))
	if err != nil {
		return nil, nil, err
	}
	props := e.props(endpoint)
	props["warehouse"] = "s3://" + e.Bucket + "/" + e.Prefix
	cat, err := lakehouse.NewSQLCatalog("bench", db, sqlcat.SQLite, props)
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return cat, func() { _ = db.Close() }, nil
}

var ident = table.Identifier{"bench", "orphans"}

// put writes an empty object at each key, 64 at a time.
func put(ctx context.Context, e env, keys []string) error {
	c := client(e, e.Endpoint)
	var wg sync.WaitGroup
	var first atomic.Value
	sem := make(chan struct{}, 64)
	for _, k := range keys {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(e.Bucket), Key: aws.String(k), Body: strings.NewReader("")}); err != nil {
				first.CompareAndSwap(nil, err)
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}

func dayDir(e env, i int) string {
	dirs := max((e.Objects-e.Orphans+e.PerDir-1)/e.PerDir, 1)
	return e.Prefix + "/orphans/data/event_day=" + benchlake.Day0.AddDate(0, 0, i%dirs).Format("2006-01-02")
}

func setup(ctx context.Context, dir string, e env) error {
	tbl, done, err := createTable(ctx, dir, e, ident, e.location(), nil)
	if err != nil {
		return err
	}
	defer done()
	referenced := e.Objects - e.Orphans
	const commits = 20
	per := (referenced + commits - 1) / commits
	start := time.Now()
	for next := 0; next < referenced; {
		var batch []benchlake.SyntheticFile
		var keys []string
		for ; next < referenced && len(batch) < per; next++ {
			k := dayDir(e, next) + "/" + benchlake.FileName(next)
			keys = append(keys, k)
			batch = append(batch, benchlake.SyntheticFile{Path: "s3://" + e.Bucket + "/" + k, Day: next % max((referenced+e.PerDir-1)/e.PerDir, 1), Size: 4 << 20, Rows: 10000})
		}
		if err := put(ctx, e, keys); err != nil {
			return err
		}
		if tbl, err = benchlake.AddFiles(ctx, tbl, batch); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%d/%d referenced (%s)\n", next, referenced, time.Since(start).Round(time.Second))
	}
	return nil
}

// writeEnv saves e as DIR/env.json, which every later command reads.
func writeEnv(dir string, e env) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "env.json"), raw, 0o600)
}

// createTable saves e in dir, creates the catalog there and in it the
// table id at location, partitioned by day, format version 2, with props.
// done closes the catalog.
func createTable(ctx context.Context, dir string, e env, id table.Identifier, location string, props iceberg.Properties) (tbl *table.Table, done func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	if err := writeEnv(dir, e); err != nil {
		return nil, nil, err
	}
	cat, done, err := openCatalog(dir, e, e.Endpoint)
	if err != nil {
		return nil, nil, err
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"bench"}, nil); err != nil {
		done()
		return nil, nil, err
	}
	all := iceberg.Properties{"format-version": "2"}
	maps.Copy(all, props)
	spec := benchlake.DaySpec()
	tbl, err = cat.CreateTable(ctx, id, benchlake.Schema(), catalog.WithPartitionSpec(&spec),
		catalog.WithLocation(location), catalog.WithProperties(all))
	if err != nil {
		done()
		return nil, nil, err
	}
	return tbl, done, nil
}

// loadTable loads table id of the benchmark's catalog, reached at
// endpoint; done closes the catalog.
func loadTable(ctx context.Context, dir string, e env, endpoint string, id table.Identifier) (*table.Table, func(), error) {
	cat, done, err := openCatalog(dir, e, endpoint)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := cat.LoadTable(ctx, id)
	if err != nil {
		done()
		return nil, nil, err
	}
	return tbl, done, nil
}

func putOrphans(ctx context.Context, e env) error {
	keys := make([]string, e.Orphans)
	for i := range keys {
		keys[i] = dayDir(e, i) + "/orphan-" + benchlake.FileName(e.Objects+i)
	}
	return put(ctx, e, keys)
}

// bare is the floor of a listing: ListObjectsV2 pages of 1,000 over the
// table's location, counting keys.
func bare(ctx context.Context, e env, endpoint string) error {
	c := client(e, endpoint)
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(e.Bucket), Prefix: aws.String(e.Prefix + "/orphans/")})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		n += len(page.Contents)
	}
	fmt.Printf("listed %d objects\n", n)
	return nil
}

// runIcewright plans and applies an orphan-only policy in process, with a
// clock 10 days ahead (S3 objects carry their upload time; the age guard
// floor is a day).
func runIcewright(ctx context.Context, dir string, e env, endpoint string) error {
	r, err := planApply(ctx, dir, e, endpoint, `policy "sweep" {
  orphan_files {
    older_than       = "3d"
    max_orphan_ratio = 0.5
  }
}

tables "bench.bench.orphans" {
  policy = policy.sweep
}
`)
	if err != nil {
		return err
	}
	fmt.Printf("icewright: plan (list + reference) %.2fs, apply (re-check + delete) %.2fs, of which deleting %.2fs, deleted %d, delete errors %d, failed %v\n",
		r.planned.Seconds(), r.applied.Seconds(), r.deleting.Seconds(), r.deleted, r.errors, r.failed)
	return nil
}

// applied is what one in-process plan and apply took and did.
type applied struct {
	planned, applied, deleting time.Duration
	expired, deleted           int64
	errors                     int
	failed                     bool
}

// planApply writes a configuration of the benchmark's catalog (reached at
// endpoint) with policies, then plans and applies it in process with the
// clock 10 days ahead. The deletion phase is from the first "files"
// progress report (0 of N, after the re-checks) to the last.
func planApply(ctx context.Context, dir string, e env, endpoint, policies string) (applied, error) {
	var r applied
	cfgDir := filepath.Join(dir, "icewright")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return r, err
	}
	var props strings.Builder
	for k, v := range e.props(endpoint) {
		fmt.Fprintf(&props, "    %q = %q\n", k, v)
	}
	hcl := fmt.Sprintf(`catalog "bench" {
  type      = "sql"
  uri       = %q
  warehouse = %q
  properties = {
%s  }
}

`, "sqlite:"+filepath.Join(dir, "catalog.db"), "s3://"+e.Bucket+"/"+e.Prefix, props.String()) + policies
	if err := os.WriteFile(filepath.Join(cfgDir, "main.icewright.hcl"), []byte(hcl), 0o644); err != nil {
		return r, err
	}
	cfg, diags := config.Load(cfgDir, config.LoadOptions{})
	if diags.HasErrors() {
		return r, diags
	}
	later := time.Now().Add(10 * 24 * time.Hour)
	now := func() time.Time { return later }
	sess := providers.Open(cfg, providers.Options{Now: now})
	defer sess.Close()
	t0 := time.Now()
	p, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Version: "bench", Now: now})
	if err != nil {
		return r, err
	}
	if len(p.Errors) > 0 {
		return r, fmt.Errorf("plan errors: %+v", p.Errors)
	}
	r.planned = time.Since(t0)
	t1 := time.Now()
	var delStart, delEnd time.Time
	progress := func(e apply.Event) {
		if e.Unit != "files" {
			return
		}
		if e.Done == 0 && delStart.IsZero() {
			delStart = time.Now()
		}
		if e.Done == e.Total {
			delEnd = time.Now()
		}
	}
	res, err := apply.Apply(ctx, cfg, sess, p, apply.ApplyOptions{Version: "bench", Now: now, Progress: progress})
	if err != nil {
		return r, err
	}
	r.applied, r.deleting, r.failed = time.Since(t1), delEnd.Sub(delStart), res.Failed()
	for _, tr := range res.Tables {
		for _, a := range tr.Actions {
			r.deleted += a.FilesDeleted
			r.expired += int64(a.SnapshotsExpired)
			r.errors += len(a.DeleteErrors)
		}
	}
	return r, nil
}

// runIceberg is iceberg-go v0.7.0's own orphan removal on the same table:
// Table.DeleteOrphanFiles (it lists, builds the referenced set, and
// deletes through the IO's DeleteFiles, one DELETE per object).
func runIceberg(ctx context.Context, dir string, e env, endpoint string) error {
	tbl, done, err := loadTable(ctx, dir, e, endpoint, ident)
	if err != nil {
		return err
	}
	defer done()
	// PlanOrphanFiles + ExecuteOrphanCleanup is what DeleteOrphanFiles
	// runs, split to time the deletion phase.
	t0 := time.Now()
	plan, err := tbl.PlanOrphanFiles(ctx, table.WithFilesOlderThan(0))
	if err != nil {
		return err
	}
	t1 := time.Now()
	res, err := tbl.ExecuteOrphanCleanup(ctx, plan)
	if err != nil {
		return err
	}
	fmt.Printf("iceberg-go: plan (list + reference) %.2fs, deleting %.2fs, deleted %d\n", t1.Sub(t0).Seconds(), time.Since(t1).Seconds(), len(res.DeletedFiles))
	return nil
}
