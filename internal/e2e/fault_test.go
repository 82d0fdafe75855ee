package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/internal/testenv"
)

// faultTables creates n tables in ns with old history (six small appends
// before the boundary) and young history (one append after), and returns
// the boundary.
func faultTables(ctx context.Context, t *testing.T, be *backend, ns string, n int) (names []string, boundary time.Time) {
	t.Helper()
	createNamespace(ctx, t, be.cat, ns)
	tbls := make([]*table.Table, n)
	for i := range tbls {
		name := fmt.Sprintf("t%d", i)
		names = append(names, name)
		var opts []catalog.CreateTableOpt
		if loc := be.location(ns, name); loc != "" {
			opts = append(opts, catalog.WithLocation(loc))
		}
		tbl, err := be.cat.CreateTable(ctx, table.Identifier{ns, name}, eventsSchema, opts...)
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		for j := int64(0); j < 6; j++ {
			tbl = appendRows(ctx, t, tbl, j*50, 50)
		}
		tbls[i] = tbl
	}
	gap()
	boundary = time.Now()
	gap()
	for i, tbl := range tbls {
		tbls[i] = appendRows(ctx, t, tbl, 300, 50)
	}
	return names, boundary
}

// faultApply applies the e2e policy to every table of ns and kills srv when
// the second table to be worked on starts its first action: the first table
// completes, the second fails midway. Tables run one at a time.
func faultApply(ctx context.Context, t *testing.T, be *backend, ns string, names []string, boundary time.Time, srv *testenv.Server) {
	now := func() time.Time { return boundary.Add(48 * time.Hour) }
	cfg := writeConfig(t, be, ns)
	var (
		mu      sync.Mutex
		first   string
		stopped string
	)
	progress := func(e apply.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Phase != apply.PhaseStart || e.Table == "" {
			return
		}
		if first == "" {
			first = e.Table
		}
		if e.Table != first && stopped == "" {
			stopped = e.Table
			srv.Stop()
		}
	}
	sess := openSession(cfg, now)
	p, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{Now: now, Version: "e2e"})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors before the fault: %+v", p.Errors)
	}
	res, err := apply.Apply(ctx, cfg, sess, p, apply.ApplyOptions{Now: now, Version: "e2e", Progress: progress, Parallelism: 1, MaxRetries: -1})
	sess.Close()
	if err != nil {
		t.Fatalf("apply refused: %v", err)
	}
	if stopped == "" {
		t.Fatalf("the server was never stopped (first table %q); results %+v", first, res.Summary)
	}
	t.Logf("stopped %s when %s started; summary %+v", srv.Log(), stopped, res.Summary)
	if !res.Failed() {
		t.Fatalf("apply with the server stopped midway reported no failure: %+v", res.Summary)
	}
	for _, tr := range res.Tables {
		msg := failure(tr)
		switch tr.Address {
		case first:
			if tr.Status == apply.StatusFailed {
				t.Errorf("%s, finished before the fault, failed: %s", tr.Address, msg)
			}
		case stopped:
			if tr.Status != apply.StatusFailed {
				t.Errorf("%s, running when the server stopped, has status %s", tr.Address, tr.Status)
			}
			if !strings.Contains(msg, "connect") && !strings.Contains(msg, "refused") && !strings.Contains(msg, "EOF") && !strings.Contains(msg, "reset") {
				t.Errorf("%s failed without saying the server is unreachable: %q\n%s", tr.Address, msg, whoListens(be.ioProps["s3.endpoint"]))
			}
			t.Logf("%s failed: %s", tr.Address, msg)
		}
	}
}

// whoListens says what answers on endpoint's port now that its server is
// stopped: evidence for a failure that names a missing file instead of an
// unreachable server (seen once in CI, unexplained: something answered
// HTTP 404 on the stopped server's port).
func whoListens(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Port() == "" {
		return "no endpoint port to examine (" + endpoint + ")"
	}
	out := "after the stop, port " + u.Port() + ": "
	if c, err := net.DialTimeout("tcp", u.Host, 2*time.Second); err != nil {
		out += "dial: " + err.Error()
	} else {
		c.Close()
		out += "something accepts connections"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ss, err := exec.CommandContext(ctx, "ss", "-ltnpH", "sport = :"+u.Port()).CombinedOutput()
	return fmt.Sprintf("%s; ss: %s (err %v)", out, strings.TrimSpace(string(ss)), err)
}

// failure is what went wrong with a table: its error and its failed
// actions' errors.
func failure(tr apply.TableResult) string {
	msg := tr.Error
	for _, a := range tr.Actions {
		if a.Status == apply.StatusFailed {
			msg += " " + a.Error
		}
	}
	return msg
}

// faultRecover restarts srv, checks every table is readable with its rows,
// and that a later apply converges.
func faultRecover(ctx context.Context, t *testing.T, be *backend, ns string, names []string, boundary time.Time, srv *testenv.Server) {
	srv.Start()
	for _, name := range names {
		tbl, err := be.cat.LoadTable(ctx, table.Identifier{ns, name})
		if err != nil {
			t.Fatalf("load %s after the fault: %v", name, err)
		}
		rows, sum := sumIDs(ctx, t, tbl)
		if rows != 350 || sum != 349*350/2 {
			t.Errorf("%s after the fault: %d rows (sum %d), want 350 (%d)", name, rows, sum, 349*350/2)
		}
	}
	now := func() time.Time { return boundary.Add(48 * time.Hour) }
	cfg := writeConfig(t, be, ns)
	_, res := planApply(ctx, t, cfg, now, nil)
	requireApplied(t, res)
	requireConverged(t, planOnly(ctx, t, cfg, now))
	for _, name := range names {
		tbl, err := be.cat.LoadTable(ctx, table.Identifier{ns, name})
		if err != nil {
			t.Fatal(err)
		}
		if rows, sum := sumIDs(ctx, t, tbl); rows != 350 || sum != 349*350/2 {
			t.Errorf("%s after recovery: %d rows (sum %d)", name, rows, sum)
		}
	}
}

// TestFaultS3StoppedMidApply kills the S3 server (a private versitygw) under
// a PostgreSQL catalog while apply works on the second of three tables.
func TestFaultS3StoppedMidApply(t *testing.T) {
	dsn := testenv.PostgresDatabase(t)
	s3, srv := testenv.StartS3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	props := iceberg.Properties(s3.Properties())
	props["warehouse"] = s3.URL("warehouse")
	cat, err := sqlcat.NewCatalog(catalogName, db, sqlcat.Postgres, props)
	if err != nil {
		t.Fatal(err)
	}
	be := &backend{
		name: "postgres+private s3", cat: cat, ioProps: s3.Properties(),
		hcl: func(string) string {
			return fmt.Sprintf("type = \"sql\"\n  uri = %q\n  warehouse = %q\n  properties = {\n%s  }\n",
				dsn, s3.URL("warehouse"), hclMap(s3.Properties()))
		},
		location: func(ns, name string) string { return s3.URL("warehouse", ns, name) },
	}
	ns := testenv.UniqueName(t, "fault")
	names, boundary := faultTables(ctx, t, be, ns, 3)
	faultApply(ctx, t, be, ns, names, boundary, srv)
	faultRecover(ctx, t, be, ns, names, boundary, srv)
}

// TestFaultRESTStoppedMidApply kills SeaweedFS (a private `weed mini`: the
// REST catalog and its S3) while apply works on the second of three tables.
func TestFaultRESTStoppedMidApply(t *testing.T) {
	env, srv := testenv.StartREST(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := restBackend(ctx, t, env)
	ns := testenv.UniqueName(t, "fault")
	names, boundary := faultTables(ctx, t, be, ns, 3)
	faultApply(ctx, t, be, ns, names, boundary, srv)
	faultRecover(ctx, t, be, ns, names, boundary, srv)
}
