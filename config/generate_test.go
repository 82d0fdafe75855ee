package config

import (
	"maps"
	"strconv"
	"strings"
	"testing"
)

// TestGenerateKeepsTables: the generated file loads without diagnostics,
// is in canonical format, and resolves every table to exactly the
// properties and sort order it has; a namespace that agrees gets one
// selector, an outlier its table block, and secrets are not written.
func TestGenerateKeepsTables(t *testing.T) {
	zstd := map[string]string{"write.parquet.compression-codec": "zstd", "write.target-file-size-bytes": "134217728"}
	tables := []ImportedTable{
		{Address: "lake.sales.orders", Properties: maps.Clone(zstd)},
		{Address: "lake.sales.items", Properties: maps.Clone(zstd)},
		{Address: "lake.sales.events", Properties: map[string]string{
			"history.expire.max-snapshot-age-ms": "604800000", "history.expire.min-snapshots-to-keep": "3",
			"owner": "ana", "note": "costs ${5}", "fs.secret-token": "hunter2",
		}, SortOrder: []SortField{{Transform: "identity", Column: "ts", Descending: true}, {Transform: "bucket[16]", Column: "id", NullsFirst: true}}},
		{Address: "lake.raw.logs", Properties: map[string]string{"owner": "ops"}},
		{Address: "lake.raw.dumps", Properties: map[string]string{"owner": "ops"}},
		{Address: "lake.other.one", Properties: maps.Clone(zstd)},
	}
	out := Generate(tables, GenerateOptions{
		Selectable: func(ns string) bool { return ns != "lake.raw" },
		Taken:      map[string]bool{"sales": true},
	})
	src := string(out)
	t.Log(src)
	if got, _ := Format(out, "x.icewright.hcl"); string(got) != src {
		t.Errorf("not in canonical format:\n%s", got)
	}
	if strings.Contains(src, "hunter2") {
		t.Error("a secret value was written")
	}
	for _, want := range []string{`tables "lake.sales.*"`, `table "lake.sales.events"`, `table "lake.raw.logs"`, `table "lake.raw.dumps"`, `policy "sales_2"`, `#   max_age = "7d"`} {
		if !strings.Contains(src, want) {
			t.Errorf("missing %s", want)
		}
	}
	if n := strings.Count(src, "\npolicy "); n != 3 {
		t.Errorf("%d policies, want 3 (one per distinct settings)", n)
	}
	cfg, diags := Load(writeDir(t, map[string]string{"main.icewright.hcl": baseCatalog, "imported.icewright.hcl": src}), LoadOptions{Version: "0.1.0"})
	if len(diags) > 0 {
		t.Fatalf("Load: %v", diagLines(diags))
	}
	for _, tb := range tables {
		eff, ok := cfg.Resolve(tb.Address)
		if !ok {
			t.Errorf("%s is not managed", tb.Address)
			continue
		}
		got := map[string]string{}
		for k, v := range eff.DerivedProperties {
			got[k] = v.Value
		}
		want := map[string]string{}
		for k, v := range tb.Properties {
			if _, owned := ownedProperty(k); (owned && k != PropTargetFileSize) || IsSecretKey(k) {
				continue
			}
			want[k] = v
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: properties %v, want %v", tb.Address, got, want)
		}
		var gotSort, wantSort []string
		for _, f := range eff.SortOrder.Value {
			gotSort = append(gotSort, f.String())
		}
		for _, f := range tb.SortOrder {
			wantSort = append(wantSort, f.String())
		}
		if strconv.Quote(strings.Join(gotSort, ",")) != strconv.Quote(strings.Join(wantSort, ",")) || eff.SortOrder.Set != (len(wantSort) > 0) {
			t.Errorf("%s: sort order %v (set %v), want %v", tb.Address, gotSort, eff.SortOrder.Set, wantSort)
		}
		if eff.Compaction.Declared || eff.SnapshotRetention.Declared || eff.OrphanFiles.Declared || eff.Manifests.Declared {
			t.Errorf("%s: a maintenance block is declared", tb.Address)
		}
	}
}
