package reconcile

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
)

// TestMetricsPendingCost: a table's estimate gauges add up the estimates
// of its plan's actions while they are pending, drop to 0 once nothing
// is (applied or in policy), and its bytes-freed counter only grows.
func TestMetricsPendingCost(t *testing.T) {
	m := newMetrics(true)
	tp := diff.TablePlan{Address: "lake.a.b", Actions: []diff.Action{
		{Type: diff.Compact, Estimate: &diff.Usage{Requests: diff.Requests{Get: 10, Put: 3}, BytesRead: 1000, BytesWritten: 900, BytesFreed: 1000, CPUSeconds: 1.5}},
		{Type: diff.ExpireSnapshots, Estimate: &diff.Usage{Requests: diff.Requests{Get: 4, BatchDelete: 1}, BytesRead: 50, BytesFreed: 7000, CPUSeconds: 0.25}},
		{Type: diff.UpdateProperties}, // no estimate: counts nothing
	}}
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	m.observe(tp, len(tp.Actions), now)
	for name, c := range map[string]struct {
		g    *prometheus.GaugeVec
		want float64
	}{
		"cpu":      {m.tablePendingCPU, 1.75},
		"requests": {m.tablePendingRequests, 18},
		"read":     {m.tablePendingRead, 1050},
		"written":  {m.tablePendingWritten, 900},
		"freed":    {m.tablePendingFreed, 8000},
	} {
		if got := testutil.ToFloat64(c.g.WithLabelValues(tp.Address)); got != c.want {
			t.Errorf("pending %s = %v, want %v", name, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.tablePendingUSD); n != 0 {
		t.Errorf("%d cost series for a table without prices", n)
	}
	// With prices (S3's defaults): the money of the same estimate, by
	// diff.Price.
	s3 := config.StoragePrices[0].Prices
	tp.Pricing = &s3
	m.observe(tp, len(tp.Actions), now)
	u, _, _ := diff.Estimated(tp.Actions)
	want, _ := diff.Price(u, &s3)
	if got := testutil.ToFloat64(m.tablePendingUSD.WithLabelValues(tp.Address)); got != want.Run || got <= 0 {
		t.Errorf("pending cost = %v, want %v", got, want.Run)
	}
	if got := testutil.ToFloat64(m.tableSavingUSD.WithLabelValues(tp.Address)); got != want.SavingPerMonth || got <= 0 {
		t.Errorf("saving per month = %v, want %v", got, want.SavingPerMonth)
	}
	m.observe(tp, 0, now) // applied: nothing left pending
	if got := testutil.ToFloat64(m.tablePendingCPU.WithLabelValues(tp.Address)); got != 0 {
		t.Errorf("pending CPU after the apply = %v, want 0", got)
	}
	if got := testutil.ToFloat64(m.tablePendingUSD.WithLabelValues(tp.Address)); got != 0 {
		t.Errorf("pending cost after the apply = %v, want 0", got)
	}
	m.freed(tp.Address, 5000)
	m.freed(tp.Address, -1) // an unknown count is not a negative one
	m.freed(tp.Address, 2000)
	if got := testutil.ToFloat64(m.tableBytesFreed.WithLabelValues(tp.Address)); got != 7000 {
		t.Errorf("bytes freed = %v, want 7000", got)
	}
	m.forget(tp.Address)
	for _, c := range []prometheus.Collector{m.tableBytesFreed, m.tablePendingUSD, m.tablePendingCPU} {
		if n := testutil.CollectAndCount(c); n != 0 {
			t.Errorf("%d series left after forget", n)
		}
	}
}
