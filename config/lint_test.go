package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

func loadSrc(t *testing.T, src string) (*Config, hcl.Diagnostics) {
	t.Helper()
	return Load(writeDir(t, map[string]string{"main.icewright.hcl": baseCatalog + src}), LoadOptions{Version: "0.1.0"})
}

// "0s" would remove every tag and branch: an error at its value, and
// the unset attribute is explained as "refs live forever", never "0s".
func TestMaxRefAgeZeroIsAnError(t *testing.T) {
	for _, v := range []string{`"0s"`, `"0"`, `"0d"`} {
		_, diags := loadSrc(t, `
table "lake.a.t" {
  snapshot_retention {
    max_ref_age = `+v+`
  }
}`)
		if got := diagLines(diags); !reflect.DeepEqual(got, []string{"main.icewright.hcl:10:19: error: Invalid max_ref_age"}) {
			t.Errorf("max_ref_age = %s: %v", v, got)
		}
	}
	cfg, diags := loadSrc(t, `
table "lake.a.t" {
  snapshot_retention {
    max_age = "7d"
  }
}`)
	if diags.HasErrors() {
		t.Fatal(diagLines(diags))
	}
	e, _ := cfg.Resolve("lake.a.t")
	for _, l := range e.Explain() {
		if l.Name == "snapshot_retention.max_ref_age" {
			if l.Value != "" || !strings.Contains(l.Unset, "live forever") || !l.Default {
				t.Fatalf("explain line = %+v", l)
			}
			return
		}
	}
	t.Fatal("no explain line for max_ref_age")
}

func TestDecimalSizeWarning(t *testing.T) {
	_, diags := loadSrc(t, `
table "lake.a.t" {
  target_file_size = "128MB"
  manifests {
    target_size = "8MiB"
  }
}`)
	if got := diagLines(diags); !reflect.DeepEqual(got, []string{"main.icewright.hcl:9:22: warning: Decimal size unit"}) {
		t.Fatalf("diagnostics = %v", got)
	}
	d := diags[0]
	if LintCode(d) != LintDecimalSize {
		t.Errorf("code = %q", LintCode(d))
	}
	for _, want := range []string{"128,000,000 bytes", `"128MiB"`, "134,217,728 bytes", "write 128000000"} {
		if !strings.Contains(d.Detail, want) {
			t.Errorf("detail %q lacks %q", d.Detail, want)
		}
	}
}

func TestIgnoreWarnings(t *testing.T) {
	src := `
table "lake.a.t" {
  target_file_size = "128MB"
  snapshot_retention {
    max_age = "2d"
  }
}`
	_, diags := loadSrc(t, src)
	var codes []string
	for _, d := range diags {
		codes = append(codes, LintCode(d))
	}
	if !reflect.DeepEqual(codes, []string{LintDecimalSize, LintTrinoRetention}) {
		t.Fatalf("codes = %v (%v)", codes, diagLines(diags))
	}
	_, diags = loadSrc(t, `icewright { ignore_warnings = ["IW102"] }`+src)
	if got := diagLines(diags); !reflect.DeepEqual(got, []string{"main.icewright.hcl:9:22: warning: Decimal size unit"}) {
		t.Fatalf("with IW102 ignored: %v", got)
	}
	_, diags = loadSrc(t, `icewright { ignore_warnings = ["IW102", "IW1O3"] }`+src)
	if got := diagLines(diags); !reflect.DeepEqual(got, []string{"main.icewright.hcl:7:41: error: Unknown warning code", "main.icewright.hcl:9:22: warning: Decimal size unit"}) {
		t.Fatalf("unknown code: %v", got)
	} else if !strings.Contains(diags[0].Detail, `Did you mean "IW103"?`) {
		t.Errorf("detail = %q", diags[0].Detail)
	}
}

// Every warning the configuration can produce has a code: a warning
// without one could not be silenced.
func TestLintCodesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range Lints() {
		if seen[l.Code] || seen[l.Name] || !strings.HasPrefix(l.Code, "IW1") || l.Doc == "" {
			t.Errorf("lint %+v: duplicate or malformed", l)
		}
		seen[l.Code], seen[l.Name] = true, true
	}
}
