package compaction_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/testkit"
)

// The Java-written equality-delete tables through the apply path
// (compact.Compact: selection from a policy's rules, the recording IO, the
// rebasing commit).
func TestJavaEqualityDeletesApplyPath(t *testing.T) {
	compaction.ForEachJavaTable(t, func(t *testing.T, l *testkit.Lakehouse, tbl *table.Table) *table.Table {
		rows := compaction.RowStrings(t, tbl)
		sel := diff.CompactionSelection{Target: 128 << 20, Min: 96 << 20, Max: 230 << 20, MinInputFiles: 1, DeleteFileThreshold: 1}
		act, err := compact.PlanCompaction(context.Background(), tbl, sel, "binpack", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		_, res, err := compact.Compact(context.Background(), tbl, compact.CompactSpec{Action: act, Catalog: l.Catalog, Rebase: true})
		if err != nil {
			t.Fatal(err)
		}
		// A partition's lone file with no delete file in the partition is
		// no action (the plan's rule), so the rewrite may read fewer rows
		// than the table has; ForEachJavaTable checks every row and that
		// no delete file is left.
		if !res.Committed || res.RowsBefore > int64(len(rows)) || res.RowsAfter != res.RowsBefore {
			t.Fatalf("result %+v, %d live rows before", res, len(rows))
		}
		return l.Reload(t, strings.Join(tbl.Identifier(), "."))
	})
}
