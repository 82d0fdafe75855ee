package reach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/manifestread"
)

// Reference categories: what a walked file is to its table, as counted in
// diff.OrphanScan.Categories. The walk reaches the first six; the orphan
// scan adds the metadata files and version hints itself.
const (
	CategoryManifestList        = "manifest_list"
	CategoryManifest            = "manifest"
	CategoryData                = "data"
	CategoryDelete              = "delete" // position, equality deletes and deletion vectors
	CategoryStatistics          = "statistics"
	CategoryPartitionStatistics = "partition_statistics"
	CategoryMetadata            = "metadata"
	CategoryVersionHint         = "version_hint"
)

// DefaultSpillLimit is how many records (listed files, references, reached
// files) a sorter of the orphan scan and of expiry holds in memory before it
// sorts them out to disk: about 50 MB each for typical object-store paths.
const DefaultSpillLimit = 200_000

// Spec says what one Walk reads and who consumes it. A plan needs a table's
// manifests several ways at once: the current snapshot's aggregate, the
// orphan scan's referenced set (every snapshot, DELETED entries too) and
// the expiry estimate (every snapshot, live entries). Opening a manifest
// costs more than reading it (iceberg-go parses and resolves the Avro
// header schema of every file it opens: 40% of a plan's CPU when each
// consumer walked on its own), so Walk reads every manifest list once and
// every distinct manifest once, and hands each file to every consumer; a
// plan's walk decodes with manifestread, which parses each distinct schema
// once (Decoder).
type Spec struct {
	Meta table.Metadata
	FS   iceio.IO
	// Snapshots are the snapshots walked, each of which must be in Meta
	// (AllSnapshots for every one); none walks nothing.
	Snapshots []int64
	// Old marks the snapshots whose files are File.Old; nil marks none.
	Old func(snapshotID int64) bool
	// Consumers each get every file the walked snapshots reach.
	Consumers []Consumer
	// Aggregate, when set, folds the live entries of AggregateSnapshot,
	// which must be one of the walked snapshots.
	Aggregate         Aggregate
	AggregateSnapshot int64
	// Decoder chooses who decodes the manifests. The zero value is
	// iceberg-go's own reader: a walk whose answer decides a deletion
	// (apply's re-check of a sweep, expiry's reachable sets, the purge,
	// other tables' references, a failed commit's staged files) or checks
	// a commit keeps it, so a bug of ours can make a plan wrong, which
	// apply's re-check then refuses, but never delete a live file.
	Decoder Decoder
}

// Decoder is who decodes a walk's manifests.
type Decoder int

const (
	// DecodeVerified is iceberg-go's reader (iceberg.EntriesWithProjection).
	DecodeVerified Decoder = iota
	// DecodeFast is manifestread's: the schema of each distinct manifest
	// (and manifest list) header parsed once, only the fields the
	// consumers read decoded. For the plan's read-only walks. A manifest it
	// cannot read, or whose delete bounds the aggregate needs, and a list
	// it cannot read (a v3 list), go to iceberg-go's reader.
	DecodeFast
)

// DecodeCounts counts the manifests a walk decoded, by decoder (tests:
// which reader a path used). CountDecodes attaches one to a context.
type DecodeCounts struct {
	Fast, Verified, Fallback atomic.Int64
	// Skipped counts the manifests a fast walk did not read, their list
	// entry saying they hold no live file (onlyDeleted).
	Skipped atomic.Int64
	// FastLists and VerifiedLists count the manifest lists read by
	// manifestread and by iceberg-go.
	FastLists, VerifiedLists atomic.Int64
}

type decodeCountsKey struct{}

// CountDecodes returns ctx counting into c the manifests every walk under
// it decodes.
func CountDecodes(ctx context.Context, c *DecodeCounts) context.Context {
	return context.WithValue(ctx, decodeCountsKey{}, c)
}

// Consumer takes the files of a walk.
type Consumer struct {
	// File is called with every file, from the walking goroutine only (no
	// locking needed): manifest lists first, then statistics files, then
	// the delete manifests, their entries, the data manifests and their
	// entries (manifests in order of first listing, entries in manifest
	// order and within a manifest in file order). A manifest shared by several
	// snapshots is visited once; a data file that several manifests name,
	// once for each. For a manifest, returning SkipEntries says its entries
	// are not wanted.
	File func(File) error
	// Listed, when set, is told which walked snapshot lists which manifest
	// (by File.Ordinal).
	Listed func(manifest int, snapshotID int64)
	// WithDeleted also hands over files that a manifest names only in a
	// DELETED entry (File.Deleted): a snapshot cannot read them, but a
	// reader of an older one may.
	WithDeleted bool
	// ListSizes reads each manifest list's size from storage (one stat
	// each, when the IO can stat) where reading the list did not give it;
	// otherwise it is the size reading it gave (its opened file's), or 0.
	ListSizes bool
}

// SkipEntries, returned by Consumer.File for a manifest, skips its entries
// for that consumer.
var SkipEntries = errors.New("skip the manifest's entries")

// File is one file a walk reaches.
type File struct {
	Path     string // as written in the metadata
	Size     int64  // from the metadata (manifest lengths, file_size_in_bytes); see Consumer.ListSizes
	Category string
	// Snapshot is, for a manifest list or a statistics file, its
	// snapshot; for a manifest, the snapshot that added it; for a data or
	// delete file, its entry's snapshot.
	Snapshot int64
	// Ordinal numbers the walk's manifests: a manifest's and its entries'.
	Ordinal int
	// Old: reached from a snapshot Spec.Old marks (a manifest when any
	// snapshot listing it is; an entry when its manifest is).
	Old bool
	// Deleted and Added are the entry's status (data and delete files).
	Deleted, Added bool
	// Group is, for a live data file of the aggregated snapshot that the
	// Aggregate makes a compaction candidate, its group's GroupTag.
	Group string
	// Entry is, for a data or delete file, its manifest entry (record
	// count, partition, spec id, content); nil for the other categories.
	Entry iceberg.ManifestEntry
}

// Aggregate folds the live entries of one snapshot: Manifest for each
// manifest of its list, DeleteEntry for every delete file, then
// SealDeletes, then DataEntry for every data file, in manifest order and
// within a manifest in file order (the serial read's sequence).
type Aggregate interface {
	// ManifestList is the size of the snapshot's manifest list (0: not
	// known), before its manifests.
	ManifestList(size int64)
	Manifest(m iceberg.ManifestFile)
	DeleteEntry(e iceberg.ManifestEntry)
	SealDeletes()
	// DataEntry returns the file's compaction group and whether the
	// selection makes it a candidate; manifest is the path of the
	// manifest that lists it.
	DataEntry(manifest string, e iceberg.ManifestEntry) (Group, bool)
}

// Group is a compaction group: a partition of one spec.
type Group struct {
	Spec      int
	Partition string
}

// GroupTag names a compaction group in File.Group and the records built
// from it.
func GroupTag(spec int, partition string) string {
	return strconv.Itoa(spec) + "\x00" + partition
}

// Walk reads what the snapshots of w reach: their manifest lists,
// manifests, data and delete files (position, equality, deletion vectors),
// and the statistics and partition-statistics files recorded for them. It
// does not visit metadata.json files (they belong to the table, not to a
// snapshot). Any error, a consumer's included, stops the walk and is
// returned: a partial walk is never reported as done.
func Walk(ctx context.Context, w Spec) error {
	snaps, err := w.snapshots()
	if err != nil {
		return err
	}
	ms, walked, err := w.listManifests(ctx, snaps)
	if err != nil {
		return err
	}
	if err := w.statisticsFiles(walked); err != nil {
		return err
	}
	withDeleted := false
	for _, c := range w.Consumers {
		withDeleted = withDeleted || c.WithDeleted
	}
	e := entryWalk{w: w, ms: ms, skip: make([][]bool, len(w.Consumers)), tags: groupTags{}, withDeleted: withDeleted}
	// Delete manifests first: the aggregate counts the deletes that apply
	// to each data file, so it must have seen every delete file before the
	// first data file.
	for _, deletes := range []bool{true, false} {
		if !deletes && w.Aggregate != nil {
			w.Aggregate.SealDeletes()
		}
		if err := e.read(ctx, deletes); err != nil {
			return err
		}
	}
	return nil
}

// walkManifest is one distinct manifest of the walked snapshots.
type walkManifest struct {
	m       iceberg.ManifestFile
	old     bool // in the list of a snapshot Old marks
	current bool // in AggregateSnapshot's list
}

// listManifests hands each snapshot's manifest list to the consumers and
// returns the distinct manifests of all, in the order first listed, and
// the snapshots walked.
func (w Spec) listManifests(ctx context.Context, snaps []table.Snapshot) ([]walkManifest, map[int64]bool, error) {
	var ms []walkManifest
	ord := map[string]int{}
	var stat iceio.StatIO
	for _, c := range w.Consumers {
		if c.ListSizes && stat == nil {
			stat, _ = w.FS.(iceio.StatIO)
		}
	}
	walked := make(map[int64]bool, len(snaps))
	for _, snap := range snaps {
		walked[snap.SnapshotID] = true
		old := w.Old != nil && w.Old(snap.SnapshotID)
		list, read, err := w.manifests(ctx, snap)
		if err != nil {
			return nil, nil, fmt.Errorf("read manifest list of snapshot %d: %w", snap.SnapshotID, err)
		}
		if snap.ManifestList != "" {
			size := read // free: the opened file said it
			if stat != nil && size <= 0 {
				if fi, err := stat.Stat(snap.ManifestList); err == nil {
					size = fi.Size()
				}
			}
			f := File{Path: snap.ManifestList, Size: size, Category: CategoryManifestList, Snapshot: snap.SnapshotID, Old: old}
			if _, err := w.file(f, nil); err != nil {
				return nil, nil, err
			}
		}
		current := w.Aggregate != nil && snap.SnapshotID == w.AggregateSnapshot
		if current {
			w.Aggregate.ManifestList(read)
		}
		for _, m := range list {
			if current {
				w.Aggregate.Manifest(m)
			}
			i, ok := ord[m.FilePath()]
			if !ok {
				i = len(ms)
				ord[m.FilePath()] = i
				ms = append(ms, walkManifest{m: m})
			}
			ms[i].old = ms[i].old || old
			ms[i].current = ms[i].current || current
			for _, c := range w.Consumers {
				if c.Listed != nil {
					c.Listed(i, snap.SnapshotID)
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
	}
	return ms, walked, nil
}

// manifests reads snap's manifest list: with manifestread's ReadList in a
// fast walk (its schema parsed once per distinct schema), iceberg-go's
// reader otherwise and for whatever ReadList does not read (a v3 list, an
// embedded v1 manifest list, an error). size is the list's size as the
// opened file says it (no request: a local fstat, an object store
// reader's attributes), or 0.
func (w Spec) manifests(ctx context.Context, snap table.Snapshot) (_ []iceberg.ManifestFile, size int64, _ error) {
	counts, _ := ctx.Value(decodeCountsKey{}).(*DecodeCounts)
	if w.Decoder == DecodeFast && snap.ManifestList != "" {
		if list, size, err := readList(w.FS, snap.ManifestList, manifestread.ReadList); err == nil {
			if counts != nil {
				counts.FastLists.Add(1)
			}
			return list, size, nil
		}
	}
	if snap.ManifestList == "" {
		list, err := snap.Manifests(w.FS) // embedded (v1) manifest locations
		return list, 0, err
	}
	if counts != nil {
		counts.VerifiedLists.Add(1)
	}
	// What snap.Manifests does for a list, with the size.
	return readList(w.FS, snap.ManifestList, func(r io.Reader) ([]iceberg.ManifestFile, error) { return iceberg.ReadManifestList(r) })
}

// readList opens the manifest list at path and decodes it with read.
func readList(fsys iceio.IO, path string, read func(io.Reader) ([]iceberg.ManifestFile, error)) ([]iceberg.ManifestFile, int64, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("could not open manifest file: %w", err)
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	list, err := read(f)
	return list, size, err
}

// statisticsFiles hands the statistics and partition statistics files of
// the walked snapshots to the consumers.
func (w Spec) statisticsFiles(walked map[int64]bool) error {
	for sf := range w.Meta.Statistics() {
		if walked[sf.SnapshotID] {
			f := File{Path: sf.StatisticsPath, Size: sf.FileSizeInBytes, Category: CategoryStatistics, Snapshot: sf.SnapshotID, Old: w.Old != nil && w.Old(sf.SnapshotID)}
			if _, err := w.file(f, nil); err != nil {
				return err
			}
		}
	}
	for sf := range w.Meta.PartitionStatistics() {
		if walked[sf.SnapshotID] {
			f := File{Path: sf.StatisticsPath, Size: sf.FileSizeInBytes, Category: CategoryPartitionStatistics, Snapshot: sf.SnapshotID, Old: w.Old != nil && w.Old(sf.SnapshotID)}
			if _, err := w.file(f, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// entryWalk reads the manifests' entries for the consumers.
type entryWalk struct {
	w           Spec
	ms          []walkManifest
	skip        [][]bool // skip[c][i]: consumer c does not want manifest i's entries
	tags        groupTags
	withDeleted bool // some consumer takes DELETED entries
}

// read hands each delete (or data) manifest to the consumers, then reads
// the entries of those some consumer (or the aggregate) wants.
func (e *entryWalk) read(ctx context.Context, deletes bool) error {
	w := e.w
	var todo []manifestRead
	for i, x := range e.ms {
		isDelete := x.m.ManifestContent() == iceberg.ManifestContentDeletes
		if isDelete != deletes {
			continue
		}
		aggregate := x.current && w.Aggregate != nil
		f := File{Path: x.m.FilePath(), Size: x.m.Length(), Category: CategoryManifest, Snapshot: x.m.SnapshotID(), Ordinal: i, Old: x.old}
		wanted, err := w.file(f, func(c int) {
			if e.skip[c] == nil {
				e.skip[c] = make([]bool, len(e.ms))
			}
			e.skip[c][i] = true
		})
		if err != nil {
			return err
		}
		if !wanted && !aggregate {
			continue
		}
		if w.Decoder == DecodeFast && !e.withDeleted && onlyDeleted(x.m) {
			if c, _ := ctx.Value(decodeCountsKey{}).(*DecodeCounts); c != nil {
				c.Skipped.Add(1)
			}
			continue
		}
		// DELETED entries matter only to consumers that take them; the
		// aggregate's delete index needs the bounds of delete files.
		todo = append(todo, manifestRead{
			ord:            i,
			m:              x.m,
			discardDeleted: !e.withDeleted,
			proj:           iceberg.ManifestEntryProjection{IncludePruningStats: isDelete && aggregate},
			fast:           w.Decoder == DecodeFast,
		})
	}
	return readManifests(ctx, w.FS, todo, func(i int, entry iceberg.ManifestEntry) error {
		return e.entry(i, entry, deletes)
	})
}

// onlyDeleted says, from m's manifest list entry alone, that m has no
// live entry: no ADDED, no EXISTING file. The counts are required from
// format v2 on (a v1 list may leave them out), and a walk that takes no
// DELETED entry has nothing to read in it. Only the fast (plan) walks go
// by it; a walk with iceberg-go's reader reads every manifest.
func onlyDeleted(m iceberg.ManifestFile) bool {
	return m.Version() >= 2 && m.AddedDataFiles() == 0 && m.ExistingDataFiles() == 0 && m.DeletedDataFiles() > 0
}

// entry hands one manifest entry to the aggregate and the consumers.
func (e *entryWalk) entry(i int, entry iceberg.ManifestEntry, deletes bool) error {
	w := e.w
	df := entry.DataFile()
	status := entry.Status()
	f := File{Path: df.FilePath(), Size: df.FileSizeBytes(), Category: CategoryData, Snapshot: entry.SnapshotID(),
		Ordinal: i, Old: e.ms[i].old, Deleted: status == iceberg.EntryStatusDELETED, Added: status == iceberg.EntryStatusADDED, Entry: entry}
	if deletes || df.ContentType() != iceberg.EntryContentData {
		f.Category = CategoryDelete
	}
	if !f.Deleted && e.ms[i].current && w.Aggregate != nil {
		if deletes {
			w.Aggregate.DeleteEntry(entry)
		} else if g, cand := w.Aggregate.DataEntry(e.ms[i].m.FilePath(), entry); cand {
			f.Group = e.tags.of(g)
		}
	}
	for c, cons := range w.Consumers {
		if cons.File == nil || (f.Deleted && !cons.WithDeleted) || (e.skip[c] != nil && e.skip[c][i]) {
			continue
		}
		if err := cons.File(f); err != nil {
			return err
		}
	}
	return nil
}

// snapshots are the walked snapshots, in the order asked.
func (w Spec) snapshots() ([]table.Snapshot, error) {
	all := w.Meta.Snapshots()
	byID := make(map[int64]int, len(all))
	for i, s := range all {
		byID[s.SnapshotID] = i
	}
	out := make([]table.Snapshot, 0, len(w.Snapshots))
	seen := make(map[int64]bool, len(w.Snapshots))
	for _, id := range w.Snapshots {
		i, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("snapshot %d is not in the table metadata", id)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, all[i])
		}
	}
	return out, nil
}

// AllSnapshots lists every snapshot of md, in metadata order. Every ref
// points at a snapshot in the metadata and ancestry is only followed
// through it, so this is the set "any snapshot of any ref can reach" and
// more.
func AllSnapshots(md table.Metadata) []int64 {
	snaps := md.Snapshots()
	ids := make([]int64, 0, len(snaps))
	for _, s := range snaps {
		ids = append(ids, s.SnapshotID)
	}
	return ids
}

// file hands a manifest list, statistics file or manifest to every
// consumer. wanted says whether any consumer wants a manifest's entries;
// skipped is told which did not.
func (w Spec) file(f File, skipped func(consumer int)) (wanted bool, err error) {
	for c, cons := range w.Consumers {
		if cons.File == nil {
			continue
		}
		switch err := cons.File(f); {
		case err == nil:
			wanted = true
		case errors.Is(err, SkipEntries) && skipped != nil:
			skipped(c)
		case errors.Is(err, SkipEntries):
		default:
			return false, err
		}
	}
	return wanted, nil
}

// groupTags interns the group tags of a walk: one string per partition,
// not one per candidate file.
type groupTags map[Group]string

func (g groupTags) of(k Group) string {
	t, ok := g[k]
	if !ok {
		t = GroupTag(k.Spec, k.Partition)
		g[k] = t
	}
	return t
}

// manifestRead is one manifest for readManifests to decode.
type manifestRead struct {
	ord            int
	m              iceberg.ManifestFile
	discardDeleted bool
	proj           iceberg.ManifestEntryProjection
	fast           bool // Spec.Decoder is DecodeFast
}

// decodeWorkers is how many manifests are decoded at once. Decoding Avro
// is CPU work that needs nothing from the consumers, so it runs beside
// them: on a 2-million-file table it was a third of an orphan scan.
const decodeWorkers = 2

// entryBatch carries decoded entries of one manifest to the consumer.
type entryBatch struct {
	entries []iceberg.ManifestEntry
	err     error
}

// batchesAhead is how many batches of one manifest a worker may decode
// before the consumer takes them.
const batchesAhead = 4

// readManifests decodes the manifests of todo in decodeWorkers goroutines
// and calls consume for every entry, from the calling goroutine only (the
// consumers need no locking), in the order of todo and, within a
// manifest, in file order: exactly the serial read's sequence, which
// consumers that keep an order rely on (the aggregate's candidate sizes
// are bin-packed in manifest order, as iceberg-go's planner packs them).
// Each manifest has its own channel, taken in order, so a worker ahead of
// the consumer holds at most batchesAhead batches. The first error
// (decoding or consume) stops everything and is returned; a partial read
// is never reported as done.
func readManifests(ctx context.Context, fsys iceio.IO, todo []manifestRead, consume func(ord int, e iceberg.ManifestEntry) error) error {
	if len(todo) == 0 {
		return nil
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan decodeJob)
	// order holds each manifest's channel in todo order; its capacity
	// bounds how far decoding runs ahead of the consumer.
	order := make(chan decodeJob, decodeWorkers)
	var wg sync.WaitGroup
	for range min(decodeWorkers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				decodeManifest(ctx, fsys, j)
			}
		}()
	}
	go func() {
		defer close(order)
		defer close(jobs)
		for _, r := range todo {
			j := decodeJob{r: r, out: make(chan entryBatch, batchesAhead)}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				close(j.out) // no worker will: the consumer may be waiting on it
				return
			}
		}
	}()
	first := consumeInOrder(ctx, order, consume, newPacer(parent))
	cancel()
	wg.Wait()
	if first == nil {
		// The caller's cancellation may have stopped the workers early.
		first = parent.Err()
	}
	return first
}

// decodeJob is one manifest to decode, and where its entries go.
type decodeJob struct {
	r   manifestRead
	out chan entryBatch
}

// decodeManifest decodes one manifest into batches on j.out, an error
// ending it, and closes j.out; it stops when ctx is done.
func decodeManifest(ctx context.Context, fsys iceio.IO, j decodeJob) {
	defer close(j.out)
	d := batcher{ctx: ctx, out: j.out}
	counts, _ := ctx.Value(decodeCountsKey{}).(*DecodeCounts)
	// The delete bounds the aggregate reads (IncludePruningStats) are
	// iceberg-go's to decode.
	if j.r.fast && !j.r.proj.IncludePruningStats {
		err := readFast(fsys, j.r, d.add)
		switch {
		case err == nil:
			d.flush()
			if counts != nil {
				counts.Fast.Add(1)
			}
			return
		case d.sent || ctx.Err() != nil:
			d.send(entryBatch{err: manifestReadError(j.r.m, err)})
			return
		}
		// Nothing handed over yet: iceberg-go's reader reads it, and its
		// answer (or its error) is the walk's.
		d.batch = d.batch[:0]
		if counts != nil {
			counts.Fallback.Add(1)
		}
	}
	if counts != nil {
		counts.Verified.Add(1)
	}
	for entry, err := range iceberg.EntriesWithProjection(fsys, j.r.m, j.r.discardDeleted, j.r.proj) {
		if err != nil {
			d.send(entryBatch{err: manifestReadError(j.r.m, err)})
			return
		}
		if d.add(entry) != nil {
			return
		}
	}
	d.flush()
}

// readFast reads manifest r.m with manifestread, calling add with each
// entry.
func readFast(fsys iceio.IO, r manifestRead, add func(iceberg.ManifestEntry) error) error {
	f, err := fsys.Open(r.m.FilePath())
	if err != nil {
		return err
	}
	defer f.Close()
	return manifestread.Read(f, r.m, r.discardDeleted, add)
}

// batcher gathers one manifest's entries into batches for the consumer.
type batcher struct {
	ctx   context.Context
	out   chan entryBatch
	batch []iceberg.ManifestEntry
	sent  bool // a batch went to the consumer
}

// errStopped: the walk stopped (ctx done) while a batch waited.
var errStopped = errors.New("walk stopped")

func (b *batcher) send(e entryBatch) bool {
	b.sent = true
	select {
	case b.out <- e:
		return true
	case <-b.ctx.Done():
		return false
	}
}

// add appends an entry, sending the batch when full.
func (b *batcher) add(e iceberg.ManifestEntry) error {
	if b.batch == nil {
		b.batch = make([]iceberg.ManifestEntry, 0, 256)
	}
	b.batch = append(b.batch, e)
	if len(b.batch) == cap(b.batch) {
		if !b.send(entryBatch{entries: b.batch}) {
			return errStopped
		}
		b.batch = make([]iceberg.ManifestEntry, 0, 256)
	}
	return nil
}

// flush sends what is left.
func (b *batcher) flush() {
	if len(b.batch) > 0 {
		b.send(entryBatch{entries: b.batch})
	}
}

// consumeInOrder hands the entries to consume manifest by manifest, in
// todo order, and returns the first error (a decoding error, consume's,
// or ctx's: a manifest may then be partial).
func consumeInOrder(ctx context.Context, order <-chan decodeJob, consume func(ord int, e iceberg.ManifestEntry) error, pace *pacer) error {
	for j := range order {
		for b := range j.out {
			if b.err == nil {
				b.err = ctx.Err()
			}
			if b.err == nil {
				for _, e := range b.entries {
					if b.err = consume(j.r.ord, e); b.err != nil {
						break
					}
					pace.entry(ctx)
				}
			}
			if b.err != nil {
				return b.err
			}
		}
		if err := ctx.Err(); err != nil {
			return err // the caller cancelled: this manifest may be partial
		}
	}
	return nil
}

// manifestReadError is the error of reading manifest m. iceberg-go v0.7.0
// checks a manifest's own Avro metadata ('content', 'format-version',
// 'partition-spec-id') against its manifest list entry and refuses a
// mismatch, where Java and Trino go by the list. Some writers (older Trino
// versions) leave 'content' out of delete manifests, so iceberg-go reads
// them as data manifests and can read nothing of such a table: no plan,
// no commit. The message says so and what the user can do about it, since
// iceberg-go's own sentence names no remedy; the table is reported and
// nothing of it is changed.
func manifestReadError(m iceberg.ManifestFile, err error) error {
	if msg := err.Error(); strings.Contains(msg, "manifest file's '") && strings.Contains(msg, "metadata") {
		return fmt.Errorf("read manifest %s: %w. The manifest's own metadata disagrees with the manifest list "+
			"(a writer left out the 'content' key of a delete manifest, as older Trino versions do); iceberg-go, "+
			"which icewright reads tables with, refuses such a manifest, so icewright can neither plan nor change this "+
			"table. Rewriting its manifests with an engine that writes the key (Spark's rewrite_manifests "+
			"procedure) makes it readable", m.FilePath(), err)
	}
	return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
}
