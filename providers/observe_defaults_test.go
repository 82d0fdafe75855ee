package providers

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icewright/icewright/providers/testkit"
)

// What the rewrite would get wrong on a table PyIceberg evolved reaches the
// plan through the observation: a long default of -2^63 (an iceberg-go
// commit writes it back as -9223372036854776000) refuses every commit, and
// an equality delete on a column a file lacks refuses compaction.
func TestObserveRefusesWhatTheRewriteGetsWrong(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	const dir, current = "duckdb-add-columns-with-defaults", "metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json"
	l.AddCorpusTable(t, dir, current, "corpus.defaults", nil)
	sess := sessionFor(t, l)
	st, err := sess.Observe(ctx, testkit.Policy("lake.corpus.defaults"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.CommitProblem, "col_long (field id 4) = -9223372036854775808") {
		t.Fatalf("commit problem %q, want the long default named", st.CommitProblem)
	}
	if st.CompactProblem != "" {
		t.Fatalf("compact problem %q with no equality delete", st.CompactProblem)
	}

	// The same table with a default float64 holds (so iceberg-go may
	// commit), and an equality delete on col_string, which the first file
	// lacks (its rows read "HELLO").
	tbl := l.AddCorpusTable(t, dir, current, "corpus.eq", func(s string) string {
		return strings.ReplaceAll(s, "-9223372036854775808", "-9007199254740991")
	})
	testkit.DeleteEqualityOn(t, tbl, "col_string", func(b array.Builder) { b.(*array.StringBuilder).Append("World") })
	st, err = sess.Observe(ctx, testkit.Policy("lake.corpus.eq"))
	if err != nil {
		t.Fatal(err)
	}
	if st.CommitProblem != "" || !strings.Contains(st.CompactProblem, "matches on column col_string") {
		t.Fatalf("commit problem %q, compact problem %q: want only compaction refused", st.CommitProblem, st.CompactProblem)
	}
}
