package compactionbench

import (
	"context"
	"testing"

	icecompaction "github.com/apache/iceberg-go/table/compaction"

	"github.com/icewright/icewright/bench/compaction/benchtable"
	"github.com/icewright/icewright/providers/compaction"
)

// Benchmarks of the engine in process (go test -bench . ./bench/compaction/).
// Each iteration compacts a fresh table of 50 commits x 1,000 rows in 4
// partitions (200 files); the head-to-head against `iceberg compact run`
// with wall time and peak RSS is run.sh.
func benchmarkStrategy(b *testing.B, strategy compaction.Strategy, sorted bool) {
	ctx := context.Background()
	var inBytes int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cat, db, err := benchtable.OpenCatalog(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		if err := benchtable.Setup(ctx, cat, 50, 1000, 4, sorted); err != nil {
			b.Fatal(err)
		}
		tbl, err := cat.LoadTable(ctx, benchtable.Ident)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		sel := icecompaction.DefaultConfig()
		sel.TargetFileSizeBytes = 8 << 20
		sel.MinFileSizeBytes = 6 << 20
		sel.MaxFileSizeBytes = 14 << 20
		groups, err := compaction.PlanGroups(ctx, tbl, compaction.PlanConfig{Selection: sel})
		if err != nil {
			b.Fatal(err)
		}
		res, err := compaction.Run(ctx, tbl, groups, compaction.Options{Strategy: strategy, TargetFileSize: 8 << 20, Catalog: cat})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		for _, g := range res.Groups {
			inBytes += g.InputBytes
		}
		_ = db.Close()
		b.StartTimer()
	}
	b.SetBytes(inBytes / int64(b.N))
}

func BenchmarkBinpack(b *testing.B) { benchmarkStrategy(b, compaction.Binpack, false) }
func BenchmarkSort(b *testing.B)    { benchmarkStrategy(b, compaction.Sort, true) }
