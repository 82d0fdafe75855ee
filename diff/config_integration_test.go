package diff

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
)

// The unit tests build config.Effective literals; this one checks that what
// config.Load and Resolve really produce plans as expected, reasons
// pointing at the lines of the file.
func TestPlanFromLoadedConfig(t *testing.T) {
	src := `catalog "lake" {
  type      = "sql"
  uri       = "sqlite:lake/catalog.db"
  warehouse = "lake/warehouse"
}

policy "base" {
  target_file_size = "512MiB"

  snapshot_retention {
    max_age       = "5d"
    min_snapshots = 2
  }

  manifests {
    max_count = 3
  }

  properties = {
    "write.parquet.compression-codec" = "zstd"
  }
}

policy "events" {
  extends    = policy.base
  sort_order = ["event_ts desc nulls last", "bucket(16, user_id)"]
}

table "lake.analytics.clicks" {
  policy = policy.events
  snapshot_retention { max_age = "2d" }
}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(dir, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	pol, ok := cfg.Resolve("lake.analytics.clicks")
	if !ok {
		t.Fatal("table not matched")
	}
	st := linear(41*24*time.Hour, 30*24*time.Hour, 3*24*time.Hour, time.Hour)
	st.Properties = map[string]string{
		"history.expire.max-snapshot-age-ms": "432000000",
		"write.parquet.compression-codec":    "zstd",
		"owner":                              "someone",
	}
	st.Manifests = ManifestStats{Count: 5, Bytes: 1 << 20}
	tp := PlanTable(pol, st, testNow)

	if got, want := actionTypes(tp), []ActionType{UpdateProperties, ReplaceSortOrder, RewriteManifests, ExpireSnapshots}; !reflect.DeepEqual(got, want) {
		t.Fatalf("actions = %v, want %v (refusals %v)", got, want, tp.Refusals)
	}
	props := tp.Actions[0]
	wantSet := map[string]string{
		"history.expire.max-snapshot-age-ms":   "172800000",
		"history.expire.min-snapshots-to-keep": "2",
		"write.target-file-size-bytes":         "536870912",
	}
	if !reflect.DeepEqual(props.Properties.Set, wantSet) || !reflect.DeepEqual(props.Properties.Before, map[string]string{"history.expire.max-snapshot-age-ms": "432000000"}) {
		t.Fatalf("properties = %+v", props.Properties)
	}
	for _, want := range []string{
		`snapshot_retention.max_age = "2d" (main.icewright.hcl:31)`,
		`snapshot_retention.min_snapshots = 2 (main.icewright.hcl:12)`,
		`target_file_size = "512MiB" (main.icewright.hcl:8)`,
	} {
		if !strings.Contains(props.Reason, want) {
			t.Errorf("properties reason %q lacks %q", props.Reason, want)
		}
	}
	sort := tp.Actions[1].SortOrder
	if !reflect.DeepEqual(sort.After, []string{"event_ts DESC NULLS LAST", "bucket(16, user_id) ASC NULLS FIRST"}) || len(sort.Before) != 0 {
		t.Fatalf("sort = %+v", sort)
	}
	if !strings.HasSuffix(tp.Actions[1].Reason, "(main.icewright.hcl:26)") {
		t.Errorf("sort reason = %q", tp.Actions[1].Reason)
	}
	if r := tp.Actions[2].Reason; r != "manifests.max_count = 3 (main.icewright.hcl:16)" {
		t.Errorf("manifests reason = %q", r)
	}
	// The manifest rewrite adds one snapshot on main; with min_snapshots = 2
	// it and snapshot 4 (1h old) are the two kept, so 3 (3d old) goes too.
	e := tp.Actions[3]
	if !reflect.DeepEqual(e.Expire.SnapshotIDs, []int64{1, 2, 3}) || e.Expire.SnapshotsAddedByPlan != 1 {
		t.Fatalf("expire = %+v", e.Expire)
	}
	if !strings.HasPrefix(e.Reason, `snapshot_retention.max_age = "2d" (main.icewright.hcl:31)`) {
		t.Errorf("expire reason = %q", e.Reason)
	}
}
