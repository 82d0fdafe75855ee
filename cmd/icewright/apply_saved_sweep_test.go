package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/icewright/icewright/providers/testkit"
)

// sweepOnlyHCL is the demo's catalog with an orphan sweep alone, so that
// nothing else in the apply reads or rewrites the table.
const sweepOnlyHCL = `
catalog "demo" {
  type      = "sql"
  uri       = "sqlite:lakehouse/catalog.db"
  warehouse = "lakehouse/warehouse"
}

policy "sweep" {
  orphan_files {
    older_than = "3d"
  }
}

table "demo.analytics.events" {
  policy = policy.sweep
}
`

// Issue 32 item 3: plan -out approves the removal of the demo's orphans;
// before apply PLANFILE a data file the current snapshot references
// vanishes from storage. A fresh plan would refuse (the listing is
// partial), so the saved plan's apply must too: nothing deleted, exit 1,
// the reason named.
func TestApplySavedSweepAfterReferencedFileVanished(t *testing.T) {
	bin := buildIcewright(t)
	dir := t.TempDir()
	lake := demoLake(t, bin, dir)
	if err := os.WriteFile(filepath.Join(dir, "demo.icewright.hcl"), []byte(sweepOnlyHCL), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runIcewright(t, bin, dir, "plan", "-out=saved.plan")
	if code != 0 || !regexp.MustCompile(`remove [1-9][0-9]* orphan files? `).MatchString(out) {
		t.Fatalf("plan: exit %d, want a sweep:\n%s", code, out)
	}
	tbl := lake.Reload(t, concurrentTable)
	orphans, err := filepath.Glob(filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "data", "*", "*failed-write*.parquet"))
	if err != nil || len(orphans) == 0 {
		t.Fatalf("the demo's orphans: %v %v", orphans, err)
	}
	live := testkit.LocalPath(t, testkit.DataFiles(t, tbl)[0])
	if err := os.Remove(live); err != nil {
		t.Fatal(err)
	}

	code, out = runIcewright(t, bin, dir, "apply", "saved.plan")
	if code != 1 {
		t.Fatalf("apply of the saved sweep: exit %d, want 1\n%s", code, out)
	}
	if !strings.Contains(out, "the listing is partial: 1 referenced files are missing from it (first: file://"+live) {
		t.Fatalf("apply does not name the vanished file:\n%s", out)
	}
	for _, p := range orphans {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: deleted by a sweep whose listing was partial: %v", p, err)
		}
	}
}
