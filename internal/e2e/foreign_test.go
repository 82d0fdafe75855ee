package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
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

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/testkit"
)

// foreignCatalog is the label of Spark's `local` catalog: an icewright catalog
// of the same label on the same SQLite file sees the same tables (a SQL
// catalog's label is its catalog_name).
const foreignCatalog = "local"

// foreignSkew is how far ahead of the wall clock the foreign tests plan and
// apply: every file and snapshot the writers just made is then older than
// the policies' guards (3d for orphans, 1d for snapshots), without editing
// the writers' metadata. Apply runs at the same clock, so its re-checks
// judge as the plan did.
const foreignSkew = 30 * 24 * time.Hour

// foreignLake is one of Spark's catalogs as the writers, icewright,
// iceberg-go and (on local files) DuckDB see it, with a namespace of the
// test's own (the server is shared).
type foreignLake struct {
	spark testenv.SparkEnv
	cat   catalog.Catalog
	ns    string
	label string            // Spark's name of the catalog, and icewright's label
	hcl   string            // the icewright catalog block's body
	conf  map[string]string // Spark session settings (a catalog of the test's own)
}

// newForeignLake is Spark's `local` catalog: JDBC in a SQLite file, its
// warehouse a directory.
func newForeignLake(ctx context.Context, t *testing.T) *foreignLake {
	t.Helper()
	env := testenv.Spark(t)
	db, err := lakehouse.OpenSQLiteDB(env.LocalDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := lakehouse.NewSQLCatalog(foreignCatalog, db, sqlcat.SQLite, iceberg.Properties{"warehouse": "file://" + env.LocalWarehouse})
	if err != nil {
		t.Fatal(err)
	}
	l := &foreignLake{spark: env, cat: cat, ns: testenv.UniqueName(t, "foreign"), label: foreignCatalog,
		hcl: fmt.Sprintf("type = \"sql\"\n  uri = \"sqlite:%s\"\n  warehouse = \"file://%s\"\n", env.LocalDB, env.LocalWarehouse)}
	l.sql(ctx, t, "CREATE NAMESPACE IF NOT EXISTS "+l.label+"."+l.ns)
	return l
}

// newForeignPG is Spark's `pg` catalog: JDBC in PostgreSQL's "postgres"
// database, its warehouse s3://<bucket>/spark-pg on the S3 server
// (scripts/services.sh names both).
func newForeignPG(ctx context.Context, t *testing.T) *foreignLake {
	t.Helper()
	env := testenv.Spark(t)
	dsn := testenv.Postgres(t)
	s3 := testenv.S3(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	warehouse := "s3://" + s3.Bucket + "/spark-pg"
	props := iceberg.Properties(s3.Properties())
	props["warehouse"] = warehouse
	cat, err := lakehouse.NewSQLCatalog("pg", db, sqlcat.Postgres, props)
	if err != nil {
		t.Fatal(err)
	}
	l := &foreignLake{spark: env, cat: cat, ns: testenv.UniqueName(t, "foreign"), label: "pg",
		hcl: fmt.Sprintf("type = \"sql\"\n  uri = %q\n  warehouse = %q\n  properties = {\n%s  }\n", dsn, warehouse, hclMap(s3.Properties()))}
	l.sql(ctx, t, "CREATE NAMESPACE IF NOT EXISTS "+l.label+"."+l.ns)
	return l
}

// newForeignREST is the REST catalog (SeaweedFS's, on its S3) as a Spark
// catalog of the test's own session, `icewright_rest`, configured from the
// same settings icewright and iceberg-go use (the catalog authenticates with
// an OAuth client credential, which Spark's `rest` catalog is not given).
func newForeignREST(ctx context.Context, t *testing.T) *foreignLake {
	t.Helper()
	env := testenv.Spark(t)
	rest := testenv.REST(t)
	be := restBackend(ctx, t, rest)
	const label = "icewright_rest"
	pre := "spark.sql.catalog." + label
	conf := map[string]string{
		pre:                           "org.apache.iceberg.spark.SparkCatalog",
		pre + ".type":                 "rest",
		pre + ".uri":                  rest.URI,
		pre + ".warehouse":            rest.Warehouse,
		pre + ".credential":           rest.Credential(),
		pre + ".io-impl":              "org.apache.iceberg.aws.s3.S3FileIO",
		pre + ".s3.endpoint":          rest.S3.Endpoint,
		pre + ".s3.access-key-id":     rest.S3.AccessKey,
		pre + ".s3.secret-access-key": rest.S3.SecretKey,
		pre + ".s3.path-style-access": "true",
		pre + ".client.region":        rest.S3.Region,
	}
	l := &foreignLake{spark: env, cat: be.cat, ns: testenv.UniqueName(t, "foreign"), label: label, hcl: be.hcl(label), conf: conf}
	l.sql(ctx, t, "CREATE NAMESPACE IF NOT EXISTS "+l.label+"."+l.ns)
	return l
}

// name is the table's name as Spark and the icewright configuration spell it.
func (l *foreignLake) name(table string) string { return l.label + "." + l.ns + "." + table }

func (l *foreignLake) ident(name string) table.Identifier { return table.Identifier{l.ns, name} }

func (l *foreignLake) load(ctx context.Context, t testing.TB, name string) *table.Table {
	t.Helper()
	tbl, err := l.cat.LoadTable(ctx, l.ident(name))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return tbl
}

// sparkOp is one step of internal/e2e/testdata/writers/spark_sql.py: a
// statement, or a fingerprint of a table read by Spark.
type sparkOp struct {
	SQL         string   `json:"sql,omitempty"`
	Fingerprint string   `json:"fingerprint,omitempty"`
	Columns     []string `json:"columns,omitempty"` // metadata columns to add (_row_id)
}

type sparkResult struct {
	Rows    json.RawMessage   `json:"rows"` // [][]string, or a fingerprint's count
	Columns map[string]string `json:"columns"`
	Seconds float64           `json:"seconds"`
}

func (r sparkResult) table(t testing.TB) [][]*string {
	t.Helper()
	var rows [][]*string
	if err := json.Unmarshal(r.Rows, &rows); err != nil {
		t.Fatalf("spark rows %s: %v", r.Rows, err)
	}
	return rows
}

// derefRow is a row of table with NULL spelled out.
func derefRow(row []*string) []string {
	out := make([]string, len(row))
	for i, v := range row {
		out[i] = "NULL"
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

func (r sparkResult) fingerprint(t testing.TB) fingerprint {
	t.Helper()
	var n int64
	if err := json.Unmarshal(r.Rows, &n); err != nil {
		t.Fatalf("spark fingerprint %s: %v", r.Rows, err)
	}
	return fingerprint{Rows: n, Columns: r.Columns}
}

// writerScript is one of the writer programs in testdata/writers.
func writerScript(t testing.TB, name string) string {
	return filepath.Join(testenv.RepoRoot(t), "internal", "e2e", "testdata", "writers", name)
}

// sparkCommand is spark_sql.py running ops, not yet started.
func (l *foreignLake) sparkCommand(ctx context.Context, t testing.TB, ops []sparkOp) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	in, err := json.Marshal(map[string]any{"remote": l.spark.Remote, "conf": l.conf, "ops": ops})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, l.spark.Python, writerScript(t, "spark_sql.py"))
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return cmd, &out, &errb
}

func decodeSpark(t testing.TB, err error, out, errb *bytes.Buffer, n int) []sparkResult {
	t.Helper()
	if err != nil {
		t.Fatalf("spark: %v\n%s", err, sparkError(errb.String()))
	}
	var res []sparkResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res) != n {
		t.Fatalf("spark output (%d results, want %d) %q: %v", len(res), n, out.String(), err)
	}
	return res
}

// run runs ops in one Spark Connect session and returns their results.
func (l *foreignLake) run(ctx context.Context, t testing.TB, ops ...sparkOp) []sparkResult {
	t.Helper()
	cmd, out, errb := l.sparkCommand(ctx, t, ops)
	return decodeSpark(t, cmd.Run(), out, errb, len(ops))
}

// sql runs statements in one session.
func (l *foreignLake) sql(ctx context.Context, t testing.TB, stmts ...string) []sparkResult {
	t.Helper()
	ops := make([]sparkOp, len(stmts))
	for i, s := range stmts {
		ops[i] = sparkOp{SQL: s}
	}
	return l.run(ctx, t, ops...)
}

// sparkError is the part of a Python traceback that says what went wrong:
// the lines naming an exception, without the JVM's stack.
func sparkError(stderr string) string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "Exception") || strings.Contains(line, "Error") {
			if !strings.HasPrefix(strings.TrimSpace(line), "at ") && len(out) < 12 {
				out = append(out, line)
			}
		}
	}
	if len(out) == 0 {
		return stderr
	}
	return strings.Join(out, "\n")
}

// pyiceberg writes pyiceberg_tables.py's tables into the namespace and
// returns their live rows by name.
func (l *foreignLake) pyiceberg(ctx context.Context, t testing.TB) map[string]int64 {
	t.Helper()
	in, err := json.Marshal(map[string]string{"uri": "sqlite:///" + l.spark.LocalDB, "warehouse": "file://" + l.spark.LocalWarehouse,
		"catalog": l.label, "namespace": l.ns})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, l.spark.Python, writerScript(t, "pyiceberg_tables.py"))
	cmd.Stdin = bytes.NewReader(in)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pyiceberg: %v\n%s", err, sparkError(errb.String()))
	}
	var res struct {
		Tables map[string]int64 `json:"tables"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("pyiceberg output %q: %v", out, err)
	}
	return res.Tables
}

// config writes and loads an icewright configuration whose catalog is Spark's
// `local` and whose policy (the body of policy "foreign") covers every
// table of the namespace.
func (l *foreignLake) config(t testing.TB, policy string) *config.Config {
	return l.configFor(t, "*", policy)
}

// configFor is config for the tables of the namespace that pattern selects.
func (l *foreignLake) configFor(t testing.TB, pattern, policy string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	src := fmt.Sprintf("catalog %q {\n  %s}\npolicy \"foreign\" {%s\n}\ntables \"%s.%s.%s\" {\n  policy = policy.foreign\n}\n",
		l.label, l.hcl, policy, l.label, l.ns, pattern)
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(dir, config.LoadOptions{Env: os.Environ()})
	if diags.HasErrors() {
		t.Fatalf("config:\n%s\n%s", src, diags.Error())
	}
	return cfg
}

// localPath is a path of a table's metadata as a local file name: Java
// writes "file:/x", iceberg-go "file:///x".
func localPath(p string) string {
	for _, pre := range []string{"file://", "file:"} {
		if rest, ok := strings.CutPrefix(p, pre); ok {
			return rest
		}
	}
	return p
}

// copyTable copies table name to a new table: its directory copied beside
// it with every path rewritten (lakehouse.CopyTable), registered in Spark's
// catalog by Spark's own register_table. Two copies of one table are the
// same history on separate files, for running two tools side by side.
func (l *foreignLake) copyTable(ctx context.Context, t *testing.T, name, copyName string) {
	t.Helper()
	src := l.load(ctx, t, name)
	srcDir := localPath(src.Location())
	dst := filepath.Join(filepath.Dir(srcDir), copyName)
	rel, err := filepath.Rel(srcDir, localPath(src.MetadataLocation()))
	if err != nil {
		t.Fatal(err)
	}
	md := testkit.CopyTable(t, srcDir, dst, rel, lakehouse.FileURIs())
	// Hadoop's checksum side files (.x.crc) were copied as they were, but
	// the files they check were rewritten: Spark would refuse to read them.
	// Without its side file, a file is read unchecked.
	for f := range tableFiles(t, dst) {
		if base := filepath.Base(f); strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".crc") {
			if err := os.Remove(filepath.Join(dst, filepath.FromSlash(f))); err != nil {
				t.Fatal(err)
			}
		}
	}
	l.sql(ctx, t, fmt.Sprintf("CALL %s.system.register_table(table => '%s.%s', metadata_file => '%s')", l.label, l.ns, copyName, md))
}

// tableFiles is every file under a table's directory, by path relative to
// it, with its modification time.
func tableFiles(t testing.TB, dir string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = info.ModTime()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
