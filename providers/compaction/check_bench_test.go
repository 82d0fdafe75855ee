package compaction

import (
	"context"
	"strings"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/bench/compaction/benchtable"
)

// sentAt records when a commit reaches the catalog.
type sentAt struct {
	table.CatalogIO
	at time.Time
}

func (s *sentAt) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, ups []table.Update) (table.Metadata, string, error) {
	s.at = time.Now()
	return s.CatalogIO.CommitTable(ctx, ident, reqs, ups)
}

// BenchmarkCommitCheck measures the commit check against the compaction it
// guards, on the bench table (bench/compaction/benchtable: one append per
// commit, each writing one file per partition into one manifest): the
// check's time is from the moment the attempt's updates are ready (the
// test seam returns them unchanged) to the moment they reach the catalog,
// the rewrite's is Run's. Figures: docs/benchmarks.md, "Commit check".
//
//	go test -run '^$' -bench CommitCheck -benchtime 3x ./providers/compaction/
func BenchmarkCommitCheck(b *testing.B) {
	cases := []struct {
		name                 string
		commits, rows, parts int
		onePartition         bool
	}{
		// Every partition rewritten: every manifest is dropped, one added.
		{name: "all-50x1000x4", commits: 50, rows: 1000, parts: 4},
		// One partition of four rewritten: every manifest holds a file of
		// it, so each is rewritten with the other partitions' files as
		// EXISTING entries: the check reads every manifest of both sides.
		{name: "one-200x1000x4", commits: 200, rows: 1000, parts: 4, onePartition: true},
		// Larger files (the 2M-row table of the head-to-head runs, in 20
		// commits): the rewrite's cost follows the bytes, the check's the
		// manifests.
		{name: "all-20x100000x4", commits: 20, rows: 100_000, parts: 4},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			var check, run time.Duration
			for range b.N {
				b.StopTimer()
				cat, db, err := benchtable.OpenCatalog(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				if err := benchtable.Setup(ctx, cat, tc.commits, tc.rows, tc.parts, false); err != nil {
					b.Fatal(err)
				}
				tbl, err := cat.LoadTable(ctx, benchtable.Ident)
				if err != nil {
					b.Fatal(err)
				}
				groups := groupsAll(b, tbl)
				if tc.onePartition {
					for _, g := range groups {
						if strings.Contains(g.Partition, "eu") {
							groups = []Group{g}
							break
						}
					}
				}
				sent := &sentAt{CatalogIO: cat}
				var ready time.Time
				b.StartTimer()
				start := time.Now()
				res, err := Run(ctx, tbl, groups, Options{Strategy: Binpack, TargetFileSize: 8 << 20, Catalog: sent,
					tamper: func(_ context.Context, _ icebergio.IO, _ table.Metadata, updates []table.Update) ([]table.Update, error) {
						ready = time.Now()
						return updates, nil
					}})
				run += time.Since(start)
				b.StopTimer()
				if err != nil || res.Committed() != len(groups) {
					b.Fatalf("compaction: %v (%d of %d groups committed)", err, res.Committed(), len(groups))
				}
				check += sent.at.Sub(ready)
				_ = db.Close()
			}
			b.ReportMetric(float64(check.Milliseconds())/float64(b.N), "check-ms/op")
			b.ReportMetric(float64(run.Milliseconds())/float64(b.N), "run-ms/op")
			b.ReportMetric(float64(check)/float64(run)*100, "check-%")
		})
	}
}
