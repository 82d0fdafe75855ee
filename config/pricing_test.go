package config

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// A table's prices come from its location's storage, a price the block
// sets wins, and local storage has none unless the block sets them all.
func TestPricingFor(t *testing.T) {
	set := func(v float64) Setting[float64] { return Setting[float64]{Value: v, Set: true} }
	scans := Setting[float64]{Value: DefaultScansPerMonth}
	tests := []struct {
		name     string
		location string
		p        PricingPolicy
		ok       bool
		want     Prices
	}{
		{"s3", "s3://lake/wh/t", PricingPolicy{ScansPerMonth: scans}, true, StoragePrices[0].Prices},
		{"s3a is S3", "s3a://lake/wh/t", PricingPolicy{ScansPerMonth: scans}, true, StoragePrices[0].Prices},
		{"gs", "gs://lake/t", PricingPolicy{ScansPerMonth: scans}, true, StoragePrices[1].Prices},
		{"abfss", "abfss://c@acct.dfs.core.windows.net/t", PricingPolicy{ScansPerMonth: scans}, true, StoragePrices[2].Prices},
		{"local has none", "file:///wh/t", PricingPolicy{ScansPerMonth: scans}, false, Prices{}},
		{"a path has none", "/wh/t", PricingPolicy{ScansPerMonth: scans}, false, Prices{}},
		{"unknown scheme has none", "oss://b/t", PricingPolicy{ScansPerMonth: scans}, false, Prices{}},
		{"local with one price still has none", "file:///wh/t", PricingPolicy{CPUHour: set(0.05), ScansPerMonth: scans}, false, Prices{}},
		{"storage none on s3", "s3://lake/t", PricingPolicy{Storage: Setting[string]{Value: "none", Set: true}, ScansPerMonth: scans}, false, Prices{}},
		{"storage named wins over the scheme", "file:///wh/t", PricingPolicy{Storage: Setting[string]{Value: "s3", Set: true}, ScansPerMonth: scans}, true, StoragePrices[0].Prices},
		{"one price overridden", "s3://lake/t", PricingPolicy{GetPer1000: set(0.001), ScansPerMonth: Setting[float64]{Value: 4, Set: true}}, true,
			Prices{Storage: "s3", StorageGBMonth: 0.023, PutPer1000: 0.005, GetPer1000: 0.001, CPUHour: 0.0504, ScansPerMonth: 4, Read: "2026-12-07"}},
		{"all set on local", "file:///wh/t", PricingPolicy{StorageGBMonth: set(0.01), PutPer1000: set(0.002), GetPer1000: set(0.0001), CPUHour: set(0), ScansPerMonth: scans}, true,
			Prices{Storage: "custom", StorageGBMonth: 0.01, PutPer1000: 0.002, GetPer1000: 0.0001, CPUHour: 0, ScansPerMonth: 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.p.For(tt.location)
			if ok != tt.ok || got != tt.want {
				t.Errorf("For(%q) = %+v, %v; want %+v, %v", tt.location, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// Every default has its date and source, and each storage's schemes are
// its own.
func TestStoragePricesDocumented(t *testing.T) {
	seen := map[string]string{}
	for _, s := range StoragePrices {
		if s.Read == "" || s.Source == "" || s.Name == "" || s.Prices.Storage != s.Storage {
			t.Errorf("%s: name, date, source or storage missing: %+v", s.Storage, s)
		}
		if s.StorageGBMonth <= 0 || s.PutPer1000 <= 0 || s.GetPer1000 <= 0 || s.CPUHour <= 0 || s.ScansPerMonth != DefaultScansPerMonth {
			t.Errorf("%s: a price is missing: %+v", s.Storage, s.Prices)
		}
		for _, sc := range s.Schemes {
			if other, ok := seen[sc]; ok {
				t.Errorf("scheme %s is on %s and %s", sc, other, s.Storage)
			}
			seen[sc] = s.Storage
		}
	}
}

// The pricing block and max_cost came after plan format 2.0: a policy that
// does not use them keeps the digest it had before them (this one's was
// computed at 13d30e4), so a plan saved then still applies; using them
// changes it, and writing a default changes nothing.
func TestPolicyDigestWithoutPricingUnchanged(t *testing.T) {
	const before = "sha256:a04263209e657f6015d2a5efbf0c752a40da634539b2e11037af5684eccf2053"
	digest := func(extra string) string {
		t.Helper()
		cfg := mustLoad(t, map[string]string{"main.icewright.hcl": baseCatalog + `
table "lake.a.b" {
  compaction { max_bytes_per_run = "1GiB" }
  snapshot_retention { max_age = "7d" }
` + extra + `
}
`}, LoadOptions{})
		e, ok := cfg.Resolve("lake.a.b")
		if !ok {
			t.Fatal("not managed")
		}
		return e.PolicyDigest()
	}
	if got := digest(""); got != before {
		t.Errorf("digest without pricing = %s, want %s (the digest before format 2.1)", got, before)
	}
	if got := digest("pricing {}"); got != before {
		t.Errorf("an empty pricing block changed the digest: %s", got)
	}
	if got := digest("pricing { scans_per_month = 30 }"); got != before {
		t.Errorf("writing the default scans_per_month changed the digest: %s", got)
	}
	if got := digest("pricing { get_per_1000 = 0.001 }"); got == before {
		t.Error("a price the block sets did not change the digest")
	}
}

// docs/cost.md lists every default with its prices and date.
func TestCostDocListsDefaults(t *testing.T) {
	raw, err := os.ReadFile("../docs/cost.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range StoragePrices {
		var row string
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "| `"+s.Storage+"`: ") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("docs/cost.md has no row for %s", s.Storage)
			continue
		}
		for _, v := range []float64{s.StorageGBMonth, s.PutPer1000, s.GetPer1000, s.CPUHour} {
			if !strings.Contains(row, " "+strconv.FormatFloat(v, 'f', -1, 64)+" ") && !strings.Contains(row, " "+strconv.FormatFloat(v, 'f', 3, 64)+" ") {
				t.Errorf("docs/cost.md's %s row lacks %v: %s", s.Storage, v, row)
			}
		}
		if !strings.Contains(row, s.Read) || !strings.Contains(row, s.Name) {
			t.Errorf("docs/cost.md's %s row lacks its name or date %s: %s", s.Storage, s.Read, row)
		}
	}
}
