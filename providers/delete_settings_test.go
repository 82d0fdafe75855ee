package providers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/providers/internal/objdel"
	"github.com/icewright/icewright/providers/testkit"
)

// TestDeleteSettings: the catalog's icewright.delete-* properties become the
// run's pacing; unset ones keep the defaults; malformed ones are errors.
func TestDeleteSettings(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  objdel.Settings
		err   string
	}{
		{props: nil, want: objdel.Settings{}},
		{props: map[string]string{DeleteBatchSizeProperty: "250", DeleteConcurrencyProperty: "2", DeleteCooldownProperty: "150ms"},
			want: objdel.Settings{BatchSize: 250, Concurrency: 2, Cooldown: 150 * time.Millisecond}},
		{props: map[string]string{DeleteBatchSizeProperty: "0"}, err: "icewright.delete-batch-size"},
		{props: map[string]string{DeleteConcurrencyProperty: "many"}, err: "icewright.delete-concurrency"},
		{props: map[string]string{DeleteCooldownProperty: "-1s"}, err: "icewright.delete-cooldown"},
	} {
		s := &Session{cfg: &config.Config{Catalogs: []*config.Catalog{{Name: "lake", Properties: tc.props}}}}
		got, err := s.deleteSettings("lake")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err %v, want one naming %s", tc.props, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v %v, want %+v", tc.props, got, err, tc.want)
		}
	}
}

// TestConfigDiagnosticsDeleteSettings: a malformed icewright.delete-*
// property is a configuration error at the catalog block.
func TestConfigDiagnosticsDeleteSettings(t *testing.T) {
	cfg := &config.Config{Catalogs: []*config.Catalog{
		{Name: "ok", Properties: map[string]string{DeleteBatchSizeProperty: "500"}},
		{Name: "bad", Properties: map[string]string{DeleteCooldownProperty: "soon"}},
	}}
	diags := ConfigDiagnostics(cfg, time.Now())
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, `catalog bad: property icewright.delete-cooldown = "soon"`) {
		t.Fatalf("diagnostics %v", diags)
	}
}

// TestManifestReadPace: a catalog's icewright.manifest-read-pause* properties
// pace the manifest reads of its tables' plans (a pause after every N
// entries read, counted with the session's sleeper, not timed); without
// them nothing pauses; malformed values are configuration errors.
func TestManifestReadPace(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true})
	testkit.Append(t, tbl, 6, 10, 2)
	plan := func(props map[string]string) []time.Duration {
		t.Helper()
		cfg := sessionConfig(l)
		cfg.Catalogs[0].Properties = props
		s := Open(cfg, Options{Now: func() time.Time { return fixedNow }})
		defer s.Close()
		var pauses []time.Duration
		s.sleep = func(_ context.Context, d time.Duration) { pauses = append(pauses, d) }
		o, err := s.ObservePlan(ctx, testkit.OrphanPolicy("lake.ns.t"))
		if err != nil {
			t.Fatal(err)
		}
		o.Close()
		return pauses
	}
	if p := plan(map[string]string{ManifestReadPauseProperty: "250ms", ManifestReadPauseEveryProperty: "2"}); len(p) < 3 || p[0] != 250*time.Millisecond {
		t.Fatalf("pauses %v, want at least 3 of 250ms (6 files read, a pause after every 2)", p)
	}
	if p := plan(map[string]string{ManifestReadPauseEveryProperty: "2"}); len(p) != 0 {
		t.Fatalf("pauses %v without icewright.manifest-read-pause", p)
	}
	for props, want := range map[string]map[string]string{
		ManifestReadPauseProperty:      {ManifestReadPauseProperty: "soon"},
		ManifestReadPauseEveryProperty: {ManifestReadPauseProperty: "1s", ManifestReadPauseEveryProperty: "0"},
	} {
		cfg := &config.Config{Catalogs: []*config.Catalog{{Name: "bad", Properties: want}}}
		if diags := ConfigDiagnostics(cfg, time.Now()); len(diags) != 1 || !strings.Contains(diags[0].Detail, props) {
			t.Errorf("%v: diagnostics %v", want, diags)
		}
	}
}
