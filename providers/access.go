package providers

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/tablestate"
)

// What the session offers the packages built on it (providers/doctor,
// providers/inspect): its configuration, clock and environment, the
// deadlines of its calls, and the tables it loads and observes. They
// report on a session; they add nothing to it.

// Config is the configuration the session was opened with.
func (s *Session) Config() *config.Config { return s.cfg }

// Now is the session's clock (Options.Now).
func (s *Session) Now() time.Time { return s.now() }

// Getenv is key's value in the environment the session runs with
// (Options.Env), "" when unset.
func (s *Session) Getenv(key string) string { return envValue(s.opts.Env, key) }

// CatalogTimeout is one call's deadline to catalog name (its
// icewright.request-timeout, retries included).
func (s *Session) CatalogTimeout(name string) time.Duration { return s.catalogTimeout(name) }

// CallBound is the deadline of a call that names no catalog: the longest
// of the catalogs'.
func (s *Session) CallBound() time.Duration { return s.callBound() }

// AWSConfig is the AWS SDK configuration the session's S3 clients use
// (the default credential chain), loaded once.
func (s *Session) AWSConfig(ctx context.Context) (*aws.Config, error) { return s.awsConfig(ctx) }

// LoadTable loads a table by address (catalog.namespace.table), within
// its catalog's deadline.
func (s *Session) LoadTable(ctx context.Context, address string) (*table.Table, error) {
	return s.loadTable(ctx, address)
}

// ObserveState observes a table under pol as a plan does, without the
// expiry walk (ObservePlan adds it when the policy expires snapshots).
// The caller closes the observation.
func (s *Session) ObserveState(ctx context.Context, pol *config.Effective) (*Observation, error) {
	return s.observe(ctx, pol, false)
}

// UnmanagedPolicy is the yardstick for a table no block matches: Iceberg's
// defaults, with the table's own target file size when it has one.
func UnmanagedPolicy(address string, tbl *table.Table) *config.Effective {
	pol := &config.Effective{Address: address}
	pol.TargetFileSize.Value = config.DefaultTargetFileSize
	if v, err := strconv.ParseInt(tbl.Properties()["write.target-file-size-bytes"], 10, 64); err == nil && v > 0 {
		pol.TargetFileSize.Value = v
	}
	pol.Compaction.MinInputFiles.Value = config.DefaultMinInputFiles
	pol.Compaction.DeleteFileThreshold.Value = config.DefaultDeleteFileThreshold
	pol.Manifests.MaxCount.Value = config.DefaultManifestMaxCount
	pol.SnapshotRetention.MaxAge.Value = config.DefaultMaxSnapshotAge
	pol.OrphanFiles.OlderThan.Value = config.DefaultOlderThan
	pol.Pricing.ScansPerMonth.Value = config.DefaultScansPerMonth // its storage's prices, as a managed table's without a pricing block
	return pol
}

// envValue is key's value in env (os.Environ form), "" when unset.
func envValue(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// TableSizes observes a table's files as inspect reports them: the state
// (selection sel, clock now) and, from the same walk, the size histogram
// of its data files and, with perPartition, each partition's, in octaves
// of sel's target (empty when the table has no current snapshot).
func TableSizes(ctx context.Context, tbl *table.Table, address string, sel diff.CompactionSelection, now time.Time, perPartition bool) (*diff.TableState, []diff.SizeBucket, []diff.PartitionHistogram, error) {
	st, agg, err := compact.ObserveTableSizes(ctx, tbl, address, sel, now, perPartition)
	if err != nil {
		return nil, nil, nil, err
	}
	hist := []diff.SizeBucket{}
	var parts []diff.PartitionHistogram
	if agg != nil {
		hist, parts = agg.SizeHistogram(sel.Target), agg.PartitionHistograms(sel.Target)
	}
	return st, hist, parts, nil
}

// SortFields renders a sort order in diff's (= config's) vocabulary:
// "identity", "bucket[16]", "day", ...
func SortFields(so table.SortOrder, sc *iceberg.Schema) []diff.SortField {
	return tablestate.SortFields(so, sc)
}

// ScanOrphans runs the orphan scan of pol's table tbl with this session's
// catalogs and storage settings, as a plan does (against the plan's
// listing of the other tables, plannedTables).
func (s *Session) ScanOrphans(ctx context.Context, pol *config.Effective, tbl *table.Table) (*diff.OrphanScan, error) {
	return s.scanOrphans(ctx, pol, tbl, nil, s.plannedTables)
}
