package compact

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/tablemeta"
	"github.com/icewright/icewright/providers/tablestate"
)

// ObserveTable fills a TableState from a loaded table. sel decides which data
// files are compaction candidates (diff.SelectionFor of the policy); now is
// the clock of sel.Where's current_date and now().
func ObserveTable(ctx context.Context, tbl *table.Table, address string, sel diff.CompactionSelection, now time.Time) (*diff.TableState, error) {
	st, _, err := ObserveTableSizes(ctx, tbl, address, sel, now, false)
	return st, err
}

// ObserveTableSizes is ObserveTable that also returns the aggregate, whose
// size histogram inspect draws; perPartition also counts each partition's
// file sizes (Aggregate.partOctaves). The aggregate is nil for a
// table without a current snapshot.
func ObserveTableSizes(ctx context.Context, tbl *table.Table, address string, sel diff.CompactionSelection, now time.Time, perPartition bool) (*diff.TableState, *Aggregate, error) {
	st := tablestate.Metadata(tbl, address, new(compaction.SpecCheck))
	md := tbl.Metadata()
	cur := md.CurrentSnapshot()
	if cur == nil {
		return st, nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("open table storage: %w", err)
	}
	a := NewAggregator(md, sel, now)
	if perPartition {
		a.agg.partOctaves = map[partKey]*octaveCounts{}
	}
	agg, err := AggregateInto(ctx, fsys, md, cur, a, nil)
	if err != nil {
		return nil, nil, err
	}
	agg.Fill(st)
	return st, agg, nil
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

// Aggregate is the streamed summary of one snapshot's live files.
type Aggregate struct {
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
func (a *Aggregate) escapedFileURI(path string) bool {
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
func (a *Aggregate) foreignFile(path string) bool {
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

func (a *Aggregate) part(k partKey) *diff.PartitionStats {
	p, ok := a.parts[k]
	if !ok {
		p = &diff.PartitionStats{SpecID: k.spec, Partition: k.part}
		a.parts[k] = p
	}
	return p
}

func (a *Aggregate) partitions() []diff.PartitionStats {
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
func aggregateSnapshot(ctx context.Context, fsys iceio.IO, md table.Metadata, snap *table.Snapshot, sel diff.CompactionSelection, now time.Time, onCandidate func(path string, specID int, partition string)) (*Aggregate, error) {
	return AggregateInto(ctx, fsys, md, snap, NewAggregator(md, sel, now), onCandidate)
}

// UseDecoder has AggregateInto's walk decode manifests with d (a plan's
// observation chooses reach.DecodeFast); iceberg-go's reader otherwise.
func (a *Aggregator) UseDecoder(d reach.Decoder) { a.decoder = d }

// AggregateInto is aggregateSnapshot into an Aggregator the caller set up.
func AggregateInto(ctx context.Context, fsys iceio.IO, md table.Metadata, snap *table.Snapshot, a *Aggregator, onCandidate func(path string, specID int, partition string)) (*Aggregate, error) {
	if a.err != nil {
		return nil, fmt.Errorf("compaction.where: %w", a.err)
	}
	var agg reach.Aggregate = a
	if onCandidate != nil {
		agg = candidates{a, onCandidate}
	}
	err := reach.Walk(ctx, reach.Spec{Meta: md, FS: fsys, Snapshots: []int64{snap.SnapshotID}, Aggregate: agg, AggregateSnapshot: snap.SnapshotID, Decoder: a.decoder})
	if err != nil {
		return nil, err
	}
	if a.err != nil {
		return nil, fmt.Errorf("compaction.where: %w", a.err)
	}
	return a.Finish(), nil
}

// candidates is an aggregator that also reports each compaction candidate.
type candidates struct {
	*Aggregator
	on func(path string, specID int, partition string)
}

func (c candidates) DataEntry(manifest string, e iceberg.ManifestEntry) (reach.Group, bool) {
	g, ok := c.Aggregator.DataEntry(manifest, e)
	if ok {
		c.on(e.DataFile().FilePath(), g.Spec, g.Partition)
	}
	return g, ok
}

// Aggregator folds one snapshot's live manifest entries into a
// Aggregate (a reach.Aggregate): first every delete entry
// (DeleteEntry), then SealDeletes, then every data entry (DataEntry), which
// needs the delete index to count the deletes that apply to each file.
type Aggregator struct {
	// decoder decodes AggregateInto's walk (UseDecoder).
	decoder   reach.Decoder
	md        table.Metadata
	sel       diff.CompactionSelection
	agg       *Aggregate
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
	// manifestAt is each current manifest's index in
	// ManifestStats.Files, by path: which one lists a candidate
	// (PartitionStats.CandidateManifests).
	manifestAt map[string]int
}

// now is the clock of sel.Where (current_date, now()).
func NewAggregator(md table.Metadata, sel diff.CompactionSelection, now time.Time) *Aggregator {
	a := &Aggregator{
		md:  md,
		sel: sel,
		agg: &Aggregate{parts: map[partKey]*diff.PartitionStats{}, storage: store.Storage(md.Location())},
		idx: &deleteIndex{
			fileScoped:   map[string]fileDeletes{},
			posByPart:    map[partKey][]int64{},
			eqByPart:     map[partKey][]int64{},
			unpartitions: map[int]bool{},
		},
		renderers:  map[int]*partitionRenderer{},
		compacts:   true,
		manifestAt: map[string]int{},
		stale:      staleSortRule(md, sel),
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
func (a *Aggregator) mayMatch(k partKey, df iceberg.DataFile) bool {
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

func (a *Aggregator) key(df iceberg.DataFile) partKey {
	specID := int(df.SpecID())
	r, ok := a.renderers[specID]
	if !ok {
		r = newPartitionRenderer(a.md.PartitionSpecByID(specID), a.md.CurrentSchema())
		a.renderers[specID] = r
	}
	return partKey{spec: specID, part: r.render(df.Partition())}
}

// ManifestList records the size of the snapshot's manifest list.
func (a *Aggregator) ManifestList(size int64) { a.agg.manifests.ListBytes = size }

// Manifest counts one manifest of the snapshot's manifest list.
func (a *Aggregator) Manifest(m iceberg.ManifestFile) {
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
	live := int64(-1) // unknown: a v1 list may leave the counts out
	if m.AddedDataFiles() >= 0 && m.ExistingDataFiles() >= 0 {
		live = int64(m.AddedDataFiles()) + int64(m.ExistingDataFiles())
	}
	a.manifestAt[m.FilePath()] = len(a.agg.manifests.Files)
	a.agg.manifests.Files = append(a.agg.manifests.Files, diff.ManifestInfo{
		SpecID: int(m.PartitionSpecID()), Data: data, Length: m.Length(), LiveFiles: live,
	})
}

// DeleteEntry counts a live delete file and indexes it for DataEntry.
func (a *Aggregator) DeleteEntry(entry iceberg.ManifestEntry) {
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

func (a *Aggregator) SealDeletes() { a.idx.seal() }

// DataEntry counts a live data file; it returns the file's partition and
// whether the compaction selection picks it.
func (a *Aggregator) DataEntry(manifest string, entry iceberg.ManifestEntry) (reach.Group, bool) {
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
		p.SmallBytes += size
		files.SmallBytes += size
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
			at, ok := a.manifestAt[manifest]
			if !ok {
				at = -1
			}
			p.CandidateManifests = append(p.CandidateManifests, at)
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

// Finish completes the aggregate once every entry is in (it may run
// twice).
func (a *Aggregator) Finish() *Aggregate {
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
		o, err := tablemeta.BuildSortOrder(md.CurrentSchema(), sel.SortOrder)
		if err != nil {
			return nil
		}
		order = &o
	}
	return compaction.NewStaleSort(md, compaction.Strategy(sel.Strategy), order)
}

// KeepCandidates says whether the policy compacts: only then are each
// candidate's size and path kept (Aggregator.compacts).
func (a *Aggregator) KeepCandidates(keep bool) { a.compacts = keep }

// Err is the first error of compaction.where (parse, bind or evaluation),
// which fails the table's observation.
func (a *Aggregator) Err() error { return a.err }

// Fill puts the aggregate into st: partitions, file and manifest counts,
// the first escaped and foreign file.
func (a *Aggregate) Fill(st *diff.TableState) {
	st.Partitions = a.partitions()
	st.Files = a.files
	st.Manifests = a.manifests
	st.EscapedFileURI = a.escapedExample
	st.ForeignFile = a.foreignExample
}

// SizeHistogram is the live data files' sizes in octaves, against target
// (inspect).
func (a *Aggregate) SizeHistogram(target int64) []diff.SizeBucket {
	return a.hist.octaves().buckets(target)
}

// PartitionHistograms are each partition's SizeHistogram, by spec and
// partition; none unless ObserveTableSizes was asked for them.
func (a *Aggregate) PartitionHistograms(target int64) []diff.PartitionHistogram {
	var out []diff.PartitionHistogram
	for k, o := range a.partOctaves {
		out = append(out, diff.PartitionHistogram{SpecID: k.spec, Partition: k.part, Buckets: o.buckets(target)})
	}
	slices.SortFunc(out, func(a, b diff.PartitionHistogram) int {
		return cmp.Or(cmp.Compare(a.SpecID, b.SpecID), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
