package orphans

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/icewright/icewright/providers/internal/store"
)

// TestLocationIndexAgreesWithOverlappingTables: the index answers what the
// pass over every table (overlappingTables) answers, on random locations
// and roots that nest, share prefixes without a slash ("t" and "t2", "t-x",
// "t.x"), sit on other buckets, and write paths and resolved spellings.
func TestLocationIndexAgreesWithOverlappingTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 44))
	segs := []string{"a", "b", "t", "t2", "t-x", "t.x", "data", "db"}
	buckets := []string{"s3://b1", "s3://b2", "file://"}
	path := func() string {
		b := buckets[rng.IntN(len(buckets))]
		if b == "file://" {
			b = "file:///w"
		}
		n := rng.IntN(4)
		for range n {
			b += "/" + segs[rng.IntN(len(segs))]
		}
		return b
	}
	for round := range 300 {
		locs := map[string]TableLocation{}
		for i := range 1 + rng.IntN(30) {
			tl := TableLocation{Location: path()}
			if rng.IntN(3) == 0 {
				tl.WritePaths = map[string]string{"write.data.path": path()}
			}
			if rng.IntN(4) == 0 {
				tl.Resolved = []string{store.NormPath(path())}
			}
			if rng.IntN(10) == 0 {
				tl.Location = "" // unknown location
			}
			locs[fmt.Sprintf("c.ns.t%d", i)] = tl
		}
		ts := NewTables(locs)
		for q := range 5 {
			roots := []string{rootKey(path(), store.NormPath)}
			if rng.IntN(2) == 0 {
				roots = append(roots, rootKey(path(), store.NormPath))
			}
			resolved := make([]string, len(roots))
			if rng.IntN(3) == 0 {
				resolved[0] = rootKey(path(), store.NormPath)
			}
			self := fmt.Sprintf("c.ns.t%d", rng.IntN(len(locs)+1))
			want := overlappingTables(self, locs, roots, resolved, store.NormPath)
			got := ts.overlapping(self, roots, resolved, store.NormPath, "plain")
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("round %d query %d: roots %v resolved %v self %s over %v:\n index %v\n pass  %v", round, q, roots, resolved, self, locs, got, want)
			}
		}
	}
}
