package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const engineCatalog = `
catalog "lake" {
  type = "sql"
  uri  = "sqlite:/abs/c.db"
}
`

func TestEngineBlock(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.icewright.hcl": engineCatalog + `
engine "spark" {
  remote  = "sc://spark.example:15002/;token=s3cr3t-tok;use_ssl=true"
  catalog = "lake_spark"
}
tables "lake.a.*" {
  compaction {
    engine       = "spark"
    engine_above = "64GiB"
  }
}
`}, LoadOptions{})
	e := cfg.Engine("spark")
	if e == nil || e.Catalog != "lake_spark" || !strings.HasPrefix(e.Remote, "sc://spark.example:15002") {
		t.Fatalf("engine = %+v", e)
	}
	if got := cfg.Secrets.Mask(e.Remote); strings.Contains(got, "s3cr3t-tok") {
		t.Errorf("the token is not masked: %s", got)
	}
	pol, ok := cfg.Resolve("lake.a.t")
	if !ok || pol.Compaction.Engine.Value != "spark" || pol.Compaction.EngineAbove.Value != 64<<30 {
		t.Fatalf("effective compaction = %+v", pol.Compaction)
	}
}

func TestEngineDefaultIsLocal(t *testing.T) {
	cfg := mustLoad(t, map[string]string{"main.icewright.hcl": engineCatalog + `
tables "lake.a.*" {
  compaction {}
}
`}, LoadOptions{})
	pol, _ := cfg.Resolve("lake.a.t")
	if pol.Compaction.Engine.Value != LocalEngine {
		t.Errorf("engine = %q, want %q", pol.Compaction.Engine.Value, LocalEngine)
	}
}

func TestEngineErrors(t *testing.T) {
	for _, tc := range []struct {
		name, hcl string
		want      string // summary
		line      int
		severity  hcl.DiagnosticSeverity
		code      string
	}{
		{"unknown engine name in a policy", `
engine "spark" { remote = "sc://h:15002" }
tables "lake.a.*" {
  compaction { engine = "sprak" }
}`, "Unknown engine", 9, hcl.DiagError, ""},
		{"engine not declared", `
tables "lake.a.*" {
  compaction { engine = "spark" }
}`, "Unknown engine", 8, hcl.DiagError, ""},
		{"unknown engine block", `
engine "trino" { remote = "sc://h:15002" }`, "Unknown engine", 7, hcl.DiagError, ""},
		{"engine unused", `
engine "spark" { remote = "sc://h:15002" }
tables "lake.a.*" {
  compaction {}
}`, "Engine not used", 7, hcl.DiagWarning, LintEngineUnused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDir(t, map[string]string{"main.icewright.hcl": engineCatalog + tc.hcl})
			_, diags := Load(dir, LoadOptions{})
			for _, d := range diags {
				if d.Summary == tc.want {
					if d.Severity != tc.severity || d.Subject == nil || d.Subject.Start.Line != tc.line || LintCode(d) != tc.code {
						t.Errorf("%s: severity %v at %v code %q, want %v at line %d code %q", d.Summary, d.Severity, d.Subject, LintCode(d), tc.severity, tc.line, tc.code)
					}
					return
				}
			}
			t.Fatalf("no %q diagnostic in %v", tc.want, diags)
		})
	}
}
