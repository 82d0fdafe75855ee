package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	sparksql "github.com/apache/spark-connect-go/spark/sql"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/icewright/icewright/internal/testenv"
)

// sparkSQL runs statements through the Spark Connect server and returns
// the last one's rows.
func sparkSQL(ctx context.Context, t testing.TB, s sparksql.SparkSession, stmts ...string) [][]any {
	t.Helper()
	var out [][]any
	for _, q := range stmts {
		df, err := s.Sql(ctx, q)
		if err != nil {
			t.Fatalf("spark %s: %v", q, err)
		}
		rows, err := df.Collect(ctx)
		if err != nil {
			t.Fatalf("spark %s: %v", q, err)
		}
		out = out[:0]
		for _, r := range rows {
			out = append(out, r.Values())
		}
	}
	return out
}

// sparkTable is a table Spark writes in its `local` catalog, in a
// namespace of its own, with the icewright configuration that manages it.
type sparkTable struct {
	env   testenv.SparkEnv
	spark sparksql.SparkSession
	ns    string
	name  string // local.<ns>.t
	dir   string // the icewright configuration's directory
	cat   *sqlcat.Catalog
	ident table.Identifier
}

// newSparkTable creates local.<ns>.t partitioned by identity of a column
// named `order` (a reserved word: the statement must quote it) and the day
// of a timestamp: six files in partition (it's, day 1), whose value
// needs escaping in the statement, and three one-row files in ('b', day 2).
func newSparkTable(ctx context.Context, t *testing.T) *sparkTable {
	st := createSparkTable(ctx, t, "(id bigint, `order` string, ts timestamp, note string) USING iceberg PARTITIONED BY (`order`, days(ts))")
	s := st.spark
	for i := range 6 {
		sparkSQL(ctx, t, s, fmt.Sprintf("INSERT INTO %s SELECT id, 'it''s', TIMESTAMP '2026-11-01 00:00:00+00:00' + make_interval(0, 0, 0, 0, 0, 0, id %% 86000), concat('row ', id, ' of file %d') FROM range(%d, %d)", st.name, i, i*2000, (i+1)*2000))
	}
	for i := range 3 {
		sparkSQL(ctx, t, s, fmt.Sprintf("INSERT INTO %s VALUES (%d, 'b', TIMESTAMP '2026-11-02 10:00:00+00:00', 'small')", st.name, 100000+i))
	}
	return st
}

// createSparkTable creates local.<ns>.t in a namespace of its own with
// the rest of a CREATE TABLE statement (columns, USING, ...), dropped
// with the test, and opens the `local` catalog for icewright's reads.
func createSparkTable(ctx context.Context, t *testing.T, definition string) *sparkTable {
	env := testenv.Spark(t)
	s, err := sparksql.NewSessionBuilder().Remote(env.Remote).Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := &sparkTable{env: env, spark: s, ns: testenv.UniqueName(t, "engine")}
	st.name = "local." + st.ns + ".t"
	sparkSQL(ctx, t, s,
		"CREATE NAMESPACE local."+st.ns,
		"CREATE TABLE "+st.name+" "+definition)
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, q := range []string{"DROP TABLE IF EXISTS " + st.name + " PURGE", "DROP NAMESPACE IF EXISTS local." + st.ns} {
			if df, err := s.Sql(c, q); err == nil {
				_, _ = df.Collect(c)
			}
		}
	})
	db, err := sql.Open(sqliteshim.ShimName, "file:"+env.LocalDB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st.cat, err = sqlcat.NewCatalog("local", db, sqlcat.SQLite, iceberg.Properties{"warehouse": env.LocalWarehouse})
	if err != nil {
		t.Fatal(err)
	}
	st.ident = table.Identifier{st.ns, "t"}
	st.dir = t.TempDir()
	return st
}

func (st *sparkTable) configure(t *testing.T, engineBlock, top, compaction string) {
	t.Helper()
	src := fmt.Sprintf(`catalog "local" {
  type      = "sql"
  uri       = "sqlite:%s"
  warehouse = %q
}

%s

table "local.%s.t" {
  %s
  compaction {
    %s
  }
}
`, st.env.LocalDB, st.env.LocalWarehouse, engineBlock, st.ns, top, compaction)
	if err := os.WriteFile(filepath.Join(st.dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (st *sparkTable) load(ctx context.Context, t *testing.T) *table.Table {
	t.Helper()
	tbl, err := st.cat.LoadTable(ctx, st.ident)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// rows reads every row back through Spark, ordered, as text.
func (st *sparkTable) rows(ctx context.Context, t *testing.T) []string {
	t.Helper()
	var out []string
	for _, r := range sparkSQL(ctx, t, st.spark, "REFRESH TABLE "+st.name, "SELECT id, `order`, CAST(ts AS STRING), note FROM "+st.name+" ORDER BY id") {
		out = append(out, fmt.Sprint(r...))
	}
	return out
}

// TestSparkEngineCompaction: a Spark-written table whose policy sends its
// large partition to Spark (engine_above) and leaves the small one to
// icewright, under each strategy. The plan shows the CALL, with the reserved
// column quoted and the partition value escaped; apply compacts through
// Spark and checks its snapshot; Spark and DuckDB read the same rows and
// values afterwards; the next plan is empty.
func TestSparkEngineCompaction(t *testing.T) {
	for _, tc := range []struct {
		strategy, top, extra string
		args                 string // the statement's arguments between table and where
	}{
		{"binpack", "", "", "strategy => 'binpack'"},
		{"sort", `sort_order = ["id desc"]`, "", "strategy => 'sort', sort_order => 'id DESC NULLS LAST'"},
		{"zorder", "", `zorder_columns = ["id", "note"]`, "strategy => 'sort', sort_order => 'zorder(id,note)'"},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			sparkEngineCompaction(t, tc.strategy, tc.top, tc.extra, tc.args)
		})
	}
}

func sparkEngineCompaction(t *testing.T, strategy, top, extra, args string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st := newSparkTable(ctx, t)
	duck := testenv.DuckDBReader(t)
	t.Setenv("E2E_SPARK_REMOTE", st.env.Remote)
	st.configure(t, `engine "spark" { remote = env("E2E_SPARK_REMOTE") }`, top, fmt.Sprintf(`strategy        = %q
    %s
    min_input_files = 2
    engine          = "spark"
    engine_above    = "16KiB"`, strategy, extra))

	before := st.load(ctx, t)
	rowsBefore := st.rows(ctx, t)
	duckBefore, err := duckFingerprint(ctx, duck, before)
	if err != nil {
		t.Fatal(err)
	}

	r := icewright(ctx, t, st.dir, "plan", "-json")
	if r.code != 0 {
		t.Fatalf("plan -json: exit %d", r.code)
	}
	// A compact action's payload is inlined in the action.
	type planAction struct {
		Type        string `json:"type"`
		Commits     int    `json:"commits"`
		EngineCalls []struct {
			Partition string `json:"partition"`
			Statement string `json:"statement"`
		} `json:"engine_calls"`
	}
	var doc struct {
		Tables []struct {
			Actions []planAction `json:"actions"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Tables) != 1 {
		t.Fatalf("want one table, got %+v", doc)
	}
	i := slices.IndexFunc(doc.Tables[0].Actions, func(a planAction) bool { return a.Type == "compact" })
	if i < 0 {
		t.Fatalf("no compact action: %+v", doc)
	}
	c := doc.Tables[0].Actions[i]
	if len(c.EngineCalls) != 1 || c.Commits != 2 {
		t.Fatalf("want one engine call and 2 commits (Spark's and icewright'), got %+v", c)
	}
	want := fmt.Sprintf("CALL local.system.rewrite_data_files(table => '%s.t', %s, where => '`order` = \\'it\\\\\\'s\\' AND ts >= TIMESTAMP \\'2026-11-01 00:00:00.000000+00:00\\' AND ts < TIMESTAMP \\'2026-11-02 00:00:00.000000+00:00\\'', options => map(", st.ns, args)
	if !strings.HasPrefix(c.EngineCalls[0].Statement, want) {
		t.Fatalf("statement\n%s\nwant prefix\n%s", c.EngineCalls[0].Statement, want)
	}
	if r := icewright(ctx, t, st.dir, "plan"); r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("the text plan does not show the statement (exit %d)", r.code)
	}

	r = icewright(ctx, t, st.dir, "apply", "-auto-approve")
	if r.code != 0 {
		t.Fatalf("apply: exit %d", r.code)
	}
	// Each delegated partition on a line of its own, with Spark's account.
	if !regexp.MustCompile(`(?m)^ +partition .* by engine "spark": done: rewritten_data_files_count=6, .*; snapshot \d+ checked, \d+ rows unchanged$`).MatchString(r.stdout) {
		t.Errorf("apply's result does not say what Spark did, on the partition's line:\n%s", r.stdout)
	}
	after := st.load(ctx, t)
	var replaces []string
	for s := after.CurrentSnapshot(); s != nil && s.SnapshotID != before.CurrentSnapshot().SnapshotID; s = after.Metadata().SnapshotByID(*s.ParentSnapshotID) {
		replaces = append(replaces, string(s.Summary.Operation))
	}
	if !slices.Equal(replaces, []string{"replace", "replace"}) {
		t.Errorf("new snapshots on main: %v, want two replaces (icewright's and Spark's)", replaces)
	}
	if got := after.CurrentSnapshot().Summary.Properties["total-data-files"]; got != "2" {
		t.Errorf("total-data-files = %s, want 2 (one per partition)", got)
	}
	st.requireSameAndConverged(ctx, t, after, rowsBefore, duck, duckBefore)
}

// requireSameAndConverged fails t unless Spark reads rowsBefore and
// DuckDB duckBefore from after (the table after an apply), and the next
// plan is empty.
func (st *sparkTable) requireSameAndConverged(ctx context.Context, t *testing.T, after *table.Table, rowsBefore []string, duck testenv.DuckDB, duckBefore fingerprint) {
	t.Helper()
	if rowsAfter := st.rows(ctx, t); !slices.Equal(rowsAfter, rowsBefore) {
		t.Errorf("Spark reads other rows after the apply: %d rows, was %d", len(rowsAfter), len(rowsBefore))
	}
	duckAfter, err := duckFingerprint(ctx, duck, after)
	if err != nil {
		t.Fatal(err)
	}
	if !duckAfter.equal(duckBefore) {
		t.Errorf("DuckDB reads other values: %+v, was %+v", duckAfter, duckBefore)
	}
	if r := icewright(ctx, t, st.dir, "plan", "-detailed-exitcode"); r.code != 0 {
		t.Errorf("plan after apply: exit %d, want 0 (converged)\n%s", r.code, r.stdout)
	}
}

// TestSparkEngineFailure: Spark refuses the call (its catalog name is
// wrong); the action fails with Spark's message and the table's metadata
// is as it was.
func TestSparkEngineFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st := newSparkTable(ctx, t)
	t.Setenv("E2E_SPARK_REMOTE", st.env.Remote)
	st.configure(t, `engine "spark" {
  remote  = env("E2E_SPARK_REMOTE")
  catalog = "no_such_catalog"
}`, "", `min_input_files = 2
    engine          = "spark"`)
	before := st.load(ctx, t)
	r := icewright(ctx, t, st.dir, "apply", "-auto-approve")
	if r.code != 1 {
		t.Fatalf("apply: exit %d, want 1", r.code)
	}
	if !strings.Contains(r.stdout+r.stderr, "by spark: spark:") || !strings.Contains(r.stdout+r.stderr, "no_such_catalog") {
		t.Errorf("the failure does not carry Spark's message")
	}
	// Said once in the results, on the failed partition's line, without
	// spark-connect-go's repetition of the error class; the partition
	// after it says it was not run.
	if n := strings.Count(r.stdout, "REQUIRES_SINGLE_PART_NAMESPACE"); n != 1 || !strings.Contains(r.stdout, ": skipped: not run: an earlier partition failed") {
		t.Errorf("the failure is said %d times in the results, or the partition after it is not said:\n%s", n, r.stdout)
	}
	if after := st.load(ctx, t); after.MetadataLocation() != before.MetadataLocation() {
		t.Errorf("metadata moved from %s to %s", before.MetadataLocation(), after.MetadataLocation())
	}
}

// TestSparkEngineMergeOnReadDeletes: Spark compacts, in one apply, every
// partition of a merge-on-read table whose every data file carries
// deletes: deletion vectors on format v3 (Spark writes them into Puffin
// files, and the summary counts each at its content_size_in_bytes), and
// position delete files on format v2 (Spark's rewrite leaves them behind,
// dangling, until its last statement drops them all by sequence number). Each of Spark's replace snapshots
// passes the check after its commit (its sizes counted as Iceberg counts
// them, the delete files it drops all dangling); the apply exits 0, Spark
// and DuckDB read the same rows, no delete file is left and the next plan
// is empty (issue 41).
func TestSparkEngineMergeOnReadDeletes(t *testing.T) {
	for _, tc := range []struct {
		name, version, deleteFormat string
	}{
		{"v3 deletion vectors", "3", "puffin"},
		{"v2 position deletes", "2", "parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			st := createSparkTable(ctx, t, "(id bigint, `order` string, ts timestamp, note string) USING iceberg PARTITIONED BY (`order`) "+
				"TBLPROPERTIES ('format-version' = '"+tc.version+"', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', 'write.merge.mode' = 'merge-on-read')")
			const parts, filesPerPart, rowsPerFile = 4, 3, 500
			for f := range filesPerPart {
				sparkSQL(ctx, t, st.spark, fmt.Sprintf("INSERT INTO %s SELECT id, concat('p', id %% %d), TIMESTAMP '2026-11-01 00:00:00+00:00' + make_interval(0, 0, 0, 0, 0, 0, id), concat('row ', id) FROM range(%d, %d)",
					st.name, parts, f*parts*rowsPerFile, (f+1)*parts*rowsPerFile))
			}
			sparkSQL(ctx, t, st.spark, "DELETE FROM "+st.name+" WHERE id % 7 = 0")
			// One more file per partition, newer than every delete: once
			// the last partition's old files are rewritten, no live data
			// file is as old as the deletes, and Iceberg drops the other
			// partitions' dangling ones in that last commit (on v2, where
			// Spark's rewrite leaves position deletes behind), which the
			// check must accept as dangling.
			sparkSQL(ctx, t, st.spark, fmt.Sprintf("INSERT INTO %s SELECT id, concat('p', id %% %d), TIMESTAMP '2026-11-02 00:00:00+00:00', concat('late ', id) FROM range(%d, %d)",
				st.name, parts, filesPerPart*parts*rowsPerFile, filesPerPart*parts*rowsPerFile+parts*10))
			before := st.load(ctx, t)
			deletesIn := map[string]bool{}
			for _, df := range liveDeleteFiles(ctx, t, before) {
				if got := strings.ToLower(string(df.FileFormat())); got != tc.deleteFormat {
					t.Fatalf("setup: Spark wrote a %s delete file, want %s", got, tc.deleteFormat)
				}
				deletesIn[fmt.Sprint(df.Partition())] = true
			}
			if len(deletesIn) != parts {
				t.Fatalf("setup: delete files in %d partitions, want every one of %d", len(deletesIn), parts)
			}
			rowsBefore := st.rows(ctx, t)
			duck := testenv.DuckDBReader(t)
			duckBefore, err := duckFingerprint(ctx, duck, before)
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv("E2E_SPARK_REMOTE", st.env.Remote)
			st.configure(t, `engine "spark" { remote = env("E2E_SPARK_REMOTE") }`, "", `strategy        = "binpack"
    min_input_files = 2
    engine          = "spark"`)

			r := icewright(ctx, t, st.dir, "apply", "-auto-approve")
			if r.code != 0 {
				t.Fatalf("apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			// One line per partition, each with Spark's account.
			if n := strings.Count(r.stdout, `by engine "spark": done: rewritten_data_files_count=`); n != parts {
				t.Errorf("apply's result names %d Spark rewrites, want one per partition (%d), each on its line:\n%s", n, parts, r.stdout)
			}
			after := st.load(ctx, t)
			if got := after.CurrentSnapshot().Summary.Properties["total-delete-files"]; got != "0" {
				t.Errorf("total-delete-files = %s after the apply, want 0", got)
			}
			st.requireSameAndConverged(ctx, t, after, rowsBefore, duck, duckBefore)
		})
	}
}
