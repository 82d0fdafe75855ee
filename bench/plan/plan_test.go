package plan_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/icewright/icewright/apply"
	"github.com/icewright/icewright/bench/plan/benchlake"
	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers"
)

// The default size is small so that `go test -bench .` stays cheap; the
// benchmark of issue 3 (200 commits, about 800 files, against iceberg-go's
// CLI) is bench/plan/run.sh.
var (
	commits = flag.Int("planbench.commits", 20, "appends of the benchmark table (4 files each)")
	lakeDir = flag.String("planbench.dir", "", "plan this lakehouse (made by planbench setup) instead of building one")
	tblName = flag.String("planbench.table", "events", "table of -planbench.dir to plan")
)

// BenchmarkPlan plans bench.events (appends over 4 partitions, history
// over 9 days, stray files) in process: observe, orphan scan, diff.
func BenchmarkPlan(b *testing.B) {
	ctx := context.Background()
	dir, name := *lakeDir, *tblName
	if dir == "" {
		dir, name = b.TempDir(), "events"
	}
	lake, err := benchlake.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer lake.Close()
	if *lakeDir == "" {
		if err := benchlake.BuildEvents(ctx, lake, *commits, 100, 4, 20); err != nil {
			b.Fatal(err)
		}
	}
	cfgDir := b.TempDir()
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "bench.icewright.hcl"), []byte(lake.Config(name)), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, diags := config.Load(cfgDir, config.LoadOptions{})
	if diags.HasErrors() {
		b.Fatal(diags.Error())
	}
	b.ResetTimer()
	for b.Loop() {
		sess := providers.Open(cfg, providers.Options{Now: time.Now})
		p, err := apply.Plan(ctx, cfg, sess, apply.PlanOptions{})
		_ = sess.Close()
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Errors) > 0 || len(p.Tables) != 1 || len(p.Tables[0].Actions) == 0 {
			b.Fatalf("unexpected plan: %+v", p)
		}
	}
}
