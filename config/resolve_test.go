package config

import (
	"testing"
	"time"
)

const resolveSrc = baseCatalog + `
catalog "ops" {
  type = "rest"
  uri  = "https://rest.example.com"
}

policy "root" {
  target_file_size = "256MiB"
  compaction {
    min_input_files = 10
  }
  snapshot_retention {
    max_age       = "14d"
    min_snapshots = 5
  }
  properties = {
    "a" = "root-a"
    "b" = "root-b"
  }
}

policy "mid" {
  extends = policy.root
  compaction {
    strategy = "sort"
  }
  sort_order = ["ts"]
  properties = {
    "b" = "mid-b"
    "c" = "mid-c"
  }
}

policy "leaf" {
  extends = policy.mid
  snapshot_retention {
    max_age = "21d"
  }
  orphan_files {}
}

tables "lake.**" {
  policy  = policy.leaf
  exclude = ["lake.raw.*", "lake.**.tmp_*"]
}

tables "lake.raw.*" {
  policy = policy.root
  manifests {
    max_count = 50
  }
}

table "lake.raw.events" {
  policy = policy.mid
  properties = { "a" = "table-a" }
  compaction { min_input_files = 2 }
}

table "ops.x.inline" {
  target_file_size = "1GiB"
}
`

func TestResolve(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.icewright.hcl": resolveSrc}, LoadOptions{})
	type want struct {
		matchedBy    string
		policy       string
		target       int64
		minInput     int
		minInputFrom string
		strategy     string
		maxAge       time.Duration
		maxAgeFrom   string
		minSnapshots int
		props        map[string]string
		compaction   bool
		retention    bool
		orphans      bool
		manifests    int
	}
	tests := []struct {
		addr string
		want *want
	}{
		{"lake.sales.orders", &want{
			matchedBy: `tables "lake.**"`, policy: "leaf", target: 256 << 20,
			minInput: 10, minInputFrom: `policy "root"`, strategy: "sort",
			maxAge: 21 * 24 * time.Hour, maxAgeFrom: `policy "leaf"`, minSnapshots: 5,
			props:      map[string]string{"a": "root-a", "b": "mid-b", "c": "mid-c"},
			compaction: true, retention: true, orphans: true, manifests: 100,
		}},
		{"lake.raw.clicks", &want{
			matchedBy: `tables "lake.raw.*"`, policy: "root", target: 256 << 20,
			minInput: 10, minInputFrom: `policy "root"`, strategy: "binpack",
			maxAge: 14 * 24 * time.Hour, maxAgeFrom: `policy "root"`, minSnapshots: 5,
			props:      map[string]string{"a": "root-a", "b": "root-b"},
			compaction: true, retention: true, manifests: 50,
		}},
		{"lake.raw.events", &want{
			matchedBy: `table "lake.raw.events"`, policy: "mid", target: 256 << 20,
			minInput: 2, minInputFrom: `table "lake.raw.events"`, strategy: "sort",
			maxAge: 14 * 24 * time.Hour, maxAgeFrom: `policy "root"`, minSnapshots: 5,
			props:      map[string]string{"a": "table-a", "b": "mid-b", "c": "mid-c"},
			compaction: true, retention: true, manifests: 100,
		}},
		{"ops.x.inline", &want{
			matchedBy: `table "ops.x.inline"`, target: 1 << 30,
			minInput: DefaultMinInputFiles, strategy: "binpack",
			maxAge: DefaultMaxSnapshotAge, minSnapshots: DefaultMinSnapshots,
			props: map[string]string{}, manifests: 100,
		}},
		{"lake.sales.eu.tmp_load", nil}, // excluded and matched by nothing else
		{"lake.raw.a.tmp_b", nil},       // excluded from lake.**; lake.raw.* is one level
		{"ops.x.other", nil},
		{"nowhere.a.b", nil},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			e, ok := cfg.Resolve(tt.addr)
			if tt.want == nil {
				if ok || e != nil {
					t.Fatalf("Resolve = %+v, want unmanaged", e)
				}
				return
			}
			if !ok {
				t.Fatal("not managed")
			}
			w := tt.want
			if e.MatchedBy != w.matchedBy || e.PolicyName != w.policy {
				t.Errorf("matched by %q policy %q, want %q %q", e.MatchedBy, e.PolicyName, w.matchedBy, w.policy)
			}
			if e.TargetFileSize.Value != w.target {
				t.Errorf("target = %d, want %d", e.TargetFileSize.Value, w.target)
			}
			// min/max file sizes default from the effective target.
			if e.Compaction.MinFileSize.Value != w.target*3/4 || e.Compaction.MaxFileSize.Value != w.target*18/10 || e.Compaction.MinFileSize.Set {
				t.Errorf("min/max file size = %d/%d for target %d", e.Compaction.MinFileSize.Value, e.Compaction.MaxFileSize.Value, w.target)
			}
			if e.Compaction.MinInputFiles.Value != w.minInput || e.Compaction.MinInputFiles.Block != w.minInputFrom {
				t.Errorf("min_input_files = %+v, want %d from %q", e.Compaction.MinInputFiles, w.minInput, w.minInputFrom)
			}
			if e.Compaction.Strategy.Value != w.strategy {
				t.Errorf("strategy = %q, want %q", e.Compaction.Strategy.Value, w.strategy)
			}
			if e.SnapshotRetention.MaxAge.Value != w.maxAge || e.SnapshotRetention.MaxAge.Block != w.maxAgeFrom {
				t.Errorf("max_age = %+v, want %v from %q", e.SnapshotRetention.MaxAge, w.maxAge, w.maxAgeFrom)
			}
			if e.SnapshotRetention.MinSnapshots.Value != w.minSnapshots {
				t.Errorf("min_snapshots = %d, want %d", e.SnapshotRetention.MinSnapshots.Value, w.minSnapshots)
			}
			if len(e.Properties) != len(w.props) {
				t.Errorf("properties = %v, want %v", e.Properties, w.props)
			}
			for k, v := range w.props {
				if e.Properties[k].Value != v {
					t.Errorf("properties[%s] = %+v, want %s", k, e.Properties[k], v)
				}
			}
			if e.Compaction.Declared != w.compaction || e.SnapshotRetention.Declared != w.retention || e.OrphanFiles.Declared != w.orphans {
				t.Errorf("declared compaction/retention/orphans = %v/%v/%v", e.Compaction.Declared, e.SnapshotRetention.Declared, e.OrphanFiles.Declared)
			}
			if e.Manifests.MaxCount.Value != w.manifests {
				t.Errorf("manifests max_count = %d, want %d", e.Manifests.MaxCount.Value, w.manifests)
			}
			if e.OrphanFiles.MaxOrphanRatio.Value != DefaultMaxOrphanRatio || e.OrphanFiles.OlderThan.Value != 72*time.Hour || e.Manifests.TargetSize.Value != 8<<20 {
				t.Errorf("orphan/manifest defaults = %+v %+v", e.OrphanFiles, e.Manifests)
			}
		})
	}
}

func TestDerivedPropertiesOnlyWhenSet(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.icewright.hcl": resolveSrc}, LoadOptions{})
	e, _ := cfg.Resolve("ops.x.inline")
	if len(e.DerivedProperties) != 1 || e.DerivedProperties[PropTargetFileSize].Value != "1073741824" {
		t.Errorf("derived = %v, want only the target size", e.DerivedProperties)
	}
	e, _ = cfg.Resolve("lake.sales.orders")
	want := map[string]string{
		PropTargetFileSize: "268435456",
		PropMaxSnapshotAge: "1814400000",
		PropMinSnapshots:   "5",
		"a":                "root-a", "b": "mid-b", "c": "mid-c",
	}
	if len(e.DerivedProperties) != len(want) {
		t.Errorf("derived = %v", e.DerivedProperties)
	}
	for k, v := range want {
		if got := e.DerivedProperties[k]; got.Value != v || got.Origin.Start.Line == 0 {
			t.Errorf("derived[%s] = %+v, want %s with an origin", k, got, v)
		}
	}
	if _, ok := e.DerivedProperties[PropMaxRefAge]; ok {
		t.Error("max-ref-age recorded though no block set it")
	}
}

// TestResolveDoesNotShareState guards against merging into a declared
// block's maps: resolving one table must not change another's result.
func TestResolveDoesNotShareState(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.icewright.hcl": resolveSrc}, LoadOptions{})
	first, _ := cfg.Resolve("lake.raw.events")
	first.Properties["z"] = Setting[string]{Value: "mutated"}
	again, _ := cfg.Resolve("lake.raw.events")
	if _, ok := again.Properties["z"]; ok {
		t.Fatal("a caller's change to an Effective leaked into the Config")
	}
	if len(cfg.Tables[0].Body().Properties) != 1 {
		t.Fatalf("the table block's own properties changed: %v", cfg.Tables[0].Body().Properties)
	}
}

func TestExplainMasksSecretProperties(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.icewright.hcl": baseCatalog + `
table "lake.a.b" {
  properties = {
    "custom.api-token" = "hunter2"
    "owner"            = "team-a"
  }
}`}, LoadOptions{})
	e, _ := cfg.Resolve("lake.a.b")
	got := map[string]string{}
	for _, l := range e.Explain() {
		got[l.Name] = l.Value
	}
	if got[`properties["custom.api-token"]`] != "(sensitive)" || got[`properties["owner"]`] != `"team-a"` {
		t.Errorf("explain = %v", got)
	}
}
