package tablemeta

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/testkit"
)

func TestApplyMetadataOneCommitAndNoOps(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := l.Create(iceberg.Properties{"keep.me": "x", "old.key": "1"})
	tbl = testkit.AppendIDs(t, tbl, 0, 10)
	logBefore := execSeqCount(tbl.Metadata().PreviousFiles())

	order := []diff.SortField{{Transform: "identity", Column: "id", Descending: true}}
	next, res, err := Apply(ctx, tbl, Change{
		Set: map[string]string{"write.target-file-size-bytes": "134217728"}, Remove: []string{"old.key", "absent.key"},
		SortOrder: &order,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Committed {
		t.Fatal("expected a commit")
	}
	if got := execSeqCount(next.Metadata().PreviousFiles()); got != logBefore+1 {
		t.Fatalf("properties and sort order took %d metadata versions, want 1", got-logBefore)
	}
	p := next.Properties()
	if p["write.target-file-size-bytes"] != "134217728" || p["keep.me"] != "x" {
		t.Fatalf("properties: %v", p)
	}
	if _, ok := p["old.key"]; ok {
		t.Fatal("old.key not removed")
	}
	if next.SortOrder().Len() != 1 || next.SortOrder().Field(0).Direction != table.SortDESC {
		t.Fatalf("sort order: %v", next.SortOrder())
	}

	// The same change again writes nothing.
	again, res, err := Apply(ctx, next, Change{
		Set: map[string]string{"write.target-file-size-bytes": "134217728"}, Remove: []string{"old.key"},
		SortOrder: &order,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Committed || !res.NoOp || again.MetadataLocation() != next.MetadataLocation() {
		t.Fatalf("re-apply committed: %+v", res)
	}
	if l.Load().MetadataLocation() != next.MetadataLocation() {
		t.Fatal("catalog moved on a no-op")
	}
}

// The replace_sort_order executor refuses an order the plan refuses (the
// engine's rule, compaction.CheckSortOrder), before any commit, and the
// properties of the same batch with it.
func TestApplyMetadataRefusesUnsortableOrder(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	tbl := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	for _, tt := range []struct {
		field diff.SortField
		want  string
	}{
		{diff.SortField{Transform: "day", Column: "region"}, "transform day does not apply to type string"},
		{diff.SortField{Transform: "bucket[4]", Column: "Region"}, `column "Region" is not in the table's schema`},
	} {
		order := []diff.SortField{tt.field}
		_, res, err := Apply(ctx, tbl, Change{Set: map[string]string{"a": "b"}, SortOrder: &order})
		if !errors.Is(err, store.ErrRefused) || !strings.Contains(err.Error(), tt.want) || res.Committed {
			t.Fatalf("%+v: err = %v (committed %v), want store.ErrRefused with %q", tt.field, err, res.Committed, tt.want)
		}
	}
	if got := l.Load().MetadataLocation(); got != tbl.MetadataLocation() {
		t.Fatalf("the table moved: %s", got)
	}
}

func TestApplyMetadataConflictKeepsWriterCommit(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewOrders(t)
	stale := testkit.AppendIDs(t, l.Create(nil), 0, 10)
	testkit.AppendIDs(t, l.Load(), 10, 5) // a writer commits after we loaded

	_, res, err := Apply(ctx, stale, Change{Set: map[string]string{"a": "b"}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("want store.ErrConflict, got %v", err)
	}
	if res.Committed {
		t.Fatal("reported committed")
	}
	cur := l.Load()
	if _, ok := cur.Properties()["a"]; ok {
		t.Fatal("property landed despite the conflict")
	}
	testkit.MustEqualIDs(t, testkit.OrderIDs(t, cur), testkit.Seq(0, 15))
}

func execSeqCount[T any](s iter.Seq[T]) int {
	n := 0
	for range s {
		n++
	}
	return n
}
