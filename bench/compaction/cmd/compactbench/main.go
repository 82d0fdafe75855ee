// Command compactbench builds the compaction benchmark table and runs the
// icewright compaction engine on it, so that bench/compaction/run.sh can time
// it against `iceberg compact run` on identical copies of the same table.
//
//	compactbench setup -dir D [-commits 200] [-rows 1000] [-partitions 4] [-sorted]
//	compactbench run   -dir D [-strategy binpack|sort|zorder] [-zorder x,y] [-target 8388608] [-budget 0]
//	compactbench check -dir D [-sorted]
//
// The table is `bench.events` in a sqlite SQL catalog named "default" at
// D/catalog.db with its warehouse in D/warehouse (what the iceberg CLI's
// --catalog sql defaults expect).
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"
	icecompaction "github.com/apache/iceberg-go/table/compaction"

	"github.com/icewright/icewright/bench/compaction/benchtable"
	"github.com/icewright/icewright/providers/compaction"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "compactbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: compactbench setup|run|check -dir D ...")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	dir := fs.String("dir", "", "benchmark directory")
	commits := fs.Int("commits", 200, "appends")
	rows := fs.Int("rows", 1000, "rows per append")
	parts := fs.Int("partitions", 4, "partitions (identity(region))")
	sorted := fs.Bool("sorted", false, "give the table a sort order (x, y)")
	zstdLevel := fs.Int("zstd-level", 0, "setup: the table's write.parquet.compression-level (0: unset, each writer's default)")
	strategy := fs.String("strategy", "binpack", "binpack|sort|zorder")
	zorder := fs.String("zorder", "x,y", "the columns -strategy zorder interleaves")
	target := fs.Int64("target", 8<<20, "target file size")
	budget := fs.Int64("budget", 0, "memory budget (0 = engine default)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile")
	memprofile := fs.String("memprofile", "", "write a heap profile taken at the highest sampled heap")
	perPartition := fs.Bool("per-partition", false, "one group per partition (a whole partition through one rewrite)")
	concurrent := fs.Int("concurrent", 0, "groups rewritten at once at most (compaction.Options.MaxConcurrentGroups; 0: one per CPU, as memory allows)")
	lowmemZstd := fs.Bool("lowmem-zstd", true, "install compaction.LowMemoryZstd as the zstd page codec (as icewright does)")
	memlimit := fs.Bool("memlimit", true, "set the Go soft memory limit to compaction.ProcessMemoryLimit (as icewright apply does)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *lowmemZstd {
		base, err := compress.GetCodec(compress.Codecs.Zstd)
		if err != nil {
			return err
		}
		compress.RegisterCodec(compress.Codecs.Zstd, compaction.LowMemoryZstd(base))
	}
	if *memprofile != "" {
		stop := sampleHeapPeak(*memprofile)
		defer stop()
	}
	ctx := context.Background()
	cat, db, err := benchtable.OpenCatalog(*dir)
	if err != nil {
		return err
	}
	defer db.Close()
	switch args[0] {
	case "setup":
		return benchtable.SetupLevel(ctx, cat, *commits, *rows, *parts, *sorted, *zstdLevel)
	case "run":
		opts := compaction.Options{Strategy: compaction.Strategy(*strategy), TargetFileSize: *target, MemoryBudget: *budget, MaxConcurrentGroups: *concurrent, Catalog: cat}
		if opts.Strategy == compaction.ZOrder {
			opts.ZOrderColumns = strings.Split(*zorder, ",")
		}
		return runEngine(ctx, cat, opts, *memlimit, *perPartition)
	case "check":
		return check(ctx, cat, *sorted)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

type runReport struct {
	Strategy    string  `json:"strategy"`
	Groups      int     `json:"groups"`
	InputFiles  int     `json:"input_files"`
	InputBytes  int64   `json:"input_bytes"`
	OutputFiles int     `json:"output_files"`
	OutputBytes int64   `json:"output_bytes"`
	Rows        int64   `json:"rows"`
	SpilledRuns int     `json:"spilled_runs"`
	Seconds     float64 `json:"seconds"`
	MBPerSecond float64 `json:"mb_per_s"`
	MaxRSSKiB   int64   `json:"max_rss_kib"`
	MemoryLimit int64   `json:"memory_limit"` // the Go soft limit set (0: none)
	// GroupSeconds sums the groups' own durations: above Seconds, groups
	// overlapped (about 2x with both cores rewriting all along).
	GroupSeconds float64 `json:"group_seconds"`
	RunnerOutput string  `json:"-"`
}

func runEngine(ctx context.Context, cat *sqlcat.Catalog, opts compaction.Options, memlimit, perPartition bool) error {
	start := time.Now()
	target := opts.TargetFileSize

	tbl, err := cat.LoadTable(ctx, benchtable.Ident)
	if err != nil {
		return err
	}
	// The same selection as `iceberg compact run --target-file-size`.
	sel := icecompaction.DefaultConfig()
	sel.TargetFileSizeBytes = target
	sel.MinFileSizeBytes = target * 3 / 4
	sel.MaxFileSizeBytes = target * 9 / 5
	groups, err := compaction.PlanGroups(ctx, tbl, compaction.PlanConfig{Selection: sel, PerPartition: perPartition})
	if err != nil {
		return err
	}
	var limit int64
	if memlimit {
		if limit, err = compaction.ProcessMemoryLimit(tbl, groups, opts); err != nil {
			return err
		}
		debug.SetMemoryLimit(limit)
	}
	res, err := compaction.Run(ctx, tbl, groups, opts)
	if err != nil {
		return err
	}
	rep := runReport{Strategy: string(opts.Strategy), Groups: len(groups), MemoryLimit: limit}
	for _, g := range res.Groups {
		rep.InputFiles += g.InputFiles
		rep.InputBytes += g.InputBytes
		rep.OutputFiles += g.OutputFiles
		rep.OutputBytes += g.OutputBytes
		rep.Rows += g.OutputRows
		rep.SpilledRuns += g.SpilledRuns
		rep.GroupSeconds += g.Duration.Seconds()
	}
	rep.Seconds = time.Since(start).Seconds()
	rep.MBPerSecond = float64(rep.InputBytes) / (1 << 20) / rep.Seconds
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		rep.MaxRSSKiB = ru.Maxrss
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

type checkReport struct {
	Files           int   `json:"files"`
	Rows            int64 `json:"rows"`
	SortOrderIDs    []int `json:"sort_order_ids"`
	OrderBreaks     []int `json:"order_breaks_per_file"`
	MaxOrderBreaks  int   `json:"max_order_breaks"`
	TotalBreaks     int   `json:"total_order_breaks"`
	RowsFingerprint int64 `json:"rows_fingerprint"`
}

// check counts live files and rows, a fingerprint of the rows (sum of ids
// and of x: equal before and after a lossless rewrite), and, with -sorted,
// the (x, y) order breaks inside each file read straight from Parquet.
func check(ctx context.Context, cat *sqlcat.Catalog, sorted bool) error {
	tbl, err := cat.LoadTable(ctx, benchtable.Ident)
	if err != nil {
		return err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return err
	}
	rep := checkReport{Files: len(tasks)}
	_, it, err := tbl.Scan(table.WithSelectedFields("id", "x")).ToArrowRecords(ctx)
	if err != nil {
		return err
	}
	for rec, err := range it {
		if err != nil {
			return err
		}
		rep.Rows += rec.NumRows()
		ids := rec.Column(0).(*array.Int64)
		xs := rec.Column(1).(*array.Int32)
		for i := range ids.Len() {
			rep.RowsFingerprint += ids.Value(i)*31 + int64(xs.Value(i))
		}
		rec.Release()
	}
	if sorted {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			id := 0
			if p := t.File.SortOrderID(); p != nil {
				id = *p
			}
			rep.SortOrderIDs = append(rep.SortOrderIDs, id)
			f, err := fsys.Open(t.File.FilePath())
			if err != nil {
				return err
			}
			rdr, err := file.NewParquetReader(f)
			if err != nil {
				return err
			}
			ar, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 65536}, memory.DefaultAllocator)
			if err != nil {
				return err
			}
			rr, err := ar.GetRecordReader(ctx, []int{3, 4}, nil)
			if err != nil {
				return err
			}
			breaks := 0
			var px, py int32
			first := true
			for rr.Next() {
				rec := rr.RecordBatch()
				xs := rec.Column(0).(*array.Int32)
				ys := rec.Column(1).(*array.Int32)
				for i := range xs.Len() {
					x, y := xs.Value(i), ys.Value(i)
					if !first && cmp.Or(cmp.Compare(px, x), cmp.Compare(py, y)) > 0 {
						breaks++
					}
					px, py, first = x, y, false
				}
			}
			rr.Release()
			_ = rdr.Close()
			rep.OrderBreaks = append(rep.OrderBreaks, breaks)
			rep.TotalBreaks += breaks
			rep.MaxOrderBreaks = max(rep.MaxOrderBreaks, breaks)
		}
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}

// sampleHeapPeak writes a heap profile whenever the live heap reaches a new
// maximum (sampled every 10ms), so the last one written shows the peak.
func sampleHeapPeak(path string) func() {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var peak uint64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak+peak/20 {
				peak = ms.HeapInuse
				if f, err := os.Create(path); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					_ = f.Close()
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}
