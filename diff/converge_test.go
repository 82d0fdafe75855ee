package diff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// One apply converges (docs/design.md §5.1): after the plan's own commits land on
// main and the listed snapshots and refs are removed, selecting again at the
// same instant finds nothing. Checked over random histories.
func TestExpiryConvergesInOneApply(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for c := range 2000 {
		st := &TableState{Properties: map[string]string{}}
		n := 1 + r.IntN(30)
		heads := map[string]int64{}
		for i := range n {
			id := int64(i + 1)
			s := Snapshot{ID: id, SequenceNumber: id, TimestampMs: ago(time.Duration(n-i) * time.Duration(1+r.IntN(30)) * time.Hour)}
			branch := "main"
			if r.IntN(4) == 0 {
				branch = fmt.Sprintf("b%d", r.IntN(2))
			}
			if p, ok := heads[branch]; ok {
				s.ParentID = ptr(p)
			} else if i > 0 {
				s.ParentID = ptr(int64(1 + r.IntN(i)))
			}
			st.Snapshots = append(st.Snapshots, s)
			heads[branch] = id
		}
		if _, ok := heads["main"]; !ok {
			heads["main"] = int64(n)
		}
		st.CurrentSnapshotID = ptr(heads["main"])
		for _, name := range []string{"main", "b0", "b1"} {
			if id, ok := heads[name]; ok {
				ref := Ref{Name: name, Type: "branch", SnapshotID: id}
				if r.IntN(3) == 0 {
					ref.MinSnapshotsToKeep = ptr(1 + r.IntN(4))
				}
				if r.IntN(3) == 0 && name != "main" {
					ref.MaxRefAgeMs = ptr(int64(1+r.IntN(200)) * time.Hour.Milliseconds())
				}
				st.Refs = append(st.Refs, ref)
			}
		}
		for i := range r.IntN(3) {
			st.Refs = append(st.Refs, Ref{Name: fmt.Sprintf("t%d", i), Type: "tag", SnapshotID: int64(1 + r.IntN(n))})
		}
		maxAge := time.Duration(1+r.IntN(100)) * time.Hour
		minSnapshots := 1 + r.IntN(5)
		added := r.IntN(3)

		sel := SelectExpired(st, maxAge, minSnapshots, 0, added, testNow)
		if sel.Problem != "" {
			t.Fatalf("case %d: %s", c, sel.Problem)
		}
		// Apply: the plan's commits on main, then the removals.
		after := &TableState{Properties: st.Properties}
		for _, s := range st.Snapshots {
			if !slices.Contains(sel.Expired, s.ID) {
				after.Snapshots = append(after.Snapshots, s)
			}
		}
		head := *st.CurrentSnapshotID
		for i := range added {
			id := int64(1000 + i)
			after.Snapshots = append(after.Snapshots, Snapshot{ID: id, ParentID: ptr(head), TimestampMs: testNow.UnixMilli()})
			head = id
		}
		after.CurrentSnapshotID = ptr(head)
		for _, ref := range st.Refs {
			if slices.Contains(sel.RefsToRemove, ref.Name) {
				continue
			}
			if ref.Name == "main" {
				ref.SnapshotID = head
			}
			if !slices.ContainsFunc(after.Snapshots, func(s Snapshot) bool { return s.ID == ref.SnapshotID }) {
				t.Fatalf("case %d: expiry removed the head %d of retained ref %s", c, ref.SnapshotID, ref.Name)
			}
			after.Refs = append(after.Refs, ref)
		}
		again := SelectExpired(after, maxAge, minSnapshots, 0, 0, testNow)
		if len(again.Expired) != 0 || len(again.RefsToRemove) != 0 {
			t.Fatalf("case %d: second plan expires %v and refs %v (first: %v, added %d)", c, again.Expired, again.RefsToRemove, sel.Expired, added)
		}
	}
}
