package reconcile

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/icewright/icewright/diff"
)

// metrics are the reconciler's Prometheus series, on a registry of its own
// (no process-global state; Handler serves it with the Go and process
// collectors). Labels are bounded: action kinds, outcomes and reason classes
// are fixed sets; a table label only with TableMetrics.
type metrics struct {
	reg *prometheus.Registry

	tables     *prometheus.GaugeVec // state: in_policy | out_of_policy | error
	queueDepth prometheus.Gauge
	running    prometheus.Gauge

	actions          *prometheus.CounterVec // action, outcome, reason
	bytesRewritten   prometheus.Counter
	filesDeleted     prometheus.Counter
	bytesFreed       prometheus.Counter
	snapshotsExpired prometheus.Counter
	planErrors       prometheus.Counter
	skipped          prometheus.Counter     // tables not observed at a listing: unchanged, nothing due
	observed         *prometheus.CounterVec // reason: new | changed | policy | trigger | error-retry | pending | due:<rule>
	configLoads      *prometheus.CounterVec // outcome: ok | failed

	planDuration  *prometheus.HistogramVec // scope: listing | table
	applyDuration *prometheus.HistogramVec // action

	perTable       bool
	tableFiles     *prometheus.GaugeVec
	tableBytes     *prometheus.GaugeVec
	tableSnapshots *prometheus.GaugeVec
	tablePending   *prometheus.GaugeVec
	tableSmall     *prometheus.GaugeVec
	tableOldest    *prometheus.GaugeVec
	tableOrphans   *prometheus.GaugeVec
	// The estimate of the work a table's last plan left pending (diff's
	// Action.Estimate, added up by diff.Estimated; 0 when nothing is
	// pending), and the bytes apply freed on it.
	tablePendingCPU      *prometheus.GaugeVec
	tablePendingRequests *prometheus.GaugeVec
	tablePendingRead     *prometheus.GaugeVec
	tablePendingWritten  *prometheus.GaugeVec
	tablePendingFreed    *prometheus.GaugeVec
	tablePendingUSD      *prometheus.GaugeVec // with the table's prices only
	tableSavingUSD       *prometheus.GaugeVec
	tableBytesFreed      *prometheus.CounterVec
}

func newMetrics(perTable bool) *metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &metrics{reg: reg, perTable: perTable}
	m.tables = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_tables", Help: "Managed tables by state at their last reconcile."}, []string{"state"})
	m.queueDepth = prometheus.NewGauge(prometheus.GaugeOpts{Name: "icewright_queue_depth", Help: "Tables due and not started."})
	m.running = prometheus.NewGauge(prometheus.GaugeOpts{Name: "icewright_reconciles_running", Help: "Tables being reconciled now."})
	m.actions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "icewright_actions_total", Help: "Actions by kind and outcome (done, failed, skipped, interrupted, refused, planned in shadow mode), with a reason class for skips."}, []string{"action", "outcome", "reason"})
	m.bytesRewritten = prometheus.NewCounter(prometheus.CounterOpts{Name: "icewright_bytes_rewritten_total", Help: "Bytes of data files compaction rewrote."})
	m.filesDeleted = prometheus.NewCounter(prometheus.CounterOpts{Name: "icewright_files_deleted_total", Help: "Files deleted by expiry and the orphan sweep."})
	m.bytesFreed = prometheus.NewCounter(prometheus.CounterOpts{Name: "icewright_bytes_freed_total", Help: "Bytes freed by deletions."})
	m.snapshotsExpired = prometheus.NewCounter(prometheus.CounterOpts{Name: "icewright_snapshots_expired_total", Help: "Snapshots expired."})
	m.planErrors = prometheus.NewCounter(prometheus.CounterOpts{Name: "icewright_plan_errors_total", Help: "Tables or listings that could not be planned."})
	m.skipped = prometheus.NewCounter(prometheus.CounterOpts{Name: "icewright_tables_skipped_total", Help: "Tables a listing did not observe: metadata location byte-equal to the last observed, same policy, no time-based rule due."})
	m.observed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "icewright_tables_observed_total", Help: "Tables observed (planned), by why: new, changed, policy, trigger, error-retry, pending (its last plan left actions), due:<rule> (a time-based rule of diff.NextDue)."}, []string{"reason"})
	m.configLoads = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "icewright_config_loads_total", Help: "Configuration loads and reloads by outcome."}, []string{"outcome"})
	m.planDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "icewright_plan_duration_seconds", Help: "Durations: learning every table's metadata location (locations), the plan of the tables a listing observes (listing), or of one table (table).", Buckets: prometheus.ExponentialBuckets(0.01, 4, 9)}, []string{"scope"})
	m.applyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "icewright_apply_duration_seconds", Help: "Action durations by kind.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 10)}, []string{"action"})
	for _, c := range []prometheus.Collector{m.tables, m.queueDepth, m.running, m.actions, m.bytesRewritten, m.filesDeleted, m.bytesFreed, m.snapshotsExpired, m.planErrors, m.skipped, m.observed, m.configLoads, m.planDuration, m.applyDuration} {
		f(c)
	}
	if perTable {
		m.tableFiles = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_data_files", Help: "Live data files of a table."}, []string{"table"})
		m.tableBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_data_bytes", Help: "Bytes of a table's live data files."}, []string{"table"})
		m.tableSnapshots = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_snapshots", Help: "Snapshots of a table."}, []string{"table"})
		m.tablePending = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_pending_actions", Help: "Actions a table's last plan had left to do (0: in policy)."}, []string{"table"})
		m.tableSmall = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_small_file_ratio", Help: "Share of a table's live data files its last plan would compact (0: none)."}, []string{"table"})
		m.tableOldest = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_oldest_snapshot_age_seconds", Help: "Age of a table's oldest snapshot at its last plan."}, []string{"table"})
		m.tableOrphans = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_orphan_bytes", Help: "Bytes of orphan files a table's last plan would remove (0: none, or no orphan_files policy)."}, []string{"table"})
		m.tablePendingCPU = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_pending_cpu_seconds", Help: "Estimated CPU-seconds of the work a table's last plan left pending (0: none pending)."}, []string{"table"})
		m.tablePendingRequests = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_pending_requests", Help: "Estimated object-store requests (every kind) of the work a table's last plan left pending."}, []string{"table"})
		m.tablePendingRead = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_pending_bytes_read", Help: "Estimated bytes the work a table's last plan left pending reads."}, []string{"table"})
		m.tablePendingWritten = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_pending_bytes_written", Help: "Estimated bytes the work a table's last plan left pending writes."}, []string{"table"})
		m.tablePendingFreed = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_pending_bytes_freed", Help: "Estimated bytes the work a table's last plan left pending frees (the saving, in storage)."}, []string{"table"})
		m.tablePendingUSD = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_pending_cost_usd", Help: "Estimated cost in US dollars of the work a table's last plan left pending, at its prices (requests and CPU; docs/cost.md); absent for a table without prices."}, []string{"table"})
		m.tableSavingUSD = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "icewright_table_pending_saving_usd_per_month", Help: "Estimated saving per month in US dollars of the work a table's last plan left pending, at its prices (storage and reads; docs/cost.md); absent for a table without prices."}, []string{"table"})
		m.tableBytesFreed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "icewright_table_bytes_freed_total", Help: "Bytes apply freed on a table by deletions (icewright_bytes_freed_total per table)."}, []string{"table"})
		for _, c := range []prometheus.Collector{m.tableFiles, m.tableBytes, m.tableSnapshots, m.tablePending, m.tableSmall, m.tableOldest, m.tableOrphans,
			m.tablePendingCPU, m.tablePendingRequests, m.tablePendingRead, m.tablePendingWritten, m.tablePendingFreed, m.tablePendingUSD, m.tableSavingUSD, m.tableBytesFreed} {
			f(c)
		}
	}
	return m
}

// observe sets a table's series from its plan, made at now.
func (m *metrics) observe(tp diff.TablePlan, pending int, now time.Time) {
	if !m.perTable {
		return
	}
	o := tp.Observed
	m.tableFiles.WithLabelValues(tp.Address).Set(float64(o.DataFiles))
	m.tableBytes.WithLabelValues(tp.Address).Set(float64(o.DataBytes))
	m.tableSnapshots.WithLabelValues(tp.Address).Set(float64(o.Snapshots))
	m.tablePending.WithLabelValues(tp.Address).Set(float64(pending))
	small, orphans := 0.0, 0.0
	for _, a := range tp.Actions {
		if a.Compact != nil && o.DataFiles > 0 {
			small = float64(a.Compact.InputFiles) / float64(o.DataFiles)
		}
		if a.Orphans != nil {
			orphans = float64(a.Orphans.Bytes)
		}
	}
	m.tableSmall.WithLabelValues(tp.Address).Set(small)
	m.tableOrphans.WithLabelValues(tp.Address).Set(orphans)
	if o.OldestSnapshotMs > 0 {
		m.tableOldest.WithLabelValues(tp.Address).Set(now.Sub(time.UnixMilli(o.OldestSnapshotMs)).Seconds())
	}
	m.pendingCost(tp, pending)
}

// pendingCost sets a table's estimate gauges from its plan's actions when
// some are pending, else to 0 (applied, or in policy).
func (m *metrics) pendingCost(tp diff.TablePlan, pending int) {
	var u diff.Usage
	if pending > 0 {
		u, _, _ = diff.Estimated(tp.Actions)
	}
	m.tablePendingCPU.WithLabelValues(tp.Address).Set(u.CPUSeconds)
	m.tablePendingRequests.WithLabelValues(tp.Address).Set(float64(u.Requests.Total()))
	m.tablePendingRead.WithLabelValues(tp.Address).Set(float64(u.BytesRead))
	m.tablePendingWritten.WithLabelValues(tp.Address).Set(float64(u.BytesWritten))
	m.tablePendingFreed.WithLabelValues(tp.Address).Set(float64(u.BytesFreed))
	if money, ok := diff.Price(u, tp.Pricing); ok {
		m.tablePendingUSD.WithLabelValues(tp.Address).Set(money.Run)
		m.tableSavingUSD.WithLabelValues(tp.Address).Set(money.SavingPerMonth)
	} else {
		// No prices (local storage, or a pricing block removed): no
		// series, rather than a $0 that reads as free.
		m.tablePendingUSD.DeleteLabelValues(tp.Address)
		m.tableSavingUSD.DeleteLabelValues(tp.Address)
	}
}

// freed counts bytes apply freed on a table.
func (m *metrics) freed(addr string, bytes int64) {
	if !m.perTable || bytes <= 0 {
		return
	}
	m.tableBytesFreed.WithLabelValues(addr).Add(float64(bytes))
}

// forget drops a table's series (no longer managed).
func (m *metrics) forget(addr string) {
	if !m.perTable {
		return
	}
	for _, g := range []*prometheus.GaugeVec{m.tableFiles, m.tableBytes, m.tableSnapshots, m.tablePending, m.tableSmall, m.tableOldest, m.tableOrphans,
		m.tablePendingCPU, m.tablePendingRequests, m.tablePendingRead, m.tablePendingWritten, m.tablePendingFreed, m.tablePendingUSD, m.tableSavingUSD} {
		g.DeleteLabelValues(addr)
	}
	m.tableBytesFreed.DeleteLabelValues(addr)
}
