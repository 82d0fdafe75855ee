package providers

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/orphans"
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
// filled by the same reachability computation apply deletes by. It is what
// plan shows and what inspect's recommendations are derived from, so the
// two cannot disagree (issue 14: inspect promised compactions and expiries
// that the plan did not have).
func (o *Observation) Plan(ctx context.Context, now time.Time) (diff.TablePlan, error) {
	tp := diff.PlanTable(o.pol, o.State, now)
	var groups []diff.CompactGroup
	refuse := -1
	for i := range tp.Actions {
		a := &tp.Actions[i]
		if a.Type == diff.Compact && a.Compact != nil {
			// The files compaction replaces are freed by this plan's expiry
			// too; the estimate counts them.
			groups = a.Compact.Groups
		}
		if a.Type != diff.ExpireSnapshots || a.Expire == nil || len(a.Expire.SnapshotIDs) == 0 {
			continue
		}
		freed, err := o.estimateExpiry(ctx, a.Expire.SnapshotIDs, groups)
		if err != nil {
			return diff.TablePlan{}, fmt.Errorf("estimate expiry: %w", err)
		}
		a.Expire.FilesToDelete, a.Expire.BytesToDelete, a.Expire.EscapedFileURIs = freed.Files, freed.Bytes, freed.EscapedFileURIs
		if freed.ForeignFiles > 0 {
			refuse = i
			tp.Refusals = append(tp.Refusals, diff.Refusal{
				Action: string(diff.ExpireSnapshots),
				Reason: fmt.Sprintf("expiring %d snapshots would release %d files on another storage than the table location %s (first: %s), which the table's IO (iceberg-go reads and deletes a table's files through the one IO of its metadata location's storage) cannot delete: "+
					"the commit would land and the deletions fail, leaving the files unreferenced. Expire with an engine whose FileIO resolves each path's storage (Java's ResolvingFileIO or HadoopFileIO), or correct the paths",
					len(a.Expire.SnapshotIDs), freed.ForeignFiles, o.State.Location, freed.ForeignExample),
			})
		}
	}
	if refuse >= 0 {
		tp.Actions = slices.Delete(tp.Actions, refuse, refuse+1)
	}
	return tp, nil
}

// estimateExpiry counts the files and bytes that expiring expireIDs frees
// (expiry.Estimate), counting the current files that the plan's
// compaction groups replace as freed when the current snapshot is expired.
func (o *Observation) estimateExpiry(ctx context.Context, expireIDs []int64, groups []diff.CompactGroup) (expiry.Freed, error) {
	if o.expiry != nil && !o.expiry.Overflowed() {
		freed, err := o.expiry.Estimate(expireIDs, groups)
		if err != nil {
			return expiry.Freed{}, fmt.Errorf("estimate expiry of %s: %w", o.pol.Address, err)
		}
		return freed, nil
	}
	var compactIn func(string) bool
	if len(groups) > 0 {
		// Only a figure: without it the estimate under-counts.
		if tbl, err := o.sess.loadTable(ctx, o.pol.Address); err == nil {
			compactIn, _ = compactionInputs(ctx, tbl, diff.SelectionFor(o.pol), groups, o.now)
		}
	}
	return o.sess.estimateExpiry(ctx, o.pol.Address, expireIDs, compactIn)
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

func (s *Session) observe(ctx context.Context, pol *config.Effective, withExpiry bool) (_ *Observation, err error) {
	if ctx, err = s.withReadPace(ctx, pol.Catalog); err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	tbl, err := s.loadTable(ctx, pol.Address)
	if err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	o := &Observation{State: observeMetadata(tbl, pol.Address, &s.specs), sess: s, pol: pol, now: s.now()}
	if err := s.withEngine(pol, o.State); err != nil {
		return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
	}
	if catName, _, err := splitAddress(pol.Address); err == nil {
		if cc, err := s.catalogConfig(catName); err == nil {
			o.State.CommitProblem = commitProblem(cc.Type, tbl.MetadataLocation())
			if o.State.CommitProblem == "" && writesMetadata(cc.Type) {
				// iceberg-go writes the schemas back: a default it holds
				// as a rounded float64 would change in the metadata.
				if o.State.CommitProblem, err = compaction.DefaultsProblem(ctx, tbl); err != nil {
					return nil, fmt.Errorf("observe %s: column defaults: %w", pol.Address, err)
				}
			}
		}
	}
	defer func() {
		if err != nil {
			o.Close()
		}
	}()
	md := tbl.Metadata()
	cur := md.CurrentSnapshot()
	// The orphan scan's reference walk also feeds the aggregate and the
	// expiry index, so that a plan reads each manifest once.
	ride := &orphans.Ride{}
	var a *aggregator
	if cur != nil {
		a = newAggregator(md, diff.SelectionFor(pol), o.now)
		a.compacts = pol.Compaction.Declared
		if err := a.err; err != nil {
			w := pol.Compaction.Where.Origin
			return nil, fmt.Errorf("observe %s: compaction.where at %s:%d: %w", pol.Address, w.Filename, w.Start.Line, err)
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
		return o, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("observe %s: open table storage: %w", pol.Address, err)
	}
	var agg *snapshotAggregate
	switch {
	case !ride.Walked && o.expiry != nil:
		// No orphan scan, or it refused before walking: one walk of the
		// observed metadata for the aggregate and the expiry index.
		w := reach.Spec{Meta: md, FS: fsys, Snapshots: reach.AllSnapshots(md), Aggregate: a, AggregateSnapshot: cur.SnapshotID, Consumers: ride.Consumers}
		if err := reach.Walk(ctx, w); err != nil {
			return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
		}
		agg = a.finish()
	case ride.Walked && ride.Aggregated:
		agg = a.finish()
	default:
		// The aggregate alone reads only the current snapshot; and when the
		// scan walked newer metadata that no longer has the observed
		// current snapshot (a concurrent expiry), it is read here.
		agg, err = aggregateInto(ctx, fsys, md, cur, a, nil)
		if err != nil {
			return nil, fmt.Errorf("observe %s: %w", pol.Address, err)
		}
	}
	if err := a.err; err != nil {
		w := pol.Compaction.Where.Origin
		return nil, fmt.Errorf("observe %s: compaction.where at %s:%d: %w", pol.Address, w.Filename, w.Start.Line, err)
	}
	if pol.Compaction.Declared || pol.PartitionAgeing.Declared {
		// The rewrite (compaction's or ageing's) refuses these tables and
		// files; the plan says so first.
		if o.State.CompactProblem = compaction.TypesProblem(tbl.Schema()); o.State.CompactProblem == "" {
			if o.State.CompactProblem, err = compaction.EqualityDeleteProblem(ctx, tbl, escapedPath); err != nil {
				return nil, fmt.Errorf("observe %s: equality deletes: %w", pol.Address, err)
			}
		}
	}
	if pol.DanglingDeletes.Declared && agg.files.DeleteFiles > 0 {
		d, err := compaction.FindDangling(ctx, tbl)
		if err != nil {
			return nil, fmt.Errorf("observe %s: dangling deletes: %w", pol.Address, err)
		}
		o.State.DanglingDeletes = danglingState(d)
	}
	if pol.PartitionAgeing.Declared {
		if o.State.PartitionAgeing, o.State.AgeingRefusal, err = observeAgeing(ctx, tbl, pol.PartitionAgeing, o.now); err != nil {
			return nil, fmt.Errorf("observe %s: partition ageing: %w", pol.Address, err)
		}
	}
	o.State.Partitions = agg.partitions()
	o.State.Files = agg.files
	o.State.Manifests = agg.manifests
	o.State.EscapedFileURI = agg.escapedExample
	o.State.ForeignFile = agg.foreignExample
	return o, nil
}

// observeTable fills a TableState from a loaded table. sel decides which data
// files are compaction candidates (diff.SelectionFor of the policy); now is
// the clock of sel.Where's current_date and now().
func observeTable(ctx context.Context, tbl *table.Table, address string, sel diff.CompactionSelection, now time.Time) (*diff.TableState, error) {
	st, _, err := observeTableSizes(ctx, tbl, address, sel, now, false)
	return st, err
}

// observeTableSizes is observeTable that also returns the aggregate, whose
// size histogram inspect draws; perPartition also counts each partition's
// file sizes (snapshotAggregate.partOctaves). The aggregate is nil for a
// table without a current snapshot.
func observeTableSizes(ctx context.Context, tbl *table.Table, address string, sel diff.CompactionSelection, now time.Time, perPartition bool) (*diff.TableState, *snapshotAggregate, error) {
	st := observeMetadata(tbl, address, new(compaction.SpecCheck))
	md := tbl.Metadata()
	cur := md.CurrentSnapshot()
	if cur == nil {
		return st, nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("open table storage: %w", err)
	}
	a := newAggregator(md, sel, now)
	if perPartition {
		a.agg.partOctaves = map[partKey]*octaveCounts{}
	}
	agg, err := aggregateInto(ctx, fsys, md, cur, a, nil)
	if err != nil {
		return nil, nil, err
	}
	st.Partitions = agg.partitions()
	st.Files = agg.files
	st.Manifests = agg.manifests
	st.EscapedFileURI = agg.escapedExample
	st.ForeignFile = agg.foreignExample
	return st, agg, nil
}

// observeMetadata is the part of the state that the table metadata alone
// gives: everything but the current snapshot's file aggregate and orphans.
func observeMetadata(tbl *table.Table, address string, specs *compaction.SpecCheck) *diff.TableState {
	md := tbl.Metadata()
	st := &diff.TableState{
		Address:            address,
		UUID:               md.TableUUID().String(),
		MetadataLocation:   tbl.MetadataLocation(),
		Location:           md.Location(),
		FormatVersion:      md.Version(),
		LastUpdatedMs:      md.LastUpdatedMillis(),
		Properties:         maps.Clone(map[string]string(md.Properties())),
		DefaultSortOrderID: md.DefaultSortOrder(),
		DefaultSpecID:      md.DefaultPartitionSpec(),
		Partitions:         []diff.PartitionStats{},
	}
	if st.Properties == nil {
		st.Properties = map[string]string{}
	}
	sc := md.CurrentSchema()
	// Non-nil even without columns: the plan checks sort columns against
	// an observed schema (diff.TableState.Schema).
	st.Schema = []diff.Column{}
	for _, f := range sc.Fields() {
		st.Schema = append(st.Schema, diff.Column{ID: f.ID, Name: f.Name, Type: f.Type.String(),
			SortTransforms: compaction.SortTransforms(f.Type)})
	}
	st.SortOrder = sortFields(md.SortOrder(), sc)
	for _, spec := range md.PartitionSpecs() {
		ps := diff.PartitionSpec{ID: spec.ID(), Fields: []string{}}
		for _, f := range spec.Fields() {
			col, _ := sc.FindColumnName(f.SourceID())
			ps.Fields = append(ps.Fields, fmt.Sprintf("%s(%s)", f.Transform, col))
		}
		st.Specs = append(st.Specs, ps)
	}
	st.UnwritableSpecs = specs.Unwritable(tbl)
	for _, snap := range md.Snapshots() {
		ds := diff.Snapshot{
			ID:             snap.SnapshotID,
			ParentID:       snap.ParentSnapshotID,
			SequenceNumber: snap.SequenceNumber,
			TimestampMs:    snap.TimestampMs,
			ManifestList:   snap.ManifestList,
		}
		if snap.Summary != nil {
			ds.Operation = string(snap.Summary.Operation)
			ds.Summary = maps.Clone(map[string]string(snap.Summary.Properties))
		}
		st.Snapshots = append(st.Snapshots, ds)
	}
	for name, ref := range md.Refs() {
		st.Refs = append(st.Refs, diff.Ref{
			Name:               name,
			Type:               string(ref.SnapshotRefType),
			SnapshotID:         ref.SnapshotID,
			MinSnapshotsToKeep: ref.MinSnapshotsToKeep,
			MaxSnapshotAgeMs:   ref.MaxSnapshotAgeMs,
			MaxRefAgeMs:        ref.MaxRefAgeMs,
		})
	}
	slices.SortFunc(st.Refs, func(a, b diff.Ref) int { return cmp.Compare(a.Name, b.Name) })
	for e := range md.PreviousFiles() {
		st.MetadataLog = append(st.MetadataLog, diff.MetadataLogEntry{File: e.MetadataFile, TimestampMs: e.TimestampMs})
	}
	if cur := md.CurrentSnapshot(); cur != nil {
		id := cur.SnapshotID
		st.CurrentSnapshotID = &id
	}
	return st
}

// sortFields renders the default sort order in diff's (= config's)
// vocabulary: "identity", "bucket[16]", "day", ...
func sortFields(so table.SortOrder, sc *iceberg.Schema) []diff.SortField {
	out := []diff.SortField{}
	for _, f := range so.Fields() {
		col := ""
		if len(f.SourceIDs) > 0 {
			col, _ = sc.FindColumnName(f.SourceIDs[0])
		}
		out = append(out, diff.SortField{
			Transform:  f.Transform.String(),
			Column:     col,
			Descending: f.Direction == table.SortDESC,
			NullsFirst: f.NullOrder == table.NullsFirst,
		})
	}
	return out
}

// partitionRenderer turns a file's partition tuple into "name=value/..." for
// one spec, using the transforms' human form (as Hive-style paths do), and
// into the values an engine's predicate is written from (values).
type partitionRenderer struct {
	names  []string
	ids    []int
	trans  []iceberg.Transform
	result []iceberg.Type
	// columns and types are the source columns' names and types ("" and
	// nil when the schema lacks the source).
	columns []string
	types   []iceberg.Type
}

func newPartitionRenderer(spec *iceberg.PartitionSpec, sc *iceberg.Schema) *partitionRenderer {
	r := &partitionRenderer{}
	if spec == nil {
		return r
	}
	for _, f := range spec.Fields() {
		r.names = append(r.names, f.Name)
		r.ids = append(r.ids, f.FieldID)
		r.trans = append(r.trans, f.Transform)
		var rt, st iceberg.Type
		col := ""
		if src, ok := sc.FindFieldByID(f.SourceID()); ok {
			rt, st = f.Transform.ResultType(src.Type), src.Type
			col, _ = sc.FindColumnName(f.SourceID())
		}
		r.result = append(r.result, rt)
		r.columns = append(r.columns, col)
		r.types = append(r.types, st)
	}
	return r
}

func (r *partitionRenderer) render(p map[int]any) string {
	if len(r.names) == 0 {
		return ""
	}
	var sb strings.Builder
	for i, name := range r.names {
		if i > 0 {
			sb.WriteByte('/')
		}
		sb.WriteString(name)
		sb.WriteByte('=')
		v, ok := p[r.ids[i]]
		switch {
		case !ok || v == nil:
			sb.WriteString("null")
		case r.result[i] != nil:
			sb.WriteString(r.trans[i].ToHumanStrType(r.result[i], v))
		default:
			fmt.Fprint(&sb, v)
		}
	}
	return sb.String()
}

// values is a partition tuple as diff.PartitionValue, from the same tuple
// render reads: the exact value behind each field's human form.
func (r *partitionRenderer) values(p map[int]any) []diff.PartitionValue {
	if len(r.names) == 0 {
		return nil
	}
	out := make([]diff.PartitionValue, len(r.names))
	for i, name := range r.names {
		pv := diff.PartitionValue{Field: name, Column: r.columns[i], Transform: r.trans[i].String()}
		if r.types[i] != nil {
			pv.Type = r.types[i].String()
		}
		v, ok := p[r.ids[i]]
		switch {
		case !ok || v == nil:
			pv.Null = true
		default:
			if r.result[i] != nil {
				pv.Value = r.trans[i].ToHumanStrType(r.result[i], v)
			} else {
				pv.Value = fmt.Sprint(v)
			}
			pv.Ordinal = partitionOrdinal(v)
		}
		out[i] = pv
	}
	return out
}

// partitionOrdinal is the integer behind a partition value that has one:
// a time transform's result, a date's days, a timestamp's microseconds.
func partitionOrdinal(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	case iceberg.Date:
		return int64(x)
	case iceberg.Timestamp:
		return int64(x)
	case iceberg.TimestampNano:
		return int64(x)
	}
	return 0
}

// snapshotAggregate is the streamed summary of one snapshot's live files.
type snapshotAggregate struct {
	parts     map[partKey]*diff.PartitionStats
	files     diff.FileStats
	manifests diff.ManifestStats
	hist      sizeHistogram
	// partOctaves counts each partition's data file sizes, for inspect
	// -partitions only (nil otherwise: 512 bytes a partition is not worth
	// it to a plan).
	partOctaves map[partKey]*octaveCounts
	// escapedGlobal counts the equality deletes of an unpartitioned spec
	// named by escaped file: URIs: they apply to every partition, so each
	// partition counts them (finish). escapedExample is the first live
	// file named so (diff.TableState.EscapedFileURI).
	escapedGlobal  int64
	escapedExample string
	// storage is the table location's (store.Storage): its IO serves no
	// other. foreignGlobal and foreignExample are escapedGlobal and
	// escapedExample for files on another storage
	// (diff.PartitionStats.ForeignFiles).
	storage        string
	foreignGlobal  int64
	foreignExample string
}

// escapedPath reports a location iceberg-go opens under another name than
// the engines that wrote it (store.LiteralKey).
func escapedPath(p string) bool {
	_, ok := store.LiteralKey(p)
	return ok
}

// escapedFileURI counts a live file a rewrite of its partition would read
// when a file: URI whose path changes when decoded names it
// (diff.PartitionStats.EscapedFileURIs); it reports whether it did.
func (a *snapshotAggregate) escapedFileURI(path string) bool {
	if !escapedPath(path) {
		return false
	}
	if a.escapedExample == "" {
		a.escapedExample = path
	}
	return true
}

// foreignFile counts a live file a rewrite of its partition would read
// that is on another storage than the table location's: the table's IO
// cannot open it (diff.PartitionStats.ForeignFiles); it reports whether it
// did.
func (a *snapshotAggregate) foreignFile(path string) bool {
	if store.Storage(path) == a.storage {
		return false
	}
	if a.foreignExample == "" {
		a.foreignExample = path
	}
	return true
}

type partKey struct {
	spec int
	part string
}

func (a *snapshotAggregate) part(k partKey) *diff.PartitionStats {
	p, ok := a.parts[k]
	if !ok {
		p = &diff.PartitionStats{SpecID: k.spec, Partition: k.part}
		a.parts[k] = p
	}
	return p
}

func (a *snapshotAggregate) partitions() []diff.PartitionStats {
	out := make([]diff.PartitionStats, 0, len(a.parts))
	for _, p := range a.parts {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(x, y diff.PartitionStats) int {
		return cmp.Or(cmp.Compare(x.SpecID, y.SpecID), cmp.Compare(x.Partition, y.Partition))
	})
	return out
}

// deleteIndex counts, per data file, the delete files that apply to it, as
// Iceberg's scan planning assigns them:
//   - deletion vectors and path-scoped position deletes (referenced_data_file
//     set) apply to exactly that file, and their record counts are the file's
//     deleted rows;
//   - partition-scoped position deletes apply to data files of the same spec
//     and partition with a data sequence number <= the delete's;
//   - equality deletes apply to the same spec and partition with a strictly
//     lower data sequence number, or to every partition when written with an
//     unpartitioned spec (global equality deletes).
//
// It holds one small record per delete file, not per data file. What we
// approximate: a position delete that covers several data files (its
// file_path bounds differ) counts against every data file of its partition
// with a lower sequence number, as Iceberg's planning also assigns it, even
// if it deletes nothing in some of them; and equality deletes of an
// unpartitioned spec are applied across specs without checking field ids.
// Both can only make a file a candidate earlier.
type deleteIndex struct {
	fileScoped   map[string]fileDeletes
	posByPart    map[partKey][]int64
	eqByPart     map[partKey][]int64
	globalEq     []int64
	unpartitions map[int]bool
}

type fileDeletes struct {
	files int
	rows  int64
}

func (d *deleteIndex) seal() {
	for _, v := range d.posByPart {
		slices.Sort(v)
	}
	for _, v := range d.eqByPart {
		slices.Sort(v)
	}
	slices.Sort(d.globalEq)
}

// countFor returns the number of delete files applying to a data file and
// the rows its file-scoped deletes remove.
func (d *deleteIndex) countFor(k partKey, path string, dataSeq int64) (int, int64) {
	n := 0
	var rows int64
	if fd, ok := d.fileScoped[path]; ok {
		n += fd.files
		rows += fd.rows
	}
	// position deletes: seq >= dataSeq
	if v := d.posByPart[k]; len(v) > 0 {
		i := sort.Search(len(v), func(i int) bool { return v[i] >= dataSeq })
		n += len(v) - i
	}
	// equality deletes: seq > dataSeq
	if v := d.eqByPart[k]; len(v) > 0 && !d.unpartitions[k.spec] {
		i := sort.Search(len(v), func(i int) bool { return v[i] > dataSeq })
		n += len(v) - i
	}
	if v := d.globalEq; len(v) > 0 {
		i := sort.Search(len(v), func(i int) bool { return v[i] > dataSeq })
		n += len(v) - i
	}
	return n, rows
}

// posDeleteFilePathID is the field id of file_path in position delete files.
const posDeleteFilePathID = 2147483546

// referencedDataFile is the one data file a position delete applies to: the
// referenced_data_file field (v3), else equal lower and upper bounds of its
// file_path column (as Java's ContentFileUtil.referencedDataFile); "" when
// it may cover several.
func referencedDataFile(df iceberg.DataFile) string {
	if df.ContentType() != iceberg.EntryContentPosDeletes {
		return ""
	}
	if r := df.ReferencedDataFile(); r != nil {
		return *r
	}
	lo, hi := df.LowerBoundValues()[posDeleteFilePathID], df.UpperBoundValues()[posDeleteFilePathID]
	if lo != nil && string(lo) == string(hi) {
		return string(lo)
	}
	return ""
}

// aggregateSnapshot streams the manifests of snap (one walk of that
// snapshot alone: inspect, and the fallbacks), aggregating every live data
// file into its partition without keeping it. Manifest entries are read
// with iceberg-go's projection, which skips column statistics we do not
// need. onCandidate, when set, is called for every data file the
// compaction selection picks (compactionInputs uses it instead of holding
// a scan task per file). A plan's observation aggregates on the walk that
// serves its other consumers too.
func aggregateSnapshot(ctx context.Context, fsys iceio.IO, md table.Metadata, snap *table.Snapshot, sel diff.CompactionSelection, now time.Time, onCandidate func(path string, specID int, partition string)) (*snapshotAggregate, error) {
	return aggregateInto(ctx, fsys, md, snap, newAggregator(md, sel, now), onCandidate)
}

// aggregateInto is aggregateSnapshot into an aggregator the caller set up.
func aggregateInto(ctx context.Context, fsys iceio.IO, md table.Metadata, snap *table.Snapshot, a *aggregator, onCandidate func(path string, specID int, partition string)) (*snapshotAggregate, error) {
	if a.err != nil {
		return nil, fmt.Errorf("compaction.where: %w", a.err)
	}
	var agg reach.Aggregate = a
	if onCandidate != nil {
		agg = candidates{a, onCandidate}
	}
	err := reach.Walk(ctx, reach.Spec{Meta: md, FS: fsys, Snapshots: []int64{snap.SnapshotID}, Aggregate: agg, AggregateSnapshot: snap.SnapshotID})
	if err != nil {
		return nil, err
	}
	if a.err != nil {
		return nil, fmt.Errorf("compaction.where: %w", a.err)
	}
	return a.finish(), nil
}

// candidates is an aggregator that also reports each compaction candidate.
type candidates struct {
	*aggregator
	on func(path string, specID int, partition string)
}

func (c candidates) DataEntry(e iceberg.ManifestEntry) (reach.Group, bool) {
	g, ok := c.aggregator.DataEntry(e)
	if ok {
		c.on(e.DataFile().FilePath(), g.Spec, g.Partition)
	}
	return g, ok
}

// aggregator folds one snapshot's live manifest entries into a
// snapshotAggregate (a reach.Aggregate): first every delete entry
// (DeleteEntry), then SealDeletes, then every data entry (DataEntry), which
// needs the delete index to count the deletes that apply to each file.
type aggregator struct {
	md        table.Metadata
	sel       diff.CompactionSelection
	agg       *snapshotAggregate
	idx       *deleteIndex
	renderers map[int]*partitionRenderer
	// compacts says the policy compacts: only then are each candidate's size
	// and path kept (PartitionStats.CandidateSizes, which diff packs into
	// groups, and CandidatePaths, the files the plan's groups name).
	// On a table of millions of small files the sizes were the largest
	// thing an orphan-only plan held (8 bytes a file).
	compacts bool
	// where is the policy's compaction.where (nil when unset): a file of a
	// partition it excludes still counts in the partition's stats but is
	// not a candidate, as providers/compaction plans it. inWhere caches its
	// answer per partition; err is the first parse, bind or evaluation
	// error, which fails the table's observation.
	where   *compaction.WhereFilter
	inWhere map[partKey]bool
	err     error
	// stale picks the files a sort or zorder rewrite takes for their
	// order (staleSortRule); nil for binpack.
	stale *compaction.StaleSort
}

// now is the clock of sel.Where (current_date, now()).
func newAggregator(md table.Metadata, sel diff.CompactionSelection, now time.Time) *aggregator {
	a := &aggregator{
		md:  md,
		sel: sel,
		agg: &snapshotAggregate{parts: map[partKey]*diff.PartitionStats{}, storage: store.Storage(md.Location())},
		idx: &deleteIndex{
			fileScoped:   map[string]fileDeletes{},
			posByPart:    map[partKey][]int64{},
			eqByPart:     map[partKey][]int64{},
			unpartitions: map[int]bool{},
		},
		renderers: map[int]*partitionRenderer{},
		compacts:  true,
		stale:     staleSortRule(md, sel),
	}
	for _, spec := range md.PartitionSpecs() {
		if spec.IsUnpartitioned() {
			a.idx.unpartitions[spec.ID()] = true
		}
	}
	a.agg.files.MinSize = -1
	if strings.TrimSpace(sel.Where) != "" {
		expr, err := compaction.ParseWhere(sel.Where, now)
		if err == nil {
			a.where, err = compaction.NewWhereFilter(md, expr)
		}
		if err != nil {
			a.err = fmt.Errorf("%q: %w", sel.Where, err)
		}
		a.inWhere = map[partKey]bool{}
	}
	return a
}

// mayMatch reports whether the policy's where may select df's partition.
func (a *aggregator) mayMatch(k partKey, df iceberg.DataFile) bool {
	if a.where == nil {
		return a.err == nil
	}
	ok, seen := a.inWhere[k]
	if !seen {
		var err error
		if ok, err = a.where.MayMatch(k.spec, df.Partition()); err != nil && a.err == nil {
			a.err = fmt.Errorf("%q: %w", a.sel.Where, err)
		}
		a.inWhere[k] = ok
	}
	return ok
}

func (a *aggregator) key(df iceberg.DataFile) partKey {
	specID := int(df.SpecID())
	r, ok := a.renderers[specID]
	if !ok {
		r = newPartitionRenderer(a.md.PartitionSpecByID(specID), a.md.CurrentSchema())
		a.renderers[specID] = r
	}
	return partKey{spec: specID, part: r.render(df.Partition())}
}

// Manifest counts one manifest of the snapshot's manifest list.
func (a *aggregator) Manifest(m iceberg.ManifestFile) {
	a.agg.manifests.Count++
	a.agg.manifests.Bytes += m.Length()
	data := m.ManifestContent() != iceberg.ManifestContentDeletes
	if data {
		a.agg.manifests.DataCount++
	} else {
		a.agg.manifests.DeleteCount++
	}
	// One small record per manifest (there are far fewer manifests than
	// files), in manifest-list order: diff predicts from them what
	// rewrite_manifests leaves and what the plan's compaction adds, so a
	// plan never asks for a rewrite that cannot merge or needs a second
	// apply (issue 14, item 2).
	a.agg.manifests.Files = append(a.agg.manifests.Files, diff.ManifestInfo{
		SpecID: int(m.PartitionSpecID()), Data: data, Length: m.Length(),
	})
}

// DeleteEntry counts a live delete file and indexes it for DataEntry.
func (a *aggregator) DeleteEntry(entry iceberg.ManifestEntry) {
	df := entry.DataFile()
	k := a.key(df)
	p := a.agg.part(k)
	// Several deletion vectors share one Puffin file; each counts its own
	// blob, not the whole file again.
	size := df.FileSizeBytes()
	if cs := df.ContentSizeInBytes(); df.FileFormat() == iceberg.PuffinFile && cs != nil {
		size = *cs
	}
	p.DeleteFiles++
	p.DeleteBytes += size
	files := &a.agg.files
	files.DeleteFiles++
	files.DeleteBytes += size
	seq := entry.SequenceNum()
	idx := a.idx
	if a.agg.escapedFileURI(df.FilePath()) {
		if df.ContentType() == iceberg.EntryContentEqDeletes && idx.unpartitions[k.spec] {
			a.agg.escapedGlobal++
		} else {
			p.EscapedFileURIs++
		}
	}
	if a.agg.foreignFile(df.FilePath()) {
		if df.ContentType() == iceberg.EntryContentEqDeletes && idx.unpartitions[k.spec] {
			a.agg.foreignGlobal++
		} else {
			p.ForeignFiles++
		}
	}
	switch {
	case df.ContentType() == iceberg.EntryContentEqDeletes:
		files.EqualityDeletes++
		if idx.unpartitions[k.spec] {
			idx.globalEq = append(idx.globalEq, seq)
		} else {
			idx.eqByPart[k] = append(idx.eqByPart[k], seq)
		}
	case df.FileFormat() == iceberg.PuffinFile || referencedDataFile(df) != "":
		if df.FileFormat() == iceberg.PuffinFile {
			files.DeletionVectors++
		} else {
			files.PositionDeletes++
		}
		ref := referencedDataFile(df)
		fd := idx.fileScoped[ref]
		fd.files++
		fd.rows += df.Count()
		idx.fileScoped[ref] = fd
	default:
		files.PositionDeletes++
		idx.posByPart[k] = append(idx.posByPart[k], seq)
	}
}

func (a *aggregator) SealDeletes() { a.idx.seal() }

// DataEntry counts a live data file; it returns the file's partition and
// whether the compaction selection picks it.
func (a *aggregator) DataEntry(entry iceberg.ManifestEntry) (reach.Group, bool) {
	df := entry.DataFile()
	size := df.FileSizeBytes()
	k := a.key(df)
	p := a.agg.part(k)
	if p.DataFiles == 0 && a.compacts {
		p.Values = a.renderers[k.spec].values(df.Partition())
	}
	p.DataFiles++
	p.DataBytes += size
	p.Records += df.Count()
	if a.agg.escapedFileURI(df.FilePath()) {
		p.EscapedFileURIs++
	}
	if a.agg.foreignFile(df.FilePath()) {
		p.ForeignFiles++
	}
	files := &a.agg.files
	if size < a.sel.Min {
		p.SmallFiles++
		files.SmallFiles++
	}
	nDel, delRows := a.idx.countFor(k, df.FilePath(), entry.SequenceNum())
	stale := a.stale.Stale(df)
	candidate := (stale || a.sel.IsCandidate(size, nDel, df.Count(), delRows)) && a.mayMatch(k, df)
	if candidate {
		if stale {
			p.StaleSortFiles++
		}
		if a.compacts {
			p.CandidateSizes = append(p.CandidateSizes, size)
			p.CandidatePaths = append(p.CandidatePaths, df.FilePath())
		}
		p.CandidateBytes += size
		// The reader inherits first_row_id from the manifest list; a v3
		// file still without one cannot be rewritten (compaction.checkGroup),
		// and the plan says so instead of apply failing on it.
		if a.md.Version() >= 3 && df.FirstRowID() == nil {
			p.NoRowIDCandidates++
		}
	}
	files.DataFiles++
	files.DataBytes += size
	files.Records += df.Count()
	if files.MinSize < 0 || size < files.MinSize {
		files.MinSize = size
	}
	files.MaxSize = max(files.MaxSize, size)
	a.agg.hist.add(size)
	if a.agg.partOctaves != nil {
		o := a.agg.partOctaves[k]
		if o == nil {
			o = new(octaveCounts)
			a.agg.partOctaves[k] = o
		}
		o.add(size)
	}
	return reach.Group{Spec: k.spec, Partition: k.part}, candidate
}

func (a *aggregator) finish() *snapshotAggregate {
	if n := a.agg.escapedGlobal; n > 0 {
		for _, p := range a.agg.parts {
			p.EscapedFileURIs += n
		}
		a.agg.escapedGlobal = 0 // finish may run twice
	}
	if n := a.agg.foreignGlobal; n > 0 {
		for _, p := range a.agg.parts {
			p.ForeignFiles += n
		}
		a.agg.foreignGlobal = 0
	}
	files := &a.agg.files
	if files.MinSize < 0 {
		files.MinSize = 0
	}
	files.MedianSize = a.agg.hist.median(files.MinSize, files.MaxSize)
	return a.agg
}

// staleSortRule is the rule by which a rewrite with sel's strategy and sort
// order takes files for their order on a table of md
// (compaction.StaleSort); nil for binpack, or when the policy's order does
// not fit the table's schema (the plan refuses it), and under a
// compaction.engine: an engine's rewrite (Spark's rewrite_data_files)
// selects files by size alone, so stale files in a delegated partition
// would be planned again after every apply; a policy with an engine keeps
// the size rules for every partition.
func staleSortRule(md table.Metadata, sel diff.CompactionSelection) *compaction.StaleSort {
	if sel.Engine != "" && sel.Engine != "local" {
		return nil
	}
	var order *table.SortOrder
	if sel.Strategy == string(compaction.Sort) && len(sel.SortOrder) > 0 {
		o, err := buildSortOrder(md.CurrentSchema(), sel.SortOrder)
		if err != nil {
			return nil
		}
		order = &o
	}
	return compaction.NewStaleSort(md, compaction.Strategy(sel.Strategy), order)
}
