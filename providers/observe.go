package providers

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compact"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/internal/meter"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/orphans"
	"github.com/icewright/icewright/providers/tablestate"
)

// Observe reads one managed table into diff's plain state: its metadata, the
// current snapshot's files aggregated per (spec, partition), and, only when
// the policy has orphan_files, the orphan scan.
func (s *Session) Observe(ctx context.Context, pol *config.Effective) (*diff.TableState, error) {
	o, err := s.observe(ctx, pol, false)
	if err != nil {
		return nil, err
	}
	return o.State, o.Close()
}

// Observation is a plan's observation of one table: the state, and what the
// same manifest walk recorded for the expiry estimate. Close releases it
// (the index may have spilled to temporary files).
type Observation struct {
	State *diff.TableState

	sess   *Session
	pol    *config.Effective
	expiry *expiry.Index // nil: estimate with its own walks
	now    time.Time     // the clock of the policy's compaction.where
}

// ObservePlan is Observe for a plan: when the policy has snapshot_retention,
// the walk that observes the table also records what each snapshot reaches,
// so the expiry estimate needs no second read of the manifests.
func (s *Session) ObservePlan(ctx context.Context, pol *config.Effective) (*Observation, error) {
	return s.observe(ctx, pol, pol.SnapshotRetention.Declared)
}

// Plan is the diff of the observed table at now, with the expiry figures
// filled by the same reachability computation apply deletes by
// (diff.TablePlan.EstimateExpiry decides what they refuse). It is what
// plan shows and what inspect's recommendations are derived from, so the
// two cannot disagree (issue 14: inspect promised compactions and expiries
// that the plan did not have).
func (o *Observation) Plan(ctx context.Context, now time.Time) (diff.TablePlan, error) {
	tp := diff.PlanTable(o.pol, o.State, now)
	err := tp.EstimateExpiry(o.State, func(expireIDs []int64, groups []diff.CompactGroup) (diff.ExpiryFreed, error) {
		f, err := o.estimateExpiry(ctx, expireIDs, groups)
		return diff.ExpiryFreed{Files: f.Files, Bytes: f.Bytes, EscapedFileURIs: f.EscapedFileURIs,
			ForeignFiles: f.ForeignFiles, ForeignExample: f.ForeignExample, Reads: f.Reads}, err
	})
	if err != nil {
		return diff.TablePlan{}, err
	}
	return tp, nil
}

// estimateExpiry counts the files and bytes that expiring expireIDs frees
// (the walk's expiry.Index, or expiry.Estimate on the table as it is now),
// counting the current files that the plan's
// compaction groups replace as freed when the current snapshot is expired.
func (o *Observation) estimateExpiry(ctx context.Context, expireIDs []int64, groups []diff.CompactGroup) (expiry.Freed, error) {
	if o.expiry != nil && !o.expiry.Overflowed() {
		freed, err := o.expiry.Estimate(expireIDs, groups)
		if err != nil {
			return expiry.Freed{}, fmt.Errorf("estimate expiry of %s: %w", o.pol.Address, err)
		}
		return freed, nil
	}
	tbl, err := o.sess.loadTable(ctx, o.pol.Address)
	if err != nil {
		return expiry.Freed{}, fmt.Errorf("estimate expiry of %s: %w", o.pol.Address, err)
	}
	var compactIn func(string) bool
	if len(groups) > 0 {
		// Only a figure: without it the estimate under-counts.
		compactIn, _ = compact.Inputs(ctx, tbl, diff.SelectionFor(o.pol), groups, o.now)
	}
	freed, err := expiry.EstimateTable(ctx, tbl, expireIDs, compactIn)
	if err != nil {
		return expiry.Freed{}, fmt.Errorf("estimate expiry of %s: %w", o.pol.Address, err)
	}
	return freed, nil
}

// Close releases the observation's temporary files.
func (o *Observation) Close() error {
	if o.expiry != nil {
		err := o.expiry.Close()
		o.expiry = nil
		return err
	}
	return nil
}

// observe reads pol's table: its metadata, the commit problems its catalog
// type gives, the one walk of its manifests (observeWalk) and then what
// each kind adds (observeKinds).
func (s *Session) observe(ctx context.Context, pol *config.Effective, withExpiry bool) (_ *Observation, err error) {
	if ctx, err = s.withReadPace(ctx, pol.Catalog); err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	// The load's bytes, counted by the meter the storage's IO feeds (the
	// context's, or one of its own): the current metadata file as stored,
	// which the plan's first commit reads (diff.TableState.MetadataFileBytes).
	m, lctx := meter.Of(ctx), ctx
	if m == nil {
		m = meter.New()
		lctx = meter.With(ctx, m)
	}
	readBefore := m.Counts().BytesRead
	tbl, err := s.loadTable(lctx, pol.Address)
	if err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	o := &Observation{State: tablestate.Metadata(tbl, pol.Address, &s.specs), sess: s, pol: pol, now: s.now()}
	o.State.MetadataFileBytes = m.Counts().BytesRead - readBefore
	// The estimates count batches as objdel sends them. The catalog is the
	// address's: inspect and doctor observe with a policy that names none.
	catName, _, err := splitAddress(pol.Address)
	if err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	pace, err := s.deleteSettings(catName)
	if err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	o.State.DeleteBatch = pace.BatchSize
	if err := s.withEngine(pol, o.State); err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	if err := s.commitProblem(ctx, pol, tbl, o.State); err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	defer func() {
		if err != nil {
			o.Close()
		}
	}()
	agg, err := s.observeWalk(ctx, pol, tbl, o, withExpiry)
	if err != nil {
		return nil, err
	}
	if agg == nil {
		return o, nil
	}
	agg.Fill(o.State)
	if err := s.observeKinds(ctx, pol, tbl, o.State, o.now); err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	return o, nil
}

// commitProblem is what keeps the table's catalog from committing a
// rewrite of it (diff.TableState.CommitProblem).
func (s *Session) commitProblem(ctx context.Context, pol *config.Effective, tbl *table.Table, st *diff.TableState) error {
	catName, _, err := splitAddress(pol.Address)
	if err != nil {
		return nil
	}
	cc, err := s.catalogConfig(catName)
	if err != nil {
		return nil
	}
	st.CommitProblem = commitProblem(cc.Type, tbl.MetadataLocation())
	if st.CommitProblem == "" && writesMetadata(cc.Type) {
		// iceberg-go writes the schemas back: a default it holds
		// as a rounded float64 would change in the metadata.
		if st.CommitProblem, err = compaction.DefaultsProblem(ctx, tbl); err != nil {
			return fmt.Errorf("column defaults: %w", err)
		}
	}
	return nil
}

// observeWalk is the one walk of the table's manifests that a plan makes:
// the orphan scan's reference walk (when the policy has orphan_files) with
// the current snapshot's aggregate (compact.Aggregator) and the expiry
// index riding on it, or a walk of its own for them when there is no scan.
// The aggregate is nil for a table without a current snapshot.
func (s *Session) observeWalk(ctx context.Context, pol *config.Effective, tbl *table.Table, o *Observation, withExpiry bool) (*compact.Aggregate, error) {
	md := tbl.Metadata()
	cur := md.CurrentSnapshot()
	// The orphan scan's reference walk also feeds the aggregate and the
	// expiry index, so that a plan reads each manifest once.
	ride := &orphans.Ride{}
	var a *compact.Aggregator
	if cur != nil {
		a = compact.NewAggregator(md, diff.SelectionFor(pol), o.now)
		a.KeepCandidates(pol.Compaction.Declared)
		// A plan's walks are read-only: they decode with the fast decoder
		// (apply re-checks everything it deletes with iceberg-go's).
		a.UseDecoder(reach.DecodeFast)
		if err := a.Err(); err != nil {
			return nil, whereError(pol, err)
		}
		ride.Aggregate, ride.AggregateSnapshot = a, cur.SnapshotID
		if withExpiry {
			o.expiry = expiry.NewIndex(s.spill, cur.SnapshotID, md.Location())
			ride.Consumers = []reach.Consumer{o.expiry.Consumer()}
		}
	}
	if pol.OrphanFiles.Declared {
		scan, err := s.scanOrphans(ctx, pol, tbl, ride, s.plannedTables)
		if err != nil {
			return nil, fmt.Errorf("observe %s: orphan scan: %w", pol.Address, err)
		}
		o.State.Orphans = scan
	}
	if cur == nil {
		return nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("observe %s: open table storage: %w", pol.Address, err)
	}
	var agg *compact.Aggregate
	switch {
	case !ride.Walked && o.expiry != nil:
		// No orphan scan, or it refused before walking: one walk of the
		// observed metadata for the aggregate and the expiry index.
		w := reach.Spec{Meta: md, FS: fsys, Snapshots: reach.AllSnapshots(md), Aggregate: a, AggregateSnapshot: cur.SnapshotID, Consumers: ride.Consumers, Decoder: reach.DecodeFast}
		if err := reach.Walk(ctx, w); err != nil {
			return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
		}
		agg = a.Finish()
	case ride.Walked && ride.Aggregated:
		agg = a.Finish()
	default:
		// The aggregate alone reads only the current snapshot; and when the
		// scan walked newer metadata that no longer has the observed
		// current snapshot (a concurrent expiry), it is read here.
		agg, err = compact.AggregateInto(ctx, fsys, md, cur, a, nil)
		if err != nil {
			return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
		}
	}
	if err := a.Err(); err != nil {
		return nil, whereError(pol, err)
	}
	return agg, nil
}

// whereError is an error of the policy's compaction.where, at its place.
func whereError(pol *config.Effective, err error) error {
	w := pol.Compaction.Where.Origin
	return fmt.Errorf("observe %s: compaction.where at %s:%d: %w", pol.Address, w.Filename, w.Start.Line, err)
}
