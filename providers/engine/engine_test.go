package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
)

// TestKindsAreConfigsEngines: config accepts an engine block label for
// each engine kinds holds, and for no other (the two halves of each
// engine's descriptor).
func TestKindsAreConfigsEngines(t *testing.T) {
	if got, want := Names(), slices.Sorted(slices.Values(config.EngineNames())); !slices.Equal(got, want) {
		t.Fatalf("providers/engine has %v, config accepts %v", got, want)
	}
}

// TestRemoteDiagnostics: a remote its engine cannot use is an error at the
// attribute's file:line:col (moved from config's TestEngineErrors with the
// URL's parsing), and a good one is not.
func TestRemoteDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		remote string
		errs   int
	}{
		{"http://h:15002/;token=s3cr3t-tok", 1},
		{"sc://h:15002/;token=s3cr3t-tok", 0},
	} {
		dir := t.TempDir()
		src := `catalog "lake" {
  type = "sql"
  uri  = "sqlite:/abs/c.db"
}
engine "spark" { remote = "` + tc.remote + `" }
tables "lake.a.*" {
  compaction { engine = "spark" }
}
`
		if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, diags := config.Load(dir, config.LoadOptions{})
		if diags.HasErrors() {
			t.Fatalf("load: %v", diags)
		}
		got := Diagnostics(cfg)
		if len(got) != tc.errs {
			t.Fatalf("%s: %d diagnostics, want %d: %v", tc.remote, len(got), tc.errs, got)
		}
		if tc.errs == 0 {
			continue
		}
		d := got[0]
		if d.Summary != "Invalid engine remote" || d.Subject == nil || d.Subject.Start.Line != 5 || d.Subject.Start.Column != 27 {
			t.Errorf("diagnostic %q at %v, want Invalid engine remote at 5:27", d.Summary, d.Subject)
		}
		if strings.Contains(d.Detail, "s3cr3t-tok") || !strings.Contains(d.Detail, config.Masked) {
			t.Errorf("the token is not masked: %s", d.Detail)
		}
		if cfg.Secrets.Mask(tc.remote) == tc.remote {
			t.Errorf("config did not take the token for a secret")
		}
	}
}
