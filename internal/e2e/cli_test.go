package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/internal/testenv"
)

// icewrightBin is the CLI under test, built once by TestMain.
var icewrightBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "icewright-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if icewrightBin, err = testenv.BuildIcewright(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type cliResult struct {
	code           int
	stdout, stderr string
}

// icewright runs the CLI in dir, with no standard input, as CI and CD jobs do.
func icewright(ctx context.Context, t testing.TB, dir string, args ...string) cliResult {
	t.Helper()
	cmd := exec.CommandContext(ctx, icewrightBin, append([]string{"-chdir=" + dir}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code, err := testenv.ExitCode(cmd.Run())
	if err != nil {
		t.Fatalf("run icewright %v: %v", args, err)
	}
	res := cliResult{code: code, stdout: out.String(), stderr: errb.String()}
	t.Logf("icewright %s: exit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	return res
}

// TestCLIApplyWithS3Down runs the icewright binary on a PostgreSQL catalog
// whose S3 server (a private versitygw) is down when the reviewed plan is
// applied: exit 1 and an error naming each affected table; once S3 is back,
// apply succeeds and plan -detailed-exitcode says there is nothing to do.
func TestCLIApplyWithS3Down(t *testing.T) {
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
	ns := "cli"
	createNamespace(ctx, t, cat, ns)
	for _, name := range []string{"a", "b"} {
		tbl, err := cat.CreateTable(ctx, table.Identifier{ns, name}, eventsSchema,
			catalog.WithLocation(s3.URL("warehouse", ns, name)))
		if err != nil {
			t.Fatal(err)
		}
		for j := int64(0); j < 4; j++ {
			tbl = appendRows(ctx, t, tbl, j*10, 10)
		}
	}
	dir := t.TempDir()
	src := fmt.Sprintf(`catalog "lake" {
  type      = "sql"
  uri       = %q
  warehouse = %q
  properties = {
    "s3.endpoint"          = %q
    "s3.region"            = "us-east-1"
    "s3.access-key-id"     = env("E2E_S3_KEY")
    "s3.secret-access-key" = env("E2E_S3_SECRET")
  }
}
%s
tables "lake.cli.*" {
  policy = policy.e2e
}
`, dsn, s3.URL("warehouse"), s3.Endpoint, policyHCL)
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("E2E_S3_KEY", s3.AccessKey)
	t.Setenv("E2E_S3_SECRET", s3.SecretKey)

	if r := icewright(ctx, t, dir, "plan", "-detailed-exitcode"); r.code != 2 {
		t.Fatalf("plan -detailed-exitcode = %d, want 2 (changes)", r.code)
	} else if strings.Contains(r.stdout+r.stderr, s3.SecretKey) {
		t.Errorf("plan output shows the S3 secret")
	}
	planFile := filepath.Join(dir, "reviewed.plan")
	if r := icewright(ctx, t, dir, "plan", "-out="+planFile); r.code != 0 {
		t.Fatalf("plan -out = %d, want 0", r.code)
	}

	srv.Stop()
	r := icewright(ctx, t, dir, "apply", "-auto-approve", planFile)
	if r.code != 1 {
		t.Errorf("apply with S3 down: exit %d, want 1", r.code)
	}
	for _, addr := range []string{"lake.cli.a", "lake.cli.b"} {
		if !strings.Contains(r.stdout+r.stderr, addr) {
			t.Errorf("apply with S3 down does not name %s", addr)
		}
	}
	if !strings.Contains(r.stdout+r.stderr, "connection refused") {
		t.Errorf("apply with S3 down does not say why (connection refused)")
	}

	srv.Start()
	for _, name := range []string{"a", "b"} {
		tbl, err := cat.LoadTable(ctx, table.Identifier{ns, name})
		if err != nil {
			t.Fatal(err)
		}
		if rows := countRows(ctx, t, tbl); rows != 40 {
			t.Errorf("%s: %d rows after the failed apply, want 40", name, rows)
		}
	}
	if r := icewright(ctx, t, dir, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply after S3 is back: exit %d, want 0", r.code)
	}
	if r := icewright(ctx, t, dir, "plan", "-detailed-exitcode"); r.code != 0 {
		t.Errorf("plan after apply: exit %d, want 0 (nothing to do)", r.code)
	}
	for _, name := range []string{"a", "b"} {
		tbl, err := cat.LoadTable(ctx, table.Identifier{ns, name})
		if err != nil {
			t.Fatal(err)
		}
		if rows := countRows(ctx, t, tbl); rows != 40 {
			t.Errorf("%s: %d rows after apply, want 40", name, rows)
		}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) != 1 {
			t.Errorf("%s: %d data files after apply, want 1 (compacted)", name, len(tasks))
		}
	}
}

// TestCLIRESTConverges runs the icewright binary on the REST catalog: plan shows
// changes without printing the catalog credential, apply -auto-approve
// compacts, and a second plan has nothing to do.
func TestCLIRESTConverges(t *testing.T) {
	env := testenv.REST(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	be := restBackend(ctx, t, env)
	ns := testenv.UniqueName(t, "cli")
	createNamespace(ctx, t, be.cat, ns)
	tbl, err := be.cat.CreateTable(ctx, table.Identifier{ns, "events"}, eventsSchema)
	if err != nil {
		t.Fatal(err)
	}
	for j := int64(0); j < 4; j++ {
		tbl = appendRows(ctx, t, tbl, j*10, 10)
	}
	dir := t.TempDir()
	src := fmt.Sprintf(`catalog "lake" {
  type      = "rest"
  uri       = %q
  warehouse = %q
  properties = {
    "credential"           = "${env("E2E_REST_KEY")}:${env("E2E_REST_SECRET")}"
    "s3.endpoint"          = %q
    "s3.region"            = "us-east-1"
    "s3.access-key-id"     = env("E2E_REST_KEY")
    "s3.secret-access-key" = env("E2E_REST_SECRET")
  }
}
%s
tables "lake.%s.*" {
  policy = policy.e2e
}
`, env.URI, env.Warehouse, env.S3.Endpoint, policyHCL, ns)
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("E2E_REST_KEY", env.S3.AccessKey)
	t.Setenv("E2E_REST_SECRET", env.S3.SecretKey)

	r := icewright(ctx, t, dir, "plan", "-detailed-exitcode")
	if r.code != 2 {
		t.Fatalf("plan -detailed-exitcode = %d, want 2", r.code)
	}
	r = icewright(ctx, t, dir, "plan", "-json")
	if r.code != 0 {
		t.Fatalf("plan -json = %d, want 0", r.code)
	}
	if strings.Contains(r.stdout+r.stderr, env.S3.SecretKey) {
		t.Errorf("plan -json shows the catalog secret")
	}
	if !strings.Contains(r.stdout, `"compact"`) {
		t.Errorf("plan -json has no compact action")
	}
	if r := icewright(ctx, t, dir, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply -auto-approve = %d, want 0", r.code)
	} else if strings.Contains(r.stdout+r.stderr, env.S3.SecretKey) {
		t.Errorf("apply output shows the catalog secret")
	}
	if r := icewright(ctx, t, dir, "plan", "-detailed-exitcode"); r.code != 0 {
		t.Errorf("plan after apply = %d, want 0 (nothing to do)", r.code)
	}
	tbl, err = be.cat.LoadTable(ctx, table.Identifier{ns, "events"})
	if err != nil {
		t.Fatal(err)
	}
	if rows, sum := sumIDs(ctx, t, tbl); rows != 40 || sum != 39*40/2 {
		t.Errorf("after apply: %d rows (sum %d), want 40 (%d)", rows, sum, 39*40/2)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 {
		t.Errorf("%d data files after apply, want 1", len(tasks))
	}
}

// TestCLIPostgresMistakes: a PostgreSQL SQL catalog reached with a wrong
// password fails plan once, on stderr, with what it blocked, exit 1 and no
// plan file; an unset password variable is a load error naming it; and a
// catalog labelled otherwise than its tables' catalog_name warns with the
// name they have.
func TestCLIPostgresMistakes(t *testing.T) {
	dsn := testenv.PostgresDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, err := sqlcat.NewCatalog(catalogName, db, sqlcat.Postgres, iceberg.Properties{"warehouse": "file://" + t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(ctx, t, cat, "m")
	if _, err := cat.CreateTable(ctx, table.Identifier{"m", "a"}, eventsSchema); err != nil {
		t.Fatal(err)
	}
	// The credentials come from env(), as a pipeline's secret would. The
	// test server trusts local connections whatever the password, so a role
	// that does not exist stands in for a wrong password: both fail the
	// connection with the server's authentication error.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	password, _ := u.User.Password()
	u.User = url.UserPassword("USER", password)
	uri := strings.Replace(u.String(), "USER", `${env("E2E_PGUSER")}`, 1)
	write := func(dir, label, blocks string) {
		src := fmt.Sprintf(`catalog %q {
  type = "sql"
  uri  = "%s"
}
%s
%s`, label, uri, policyHCL, strings.ReplaceAll(blocks, "LABEL", label))
		if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	write(dir, catalogName, `
table "LABEL.m.a" {
  policy = policy.e2e
}
table "LABEL.m.b" {
  policy = policy.e2e
}
tables "LABEL.n.*" {
  policy = policy.e2e
}
`)

	// Unset: an error at load time naming the variable.
	t.Setenv("E2E_PGUSER", "")
	os.Unsetenv("E2E_PGUSER")
	if r := icewright(ctx, t, dir, "plan"); r.code != 1 || !strings.Contains(r.stderr, "the environment variable E2E_PGUSER is not set") || r.stdout != "" {
		t.Errorf("plan with the credential variable unset: exit %d, want 1 and an error naming E2E_PGUSER on stderr", r.code)
	}

	// Wrong: the catalog's error once on stderr, nothing saved.
	t.Setenv("E2E_PGUSER", "nobody_"+user)
	planFile := filepath.Join(dir, "nightly.plan")
	r := icewright(ctx, t, dir, "plan", "-out="+planFile)
	if r.code != 1 {
		t.Errorf("plan with a wrong password: exit %d, want 1", r.code)
	}
	const authErr = "SQLSTATE 28" // invalid authorization (28000, 28P01)
	if n := strings.Count(r.stderr, authErr); n != 1 || strings.Contains(r.stdout, authErr) {
		t.Errorf("the authentication error is on stderr %d times (want 1) or on stdout", n)
	}
	if !strings.Contains(r.stderr, "2 tables and 1 selector could not be planned") || strings.Contains(r.stderr, `unreachable: catalog "`) {
		t.Errorf("the error does not count what it blocked once, or doubles its prefix")
	}
	if _, err := os.Stat(planFile); !os.IsNotExist(err) {
		t.Errorf("a failed plan wrote %s (%v)", planFile, err)
	}
	if strings.Contains(r.stdout, "To perform exactly these actions") || strings.Contains(r.stdout, "No changes") {
		t.Errorf("a failed plan offers apply or says No changes")
	}

	// Right credentials, wrong label: a warning naming the catalog_name
	// there is.
	t.Setenv("E2E_PGUSER", user)
	write(dir, "warehouse", `
tables "LABEL.**" {
  policy = policy.e2e
}
`)
	r = icewright(ctx, t, dir, "plan")
	want := fmt.Sprintf(`catalog "warehouse" lists no table; its database has tables under catalog_name %q: did you mean catalog %[1]q?`, catalogName)
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "no table is managed by this configuration") {
		t.Errorf("plan with a wrong label: exit %d, want 1, %q and the no-table error on stderr", r.code, want)
	}
}
