package demo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/icewright/icewright/providers"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

// Build into a temp dir, then load its configuration with config.Load,
// observe every table and plan it with diff: events and clicks carry the
// debt the demo promises, every action kind appears, users is in policy.
func TestBuildDemo(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "icewright-demo")
	now := time.Now()
	start := time.Now()
	info, err := Build(ctx, dir, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo built in %v", time.Since(start))
	if _, err := Build(ctx, dir, now); err == nil {
		t.Fatal("Build overwrote a non-empty directory")
	}

	cfg, diags := config.Load(dir, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatalf("demo config: %v", diags)
	}
	sess := providers.Open(cfg, providers.Options{Now: func() time.Time { return now }})
	defer sess.Close()
	addrs, err := sess.ListTables(ctx, CatalogName)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"demo.analytics.clicks", "demo.analytics.events", "demo.analytics.users"}
	if !slices.Equal(addrs, want) {
		t.Fatalf("tables = %v, want %v", addrs, want)
	}
	kinds := map[diff.ActionType]bool{}
	for _, a := range addrs {
		pol, ok := cfg.Resolve(a)
		if !ok {
			t.Fatalf("%s not managed", a)
		}
		st, err := sess.Observe(ctx, pol)
		if err != nil {
			t.Fatalf("observe %s: %v", a, err)
		}
		tp := diff.PlanTable(pol, st, now)
		for _, act := range tp.Actions {
			kinds[act.Type] = true
		}
		switch a {
		case "demo.analytics.events":
			if st.Files.DataFiles != 240 || len(st.Partitions) != 4 || len(st.Snapshots) != 60 {
				t.Errorf("events: %d files, %d partitions, %d snapshots", st.Files.DataFiles, len(st.Partitions), len(st.Snapshots))
			}
			if st.Orphans == nil || len(st.Orphans.Candidates) != 3 || len(st.Orphans.NonIceberg) != 1 {
				t.Errorf("events orphans: %+v", st.Orphans)
			}
			if len(tp.Refusals) > 0 {
				t.Errorf("events refusals: %+v", tp.Refusals)
			}
		case "demo.analytics.users":
			if len(tp.Actions) != 0 || len(tp.Refusals) != 0 {
				t.Errorf("users is not in policy: %+v %+v", tp.Actions, tp.Refusals)
			}
		}
		t.Logf("%s: %d actions %v", a, len(tp.Actions), actionTypes(tp))
	}
	for _, k := range []diff.ActionType{diff.UpdateProperties, diff.ReplaceSortOrder, diff.Compact, diff.RewriteManifests, diff.ExpireSnapshots, diff.RemoveOrphanFiles} {
		if !kinds[k] {
			t.Errorf("no %s action in the demo plan", k)
		}
	}
	if _, err := os.Stat(info.ConfigFile); err != nil {
		t.Error(err)
	}
}

func actionTypes(tp diff.TablePlan) []diff.ActionType {
	var out []diff.ActionType
	for _, a := range tp.Actions {
		out = append(out, a.Type)
	}
	return out
}
