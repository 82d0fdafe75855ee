package compaction_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
)

// TestWhereReadsClockAgrees holds diff.WhereReadsClock (reconcile's rule
// that a table whose compaction.where reads the clock is due every
// interval) to ParseWhere: a text reads the clock exactly when its
// expression at two times differs.
func TestWhereReadsClockAgrees(t *testing.T) {
	t1 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	t2 := t1.Add(400*24*time.Hour + 90*time.Minute)
	for _, where := range []string{
		"region = 'eu'",
		"note = 'now'",
		`"now" = 1`,
		"nowhere = 1 AND current_datex = 2",
		"ts >= current_date",
		"ts >= CURRENT_DATE - interval '7' day",
		"ts < now() - interval '90 minutes'",
		"ts > current_timestamp",
		"region = 'eu' OR (ts < Now())",
		"id = 1 AND NOT ts IS NULL", // (an IN set prints in map order)
	} {
		e1, err := compaction.ParseWhere(where, t1)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		e2, err := compaction.ParseWhere(where, t2)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		reads := fmt.Sprint(e1) != fmt.Sprint(e2)
		if got := diff.WhereReadsClock(where); got != reads {
			t.Errorf("%s: WhereReadsClock %v, but its expression at two times differs: %v (%v / %v)", where, got, reads, e1, e2)
		}
	}
}
