package spark

import (
	"strings"
	"testing"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

func delegation(parts ...diff.PartitionValue) diff.Delegation {
	return diff.Delegation{
		Catalog: "lake", Namespace: []string{"sales"}, Table: "orders", Strategy: "binpack",
		Partition: parts,
		Selection: diff.CompactionSelection{Target: 512 << 20, Min: 384 << 20, Max: 921 << 20, MinInputFiles: 5, DeleteFileThreshold: 5},
	}
}

func TestPlanStatement(t *testing.T) {
	e := New(&config.Engine{Name: Name, Remote: "sc://h:15002", Catalog: "spark_lake"})
	for _, tc := range []struct {
		name      string
		d         diff.Delegation
		statement string
		filter    string
	}{
		{"identity string with a quote and a backslash, a reserved column",
			delegation(diff.PartitionValue{Field: "order", Column: "order", Transform: "identity", Type: "string", Value: `it's a \ path`}),
			`CALL spark_lake.system.rewrite_data_files(table => 'sales.orders', strategy => 'binpack', where => '` + "`order`" + ` = \'it\\\'s a \\\\ path\'', options => map('min-input-files', '5', 'target-file-size-bytes', '536870912', 'min-file-size-bytes', '402653184', 'max-file-size-bytes', '965738496', 'delete-file-threshold', '5', 'partial-progress.enabled', 'false'))`,
			"`order` = 'it\\'s a \\\\ path'"},
		{"day of a timestamptz, with an explicit offset",
			delegation(diff.PartitionValue{Field: "ts_day", Column: "ts", Transform: "day", Type: "timestamptz", Value: "2026-11-01", Ordinal: 20758}),
			"", "ts >= TIMESTAMP '2026-11-01 00:00:00.000000+00:00' AND ts < TIMESTAMP '2026-11-02 00:00:00.000000+00:00'"},
		{"month of a timestamp without zone",
			delegation(diff.PartitionValue{Field: "m", Column: "ts", Transform: "month", Type: "timestamp", Value: "2026-12", Ordinal: 683}),
			"", "ts >= TIMESTAMP_NTZ '2026-12-01 00:00:00.000000' AND ts < TIMESTAMP_NTZ '2027-01-01 00:00:00.000000'"},
		{"year of a date, hour of a timestamptz",
			delegation(diff.PartitionValue{Field: "y", Column: "d", Transform: "year", Type: "date", Value: "2026", Ordinal: 56},
				diff.PartitionValue{Field: "h", Column: "ts", Transform: "hour", Type: "timestamptz", Value: "2026-11-01-10", Ordinal: 20758*24 + 10}),
			"", "d >= DATE '2026-01-01' AND d < DATE '2027-01-01' AND ts >= TIMESTAMP '2026-11-01 10:00:00.000000+00:00' AND ts < TIMESTAMP '2026-11-01 11:00:00.000000+00:00'"},
		{"identity timestamptz, date, long, decimal, null, void",
			delegation(diff.PartitionValue{Field: "a", Column: "a", Transform: "identity", Type: "timestamptz", Value: "x", Ordinal: 1_762_000_000_123_456},
				diff.PartitionValue{Field: "b", Column: "b", Transform: "identity", Type: "date", Value: "2026-11-01", Ordinal: 20758},
				diff.PartitionValue{Field: "c", Column: "c", Transform: "identity", Type: "long", Value: "-42"},
				diff.PartitionValue{Field: "p", Column: "price", Transform: "identity", Type: "decimal(9, 2)", Value: "12.30"},
				diff.PartitionValue{Field: "n", Column: "region", Transform: "identity", Type: "string", Null: true},
				diff.PartitionValue{Field: "v", Column: "x", Transform: "void", Type: "int", Null: true}),
			"", "a = TIMESTAMP '2025-11-01 12:26:40.123456+00:00' AND b = DATE '2026-11-01' AND c = -42 AND price = 12.30BD AND region IS NULL"},
		{"a column that needs backticks, with one inside",
			delegation(diff.PartitionValue{Field: "f", Column: "my`col x", Transform: "identity", Type: "int", Value: "7"}),
			"", "`my``col x` = 7"},
		{"unpartitioned: no where", delegation(),
			"CALL spark_lake.system.rewrite_data_files(table => 'sales.orders', strategy => 'binpack', options => map(", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, why := e.Plan(tc.d)
			if why != "" {
				t.Fatalf("refused: %s", why)
			}
			if p.Filter != tc.filter {
				t.Errorf("filter\n %s\nwant\n %s", p.Filter, tc.filter)
			}
			if tc.statement != "" && !strings.HasPrefix(p.Statement, tc.statement) {
				t.Errorf("statement\n %s\nwant\n %s", p.Statement, tc.statement)
			}
			if tc.filter != "" && !strings.Contains(p.Statement, "where => "+literal(tc.filter)) {
				t.Errorf("the statement's where is not the filter: %s", p.Statement)
			}
			if p.Target != "spark_lake.sales.orders" {
				t.Errorf("target = %s", p.Target)
			}
		})
	}
}

func TestPlanSortAndZOrder(t *testing.T) {
	e := New(&config.Engine{Name: Name, Remote: "sc://h:15002"})
	d := delegation()
	d.Strategy = "sort"
	d.SortOrder = []diff.SortField{{Transform: "identity", Column: "ts", Descending: true}, {Column: "user id", NullsFirst: true}}
	p, why := e.Plan(d)
	if why != "" {
		t.Fatal(why)
	}
	if want := "CALL lake.system.rewrite_data_files(table => 'sales.orders', strategy => 'sort', sort_order => 'ts DESC NULLS LAST, `user id` ASC NULLS FIRST', "; !strings.HasPrefix(p.Statement, want) {
		t.Errorf("statement\n %s\nwant\n %s", p.Statement, want)
	}
	// Every type Spark's z-order orders, and a decimal sorted (Spark sorts
	// decimals; only its z-order refuses them).
	d.Schema = []diff.Column{{Name: "a", Type: "fixed[16]"}, {Name: "b", Type: "timestamptz"}, {Name: "ts", Type: "decimal(9, 2)"}, {Name: "user id", Type: "uuid"}}
	if _, why := e.Plan(d); why != "" {
		t.Fatalf("sort refused: %s", why)
	}
	d.Strategy, d.ZOrderColumns = "zorder", []string{"a", "b"}
	p, why = e.Plan(d)
	if why != "" {
		t.Fatalf("zorder refused: %s", why)
	}
	if !strings.Contains(p.Statement, "strategy => 'sort', sort_order => 'zorder(a,b)'") {
		t.Errorf("zorder statement: %s", p.Statement)
	}
}

func TestPlanRefusals(t *testing.T) {
	e := New(&config.Engine{Name: Name, Remote: "sc://h:15002"})
	other := delegation(diff.PartitionValue{Field: "r", Column: "r", Transform: "identity", Type: "string", Value: "eu"})
	other.OtherSpecs = true
	sorted := delegation()
	sorted.Strategy, sorted.SortOrder = "sort", []diff.SortField{{Transform: "bucket[16]", Column: "id"}}
	schema := []diff.Column{{ID: 1, Name: "id", Type: "long"}, {ID: 2, Name: "price", Type: "decimal(9, 2)"}, {ID: 3, Name: "at", Type: "time"}}
	zDecimal := delegation()
	zDecimal.Strategy, zDecimal.ZOrderColumns, zDecimal.Schema = "zorder", []string{"id", "price"}, schema
	sortTime := delegation()
	sortTime.Strategy, sortTime.SortOrder, sortTime.Schema = "sort", []diff.SortField{{Column: "id"}, {Column: "at"}}, schema
	for _, tc := range []struct {
		name string
		d    diff.Delegation
		want string
	}{
		{"bucket", delegation(diff.PartitionValue{Field: "b", Column: "id", Transform: "bucket[16]", Type: "long", Value: "3"}), "bucket[16](id)"},
		{"truncate", delegation(diff.PartitionValue{Field: "t", Column: "s", Transform: "truncate[4]", Type: "string", Value: "abcd"}), "truncate[4](s)"},
		{"timestamp_ns", delegation(diff.PartitionValue{Field: "d", Column: "ts", Transform: "day", Type: "timestamp_ns", Value: "2026-11-01", Ordinal: 1}), "timestamp_ns"},
		{"nested column", delegation(diff.PartitionValue{Field: "d", Column: "a.b", Transform: "identity", Type: "int", Value: "1"}), "nested"},
		{"dropped source column", delegation(diff.PartitionValue{Field: "region", Transform: "identity", Type: "string", Value: "eu"}), "region's source column is no longer in the table's schema"},
		{"another spec", other, "more than one partition spec"},
		{"sort by a transform", sorted, "bucket(16, id)"},
		{"z-order on a decimal", zDecimal, "column price is a decimal(9, 2), which Spark's z-order cannot order by"},
		{"sort on a time", sortTime, "column at is a time, which Spark's sort cannot order by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, why := e.Plan(tc.d)
			if why == "" || !strings.Contains(why, tc.want) {
				t.Errorf("refusal %q (statement %q), want one naming %q", why, p.Statement, tc.want)
			}
		})
	}
}
