package doctor

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

// doctorS3 runs doctor on a sqlite catalog whose warehouse is env's part
// of the real S3 server, and returns the report's findings by check.
func doctorS3(t *testing.T, env testenv.S3Env) (*diff.Doctor, map[string]diff.DoctorFinding) {
	t.Helper()
	dir := t.TempDir()
	// One table on the warehouse, so the table checks run on S3 too.
	db, err := lakehouse.OpenSQLiteDB(filepath.Join(dir, "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	props := iceberg.Properties(env.Properties())
	props["warehouse"] = env.URL("warehouse")
	cat, err := lakehouse.NewSQLCatalog("lake", db, sqlcat.SQLite, props)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := cat.CreateNamespace(ctx, table.Identifier{"sales"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"sales", "orders"}, lakehouse.EventsSchema())
	if err != nil {
		t.Fatal(err)
	}
	testkit.Append(t, tbl, 2, 10, 1)
	cfg := &config.Config{Dir: dir, Catalogs: []*config.Catalog{{
		Name: "lake", Type: "sql", URI: "sqlite:" + filepath.Join(dir, "catalog.db"),
		Warehouse: env.URL("warehouse"), Properties: env.Properties(),
	}}}
	sess := providers.Open(cfg, providers.Options{RequestTimeout: 2 * time.Second})
	defer sess.Close()
	rep, err := Run(ctx, sess, Options{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]diff.DoctorFinding{}
	for _, f := range rep.Findings {
		by[f.Check] = f
	}
	return rep, by
}

// probeObjects lists what is left under the warehouse's lease directory,
// read directly from the server.
func probeObjects(t *testing.T, env testenv.S3Env) []string {
	t.Helper()
	direct, err := iceio.LoadFS(context.Background(), env.Properties(), env.URL())
	if err != nil {
		t.Fatal(err)
	}
	dir := env.URL("warehouse", store.LockDir)
	names, err := listNames(direct, dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var left []string
	for _, n := range names {
		left = append(left, dir+"/"+n)
	}
	return left
}

// TestDoctorS3Probe: against the real S3 server the warehouse allows
// write, list, read and delete, the clocks agree, the static keys are
// named (never shown), and the probe object is gone afterwards.
func TestDoctorS3Probe(t *testing.T) {
	env := testenv.S3(t)
	rep, by := doctorS3(t, env)
	for _, c := range []string{"reachable", "credentials", "write", "list", "read", "clock", "delete", "format"} {
		if f, ok := by[c]; !ok || f.Status != diff.DoctorOK {
			t.Errorf("%s: %+v, want ok", c, f)
		}
	}
	if rep.Failures != 0 {
		t.Errorf("failures = %d, want 0: %+v", rep.Failures, rep.Findings)
	}
	if m := by["credentials"].Message; !strings.Contains(m, "static keys in the catalog's properties") || strings.Contains(m, env.SecretKey) || strings.Contains(m, env.AccessKey) {
		t.Errorf("credentials: %q", m)
	}
	if left := probeObjects(t, env); len(left) != 0 {
		t.Errorf("probe objects left behind: %v", left)
	}
}

// TestDoctorS3DeleteRefused: a store that refuses DELETE (a bucket
// policy without s3:DeleteObject) is a failure of the delete check that
// says what to grant; the probe it could not remove is named.
func TestDoctorS3DeleteRefused(t *testing.T) {
	env := testenv.S3(t)
	proxy := testenv.StartFaultProxy(t, env.Endpoint)
	proxy.Add(testenv.Fault{Method: "DELETE", Status: 403, Code: "AccessDenied"})
	rep, by := doctorS3(t, env.Through(proxy))
	for _, c := range []string{"reachable", "write", "list", "read"} {
		if by[c].Status != diff.DoctorOK {
			t.Errorf("%s: %+v, want ok", c, by[c])
		}
	}
	del := by["delete"]
	if del.Status != diff.DoctorFail || !strings.Contains(del.Message, "cannot delete the probe object") || !strings.Contains(del.Fix, "s3:DeleteObject") {
		t.Errorf("delete: %+v, want a failure saying what to grant", del)
	}
	if rep.Failures != 1 {
		t.Errorf("failures = %d, want 1: %+v", rep.Failures, rep.Findings)
	}
	left := probeObjects(t, env)
	if len(left) != 1 || !strings.Contains(del.Message, strings.TrimPrefix(left[0], "s3://")) {
		t.Errorf("left behind %v; the finding says %q", left, del.Message)
	}
	proxy.Clear()
	direct, _ := iceio.LoadFS(context.Background(), env.Properties(), env.URL())
	for _, p := range left {
		_ = direct.Remove(p)
	}
}

func TestClockFinding(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		mtime  time.Time
		status string
		says   string
	}{
		{at.Add(-900 * time.Millisecond), diff.DoctorOK, "agrees"}, // the store's second resolution
		{at.Add(2 * time.Minute), diff.DoctorWarn, "2m0s ahead of"},
		{at.Add(-3 * time.Hour), diff.DoctorFail, "3h0m0s behind"},
		{at.Add(-100 * 24 * time.Hour), diff.DoctorFail, "about 100 days behind"},
	} {
		f := clockFinding(c.mtime, at, at)
		if f.Status != c.status || !strings.Contains(f.Message, c.says) {
			t.Errorf("mtime %s: %s %q, want %s with %q", c.mtime, f.Status, f.Message, c.status, c.says)
		}
	}
}

// TestDoctorTableLimits: doctor reports, for tables it was not told to
// compact, what the plan's observation refuses: every commit on a table
// whose long default iceberg-go would round (a failure), compaction on a
// table with an equality delete on a column a file lacks (a warning),
// each with the observation's own reason.
func TestDoctorTableLimits(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	const dir, current = "duckdb-add-columns-with-defaults", "metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json"
	l.AddCorpusTable(t, dir, current, "corpus.defaults", nil)
	tbl := l.AddCorpusTable(t, dir, current, "corpus.eq", func(s string) string {
		return strings.ReplaceAll(s, "-9223372036854775808", "-9007199254740991")
	})
	testkit.DeleteEqualityOn(t, tbl, "col_string", func(b array.Builder) { b.(*array.StringBuilder).Append("World") })
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // providers' tests' fixedNow
	sess := providers.Open(&config.Config{Dir: l.Dir, Catalogs: []*config.Catalog{l.ConfigCatalog()}}, providers.Options{Now: func() time.Time { return now }})
	defer sess.Close()
	rep, err := Run(ctx, sess, Options{Selectors: []string{"lake.corpus.*"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]diff.DoctorFinding{}
	for _, f := range rep.Findings {
		if f.Table != "" {
			got[f.Table+" "+f.Check] = f
		}
	}
	if f := got["lake.corpus.defaults commit"]; f.Status != diff.DoctorFail || !strings.Contains(f.Message, "col_long (field id 4) = -9223372036854775808") {
		t.Errorf("defaults: commit finding %+v, want the failure naming the default", f)
	}
	if f, ok := got["lake.corpus.eq commit"]; ok {
		t.Errorf("eq: commit finding %+v, want none", f)
	}
	if f := got["lake.corpus.eq compaction"]; f.Status != diff.DoctorWarn || !strings.Contains(f.Message, "matches on column col_string") {
		t.Errorf("eq: compaction finding %+v, want the warning naming the column", f)
	}
	if f := got["lake.corpus.eq format"]; f.Status != diff.DoctorOK || !strings.Contains(f.Message, "1 equality") {
		t.Errorf("eq: format finding %+v, want the equality delete counted", f)
	}
	fails := 0
	for _, f := range got {
		if f.Status == diff.DoctorFail {
			fails++
		}
	}
	if fails != 1 {
		t.Errorf("%d table failures, want 1 (the defaults table's commits): %+v", fails, got)
	}
}

// TestDoctorCredentialNames: the credential checks name where a secret
// comes from and never carry its value.
func TestDoctorCredentialNames(t *testing.T) {
	const secret = "s3cr3t-value-0042"
	for _, c := range []struct {
		cc     config.Catalog
		env    []string
		status string
		says   string
	}{
		{config.Catalog{Type: "sql", URI: "sqlite:c.db", Warehouse: "s3://b/w", Properties: map[string]string{"s3.access-key-id": "AKIA" + secret, "s3.secret-access-key": secret}},
			nil, diff.DoctorOK, "S3: static keys in the catalog's properties (s3.access-key-id, s3.secret-access-key)"},
		{config.Catalog{Type: "sql", URI: "sqlite:c.db", Warehouse: "gs://b/w"},
			[]string{"GOOGLE_APPLICATION_CREDENTIALS=/keys/" + secret + ".json"}, diff.DoctorOK, "GCS: Application Default Credentials from GOOGLE_APPLICATION_CREDENTIALS"},
		{config.Catalog{Type: "sql", URI: "sqlite:c.db", Warehouse: "gs://b/w", Properties: map[string]string{"gcs.jsonkey": secret}},
			nil, diff.DoctorOK, "GCS: credentials in the catalog's properties (gcs.jsonkey)"},
		{config.Catalog{Type: "sql", URI: "sqlite:c.db", Warehouse: "gs://b/w"},
			nil, diff.DoctorWarn, "GCS: nothing in the properties or GOOGLE_APPLICATION_CREDENTIALS"},
		{config.Catalog{Type: "sql", URI: "sqlite:c.db", Warehouse: "abfss://c@acct.dfs.core.windows.net/w", Properties: map[string]string{"adls.auth.shared-key.account.name": "acct", "adls.auth.shared-key.account.key": secret}},
			nil, diff.DoctorOK, "Azure: credentials in the catalog's properties (adls.auth.shared-key.account.key)"},
		{config.Catalog{Type: "sql", URI: "sqlite:c.db", Warehouse: "abfss://c@acct.dfs.core.windows.net/w"},
			[]string{"AZURE_CLIENT_ID=" + secret, "AZURE_FEDERATED_TOKEN_FILE=/var/run/" + secret}, diff.DoctorOK, "Azure: the default credential chain from the environment (AZURE_CLIENT_ID, AZURE_FEDERATED_TOKEN_FILE)"},
		{config.Catalog{Type: "sql", URI: "sqlite:c.db", Warehouse: "abfss://c@acct.dfs.core.windows.net/w"},
			nil, diff.DoctorWarn, "Azure: nothing in the properties or AZURE_* variables"},
	} {
		cc := c.cc
		cc.Name = "c"
		s := &checker{providers.Open(&config.Config{Dir: t.TempDir(), Catalogs: []*config.Catalog{&cc}}, providers.Options{Env: c.env})}
		f := credentialSource(context.Background(), s, &cc, config.ResolveWarehouse(cc.Warehouse, ""))
		if f.Status != c.status || !strings.HasPrefix(f.Message, c.says) || strings.Contains(f.Message+f.Fix, secret) {
			t.Errorf("%s: %s %q, want %s %q and no secret", cc.Warehouse, f.Status, f.Message, c.status, c.says)
		}
	}
	for _, c := range []struct {
		cc   config.Catalog
		env  []string
		says string
	}{
		{config.Catalog{Type: "sql", URI: "postgres://u:" + secret + "@h/db"}, nil, "PostgreSQL: a password in the uri"},
		{config.Catalog{Type: "sql", URI: "host=h user=u password=" + secret}, nil, "PostgreSQL: a password in the uri"},
		{config.Catalog{Type: "sql", URI: "postgres://u@h/db"}, []string{"PGPASSWORD=" + secret}, "PostgreSQL: PGPASSWORD from the environment"},
		{config.Catalog{Type: "rest", URI: "http://h", Properties: map[string]string{"credential": "id:" + secret}}, nil, "REST: an OAuth2 client credential in the properties (credential)"},
		{config.Catalog{Type: "glue"}, nil, "Glue: the AWS default credential chain"},
	} {
		cc := c.cc
		s := &checker{providers.Open(&config.Config{Catalogs: []*config.Catalog{&cc}}, providers.Options{Env: c.env})}
		f := catalogAuth(s, &cc)
		if !strings.HasPrefix(f.Message, c.says) || strings.Contains(f.Message, secret) {
			t.Errorf("%s: %q, want %q and no secret", cc.URI, f.Message, c.says)
		}
	}
}
