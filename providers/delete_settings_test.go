package providers

import (
	"strings"
	"testing"
	"time"

	"github.com/iceops/iceops/config"
	"github.com/iceops/iceops/providers/internal/objdel"
)

// TestDeleteSettings: the catalog's iceops.delete-* properties become the
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
		{props: map[string]string{DeleteBatchSizeProperty: "0"}, err: "iceops.delete-batch-size"},
		{props: map[string]string{DeleteConcurrencyProperty: "many"}, err: "iceops.delete-concurrency"},
		{props: map[string]string{DeleteCooldownProperty: "-1s"}, err: "iceops.delete-cooldown"},
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

// TestConfigDiagnosticsDeleteSettings: a malformed iceops.delete-*
// property is a configuration error at the catalog block.
func TestConfigDiagnosticsDeleteSettings(t *testing.T) {
	cfg := &config.Config{Catalogs: []*config.Catalog{
		{Name: "ok", Properties: map[string]string{DeleteBatchSizeProperty: "500"}},
		{Name: "bad", Properties: map[string]string{DeleteCooldownProperty: "soon"}},
	}}
	diags := ConfigDiagnostics(cfg, time.Now())
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, `catalog bad: property iceops.delete-cooldown = "soon"`) {
		t.Fatalf("diagnostics %v", diags)
	}
}
