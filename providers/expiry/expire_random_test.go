package expiry_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/testkit"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
)

// TestExpireRandomHistories builds random histories (appends, deletes,
// tags, branches, time shifts), expires what Iceberg's rules select under a
// random retention, and checks that every snapshot that stays reads exactly
// the rows it read before and that every file any of them references exists.
func TestExpireRandomHistories(t *testing.T) {
	expiring := 0
	defer func() {
		// Trials that expire nothing prove nothing.
		if !t.Failed() && expiring < 4 {
			t.Fatalf("only %d of 8 trials expired anything", expiring)
		}
	}()
	for trial := range 8 {
		seed := uint64(4242 + trial)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
			ctx := context.Background()
			l := testkit.NewOrders(t)
			tbl := l.Create(nil)
			next := int64(0)
			refs := 0
			for step := range 12 + rng.IntN(8) {
				switch op := rng.IntN(10); {
				case op < 4 || tbl.CurrentSnapshot() == nil:
					n := int64(5 + rng.IntN(20))
					tbl = testkit.AppendIDs(t, tbl, next, n)
					next += n
				case op < 6:
					cut := rng.Int64N(max(next, 1))
					out, err := tbl.Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), cut), nil)
					if err != nil {
						t.Fatalf("seed %d step %d: delete: %v", seed, step, err)
					}
					tbl = out
				case op < 8:
					ids := testkit.SnapshotIDs(tbl)
					id := ids[rng.IntN(len(ids))]
					typ := table.TagRef
					if op == 7 {
						typ = table.BranchRef
					}
					refs++
					name := []string{"tag", "branch"}[op-6] + string(rune('a'+refs))
					if _, _, err := l.Cat.CommitTable(ctx, l.Ident, nil, []table.Update{
						table.NewSetSnapshotRefUpdate(name, id, typ, 0, 0, 0)}); err != nil {
						t.Fatalf("seed %d: ref: %v", seed, err)
					}
					tbl = l.Load()
				default:
					tbl = l.Backdate(tbl, time.Duration(2+rng.IntN(5))*24*time.Hour)
				}
			}
			// The plan's fast decoder reads this history as iceberg-go does
			// (issue 44: every field the walk uses, entry by entry).
			testkit.SameOnBothDecoders(t, tbl)
			// Rows of every snapshot before expiry.
			before := map[int64][]int64{}
			for _, id := range testkit.SnapshotIDs(tbl) {
				before[id] = scanSnapshot(t, tbl, id)
			}
			ret := &expiry.RetentionCheck{
				MaxAge:       time.Duration(1+rng.IntN(6)) * 24 * time.Hour,
				MinSnapshots: 1 + rng.IntN(3),
				Now:          time.Now(),
			}
			sel := diff.SelectExpired(expiry.HistoryState(tbl), ret.MaxAge, ret.MinSnapshots, 0, 0, ret.Now)
			if sel.Problem != "" {
				t.Fatalf("seed %d: %s", seed, sel.Problem)
			}
			// Also list a ref head on purpose: it must be kept.
			ids := slices.Clone(sel.Expired)
			for name, ref := range tbl.Metadata().Refs() {
				if name != table.MainBranch {
					ids = append(ids, ref.SnapshotID)
					break
				}
			}
			after, res, err := expiry.Expire(ctx, l.Cat, tbl, expiry.Spec{SnapshotIDs: ids, Retention: ret})
			if err != nil {
				t.Fatalf("seed %d: expire: %v", seed, err)
			}
			t.Logf("seed %d: %d snapshots, %d expired, %d files deleted", seed, len(before), res.SnapshotsExpired, res.FilesDeleted)
			if res.SnapshotsExpired > 0 {
				expiring++
			}
			cur := l.Load()
			if cur.MetadataLocation() != after.MetadataLocation() {
				t.Fatalf("seed %d: returned table is not the catalog's", seed)
			}
			testkit.AssertAllReferencedExist(t, cur)
			for name, ref := range cur.Metadata().Refs() {
				if cur.SnapshotByID(ref.SnapshotID) == nil {
					t.Fatalf("seed %d: ref %s dangles", seed, name)
				}
			}
			for _, id := range testkit.SnapshotIDs(cur) {
				if got := scanSnapshot(t, cur, id); !slices.Equal(got, before[id]) {
					t.Fatalf("seed %d: snapshot %d reads %d rows after expiry, %d before", seed, id, len(got), len(before[id]))
				}
			}
			for _, id := range sel.Expired {
				if cur.SnapshotByID(id) != nil && !isRefHead(cur, id) {
					t.Fatalf("seed %d: snapshot %d selected but not expired", seed, id)
				}
			}
		})
	}
}

func isRefHead(tbl *table.Table, id int64) bool {
	for _, ref := range tbl.Metadata().Refs() {
		if ref.SnapshotID == id {
			return true
		}
	}
	return false
}

func scanSnapshot(t *testing.T, tbl *table.Table, id int64) []int64 {
	t.Helper()
	at, err := tbl.Scan(table.WithSnapshotID(id)).ToArrowTable(context.Background())
	if err != nil {
		t.Fatalf("scan snapshot %d: %v", id, err)
	}
	defer at.Release()
	var ids []int64
	for _, ch := range at.Column(0).Data().Chunks() {
		for i := range ch.Len() {
			ids = append(ids, ch.(interface{ Value(int) int64 }).Value(i))
		}
	}
	slices.Sort(ids)
	return ids
}
