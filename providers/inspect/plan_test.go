package inspect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/testkit"
)

// inspect's recommendations for a managed table come from the plan: with 4
// small files per partition and min_input_files = 5 the plan compacts
// nothing, and with min_snapshots = 100 it expires nothing, so inspect must
// not say the next apply does either (issue 14 item 5: it said "the
// compaction policy rewrites them on the next apply" and "the retention
// policy expires them on the next apply").
func TestInspectAgreesWithThePlan(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 12, 10, 3)
	l.Backdate(t, tbl, 9*24*time.Hour)
	in := inspectUnder(ctx, t, l, `
  compaction {
    min_input_files = 5
  }
  snapshot_retention {
    max_age       = "2d"
    min_snapshots = 100
  }`)
	if !in.Managed || in.Files.SmallFiles != 12 {
		t.Fatalf("managed %v small files %d: the case is not set up", in.Managed, in.Files.SmallFiles)
	}
	all := strings.Join(in.Recommendations, "\n")
	for _, promise := range []string{"next apply rewrites", "next apply expires", "rewrites them on the next apply", "expires them on the next apply"} {
		if strings.Contains(all, promise) {
			t.Errorf("inspect promises %q, which the plan does not do:\n%s", promise, all)
		}
	}
	if !strings.Contains(all, "rewrites none of them") {
		t.Errorf("no word on the small files the compaction policy leaves:\n%s", all)
	}
}

// A sort order the plan refuses (here a column named in another case) is
// what inspect says too: the refusal, not a rewrite the next apply would
// do (issue 14 item 3).
func TestInspectSaysThePlansSortRefusal(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{}), 6, 10, 1)
	in := inspectUnder(ctx, t, l, `
  sort_order = ["Event_TS desc"]
  compaction {
    strategy        = "sort"
    min_input_files = 2
  }`)
	all := strings.Join(in.Recommendations, "\n")
	for _, want := range []string{
		`sort order: refused: sort_order = ["Event_TS DESC NULLS LAST"] (main.icewright.hcl:8) does not fit this table: `,
		`column "Event_TS" is not in the table's schema, which has "event_ts": column names are case-sensitive`,
		`the plan refuses the compaction: compaction.strategy = "sort" sorts by sort_order = ["Event_TS DESC NULLS LAST"]`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("recommendations lack %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "next apply rewrites") {
		t.Errorf("inspect promises a rewrite the plan refuses:\n%s", all)
	}
	t.Log(all)
}

// inspectUnder inspects lake.ns.t of l under a policy of the given body,
// which a tables "lake.ns.*" block gives it.
func inspectUnder(ctx context.Context, t *testing.T, l *testkit.Lakehouse, body string) *diff.Inspection {
	t.Helper()
	dir := t.TempDir()
	hcl := l.HCL() + "\npolicy \"p\" {" + body + "\n}\ntables \"lake.ns.*\" {\n  policy = policy.p\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(dir, config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	sess := providers.Open(cfg, providers.Options{Now: time.Now})
	defer sess.Close()
	in, err := Run(ctx, sess, "lake.ns.t", Options{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestInspectWastePriced: with prices (here a pricing block that sets
// every price, so a local table has them) the waste is priced as the
// saving of removing it, by diff.Price, and the report carries the prices.
func TestInspectWastePriced(t *testing.T) {
	ctx := context.Background()
	l := testkit.NewLakehouse(t, t.TempDir(), "lake")
	tbl := testkit.Append(t, l.CreateTable(t, "ns.t", testkit.TableOptions{Partitioned: true}), 12, 10, 3)
	l.Backdate(t, tbl, 9*24*time.Hour)
	in := inspectUnder(ctx, t, l, `
  pricing {
    storage_gb_month = 20
    put_per_1000     = 5
    get_per_1000     = 0.4
    cpu_hour         = 0.05
    scans_per_month  = 1000
  }`)
	if in.Pricing == nil || in.Pricing.Storage != "custom" || in.Waste.USDPerMonth == nil {
		t.Fatalf("pricing %+v, waste %+v", in.Pricing, in.Waste)
	}
	want, _ := diff.Price(in.Waste.Usage(), in.Pricing)
	if got := *in.Waste.USDPerMonth; got != want.SavingPerMonth || got <= 0 || in.Waste.ExtraScanOpens == 0 {
		t.Errorf("waste per month = %v, want %v (> 0, %d extra opens)", got, want.SavingPerMonth, in.Waste.ExtraScanOpens)
	}
}
