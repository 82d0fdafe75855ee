package providers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/providers/testkit"
)

// What the rewrite would get wrong on a table PyIceberg evolved reaches the
// plan through the observation: a long default of -2^63 (an iceberg-go
// commit writes it back as -9223372036854776000) refuses every commit, and
// an equality delete on a column a file lacks refuses compaction.
func TestObserveRefusesWhatTheRewriteGetsWrong(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	src := filepath.Join("..", "internal", "testdata", "tables", "duckdb-add-columns-with-defaults")
	current := "metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json"
	l.RegisterSQL(t, "corpus.defaults", testkit.CopyTable(t, src, filepath.Join(l.Warehouse, "corpus", "defaults"), current))
	sess := sessionFor(t, l)
	st, err := sess.Observe(ctx, effective("lake.corpus.defaults"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.CommitProblem, "col_long (field id 4) = -9223372036854775808") {
		t.Fatalf("commit problem %q, want the long default named", st.CommitProblem)
	}
	if st.CompactProblem != "" {
		t.Fatalf("compact problem %q with no equality delete", st.CompactProblem)
	}

	// The same table with a default float64 holds, and an equality delete
	// on col_string, which the first file lacks (its rows read "HELLO").
	withEqualityDelete(t, l, l.RegisterSQL(t, "corpus.eq", testkit.CopyTable(t, src, filepath.Join(l.Warehouse, "corpus", "eq"), current)))
	st, err = sess.Observe(ctx, effective("lake.corpus.eq"))
	if err != nil {
		t.Fatal(err)
	}
	if st.CommitProblem != "" || !strings.Contains(st.CompactProblem, "matches on column col_string") {
		t.Fatalf("commit problem %q, compact problem %q: want only compaction refused", st.CommitProblem, st.CompactProblem)
	}
}

// withEqualityDelete edits the long default of the copied table to one
// float64 holds (so iceberg-go may commit) and commits an equality delete
// on col_string.
func withEqualityDelete(t *testing.T, l *testkit.Lakehouse, tbl *table.Table) {
	t.Helper()
	ctx := context.Background()
	p := strings.TrimPrefix(tbl.MetadataLocation(), "file://")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(raw), "-9223372036854775808", "-9007199254740991")), 0o644); err != nil {
		t.Fatal(err)
	}
	tbl = l.Reload(t, "corpus.eq")
	field, _ := tbl.Schema().FindFieldByName("col_string")
	as, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, field), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append("World")
	rec := b.NewRecordBatch()
	defer rec.Release()
	txn := tbl.NewTransaction()
	if err := txn.CommitEqualityDeletes(ctx, []int{field.ID}, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}
