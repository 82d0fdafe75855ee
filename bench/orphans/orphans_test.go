package orphans_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/icewright/icewright/bench/plan/benchlake"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
)

var (
	lakeDir  = flag.String("orphanbench.dir", "", "lakehouse made by `orphanbench setup` (default: a small one is built)")
	peakProf = flag.String("orphanbench.peakprofile", "", "write a heap profile taken when the live heap peaked")
)

const policy = `
policy "orphans" {
  orphan_files {
    older_than       = "3d"
    max_orphan_ratio = 0.5
  }
}

table "default.bench.orphans" {
  policy = policy.orphans
}
`

// BenchmarkOrphanScan observes bench.orphans with an orphan-only policy
// (providers.Session.Observe: the current-snapshot aggregate plus the orphan
// scan) and reports the peak live heap it reached.
func BenchmarkOrphanScan(b *testing.B) {
	ctx := context.Background()
	dir := *lakeDir
	if dir == "" {
		dir = b.TempDir()
		if err := buildSmall(ctx, dir); err != nil {
			b.Fatal(err)
		}
	}
	lake, err := benchlake.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	cfgDir := b.TempDir()
	if err := os.WriteFile(filepath.Join(cfgDir, "bench.icewright.hcl"), []byte(lake.HCL()+policy), 0o644); err != nil {
		b.Fatal(err)
	}
	_ = lake.Close()
	cfg, diags := config.Load(cfgDir, config.LoadOptions{})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	pol, ok := cfg.Resolve("default.bench.orphans")
	if !ok {
		b.Fatal("no policy for default.bench.orphans")
	}
	var peak uint64
	for b.Loop() {
		stop := samplePeak(&peak, *peakProf)
		sess := providers.Open(cfg, providers.Options{Now: time.Now})
		st, err := sess.Observe(ctx, pol)
		_ = sess.Close()
		stop()
		if err != nil {
			b.Fatal(err)
		}
		if st.Orphans == nil || len(st.Orphans.Candidates) == 0 {
			b.Fatalf("no orphans found: %+v", st.Orphans)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// samplePeak polls the live heap every 20ms and, when it reaches a new
// maximum, optionally rewrites the heap profile (which reflects the heap as
// of the most recent GC, so the saved profile is the one nearest the peak).
func samplePeak(peak *uint64, profile string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc <= *peak {
				continue
			}
			*peak = ms.HeapAlloc
			if profile != "" {
				if f, err := os.Create(profile); err == nil {
					_ = pprof.WriteHeapProfile(f)
					_ = f.Close()
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func buildSmall(ctx context.Context, dir string) error {
	lake, err := benchlake.Open(dir)
	if err != nil {
		return err
	}
	defer lake.Close()
	tbl, err := lake.CreateTable(ctx, "bench", "orphans", nil)
	if err != nil {
		return err
	}
	data := benchlake.DataDir(tbl)
	var files []benchlake.SyntheticFile
	for i := range 2000 {
		p := filepath.Join(data, "event_day=x", benchlake.FileName(i))
		if err := benchlake.Touch(p, time.Time{}); err != nil {
			return err
		}
		files = append(files, benchlake.SyntheticFile{Path: p, Size: 4 << 20, Rows: 10000})
	}
	if _, err := benchlake.AddFiles(ctx, tbl, files); err != nil {
		return err
	}
	old := time.Now().Add(-10 * 24 * time.Hour)
	for i := range 200 {
		if err := benchlake.Touch(filepath.Join(data, "event_day=x", "orphan-"+benchlake.FileName(2000+i)), old); err != nil {
			return err
		}
	}
	return nil
}
