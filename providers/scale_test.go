package providers

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/icewright/icewright/providers/testkit"
)

// Observe on 20,000 data files (manifest entries only) aggregates them into
// 4 partitions; the figures are exact and nothing is kept per file except
// candidate sizes.
func TestObserveManyFiles(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := l.CreateTable(t, "ns.big", testkit.TableOptions{Partitioned: true})
	testkit.AddSyntheticFiles(t, tbl, 4, 5000, 4, 1<<20)
	sess := sessionFor(t, l)
	start := time.Now()
	st, err := sess.Observe(ctx, testkit.Policy("lake.ns.big"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("observed 20,000 files in %v", time.Since(start))
	if st.Files.DataFiles != 20000 || st.Files.DataBytes != 20000<<20 || len(st.Partitions) != 4 {
		t.Fatalf("files %d bytes %d partitions %d", st.Files.DataFiles, st.Files.DataBytes, len(st.Partitions))
	}
	for _, p := range st.Partitions {
		if p.DataFiles != 5000 || len(p.CandidateSizes) != 5000 {
			t.Errorf("%s: %d files, %d candidates", p.Partition, p.DataFiles, len(p.CandidateSizes))
		}
	}
	if st.Files.MedianSize != 1<<20 || st.Manifests.Count != 4 {
		t.Errorf("median %d manifests %d", st.Files.MedianSize, st.Manifests.Count)
	}
}

// BenchmarkObserve100k observes a table of 100,000 data files in 20
// manifests and reports the heap in use afterwards and the bytes allocated.
func BenchmarkObserve100k(b *testing.B) {
	ctx := context.Background()
	l := testkit.NewLakehouse(b, b.TempDir(), "lake")
	tbl := l.CreateTable(b, "ns.big", testkit.TableOptions{Partitioned: true})
	testkit.AddSyntheticFiles(b, tbl, 20, 5000, 30, 1<<20)
	cfg := sessionConfig(l)
	sess := Open(cfg, Options{})
	defer sess.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		st, err := sess.Observe(ctx, testkit.Policy("lake.ns.big"))
		if err != nil {
			b.Fatal(err)
		}
		if st.Files.DataFiles != 100000 {
			b.Fatalf("%d files", st.Files.DataFiles)
		}
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
}

// BenchmarkOrphanScan50k scans a table of 50,000 data files (empty files
// on disk, named by synthetic manifest entries) plus 5,000 strays, with the
// listing and the referenced set spilled every 20,000 records, and reports
// the heap in use at the end.
func BenchmarkOrphanScan50k(b *testing.B) {
	ctx := context.Background()
	l := testkit.NewLakehouse(b, b.TempDir(), "lake")
	tbl := l.CreateTable(b, "ns.big", testkit.TableOptions{})
	tbl = testkit.AddSyntheticFiles(b, tbl, 10, 5000, 1, 1<<20)
	dir := filepath.Join(tbl.Location(), "data", "synthetic")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, p := range testkit.DataFiles(b, tbl) {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 5000 {
		if err := os.WriteFile(filepath.Join(dir, "stray-"+strconv.Itoa(i)+".parquet"), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	sess := Open(sessionConfig(l), Options{})
	defer sess.Close()
	sess.spill = 20000
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		scan, err := sess.scanOrphans(ctx, testkit.OrphanPolicy("lake.ns.big"), tbl, nil, sess.plannedTables)
		if err != nil {
			b.Fatal(err)
		}
		if len(scan.Candidates) != 5000 || scan.MissingReferencedCount != 0 {
			b.Fatalf("%d candidates, %d missing", len(scan.Candidates), scan.MissingReferencedCount)
		}
	}
	b.StopTimer()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
}
