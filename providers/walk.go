package providers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/iceops/iceops/diff"
	"github.com/iceops/iceops/providers/internal/reach"
)

// walkSpec says who consumes one pass over a table's manifests. A plan
// needs the same manifests three ways: the current snapshot's aggregate,
// the orphan scan's referenced set (every snapshot, DELETED entries too) and
// the expiry estimate (every snapshot, live entries). Opening a manifest
// costs more than reading it (iceberg-go parses and resolves the Avro
// header schema of every file it opens: 40% of a plan's CPU when each
// consumer walked on its own), so walkTable reads every manifest list once
// and every distinct manifest once, and hands each entry to every consumer.
type walkSpec struct {
	md   table.Metadata
	fsys iceio.IO

	// agg, when set, aggregates the live files of aggSnap.
	agg     *aggregator
	aggSnap int64

	// refs, when set, receives every file any snapshot reaches, DELETED
	// entries included. required reports whether it must be in a listing
	// made before this walk: reached from a snapshot old(id) says existed
	// then, and not only through a DELETED entry.
	refs func(p, cat string, required bool) error
	old  func(snapshotID int64) bool

	// expiry, when set, records every live reachable file with what
	// reaches it, for expiryIndex.estimate.
	expiry *expiryIndex
}

// walkTable is the one pass of walkSpec over every snapshot of w.md.
func walkTable(ctx context.Context, w walkSpec) error {
	snaps := w.md.Snapshots()
	type manifest struct {
		m       iceberg.ManifestFile
		old     bool // in the list of a snapshot old() reports
		current bool // in aggSnap's list
	}
	var ms []manifest
	ord := map[string]int{}
	var stat iceio.StatIO
	if w.expiry != nil {
		stat, _ = w.fsys.(iceio.StatIO)
		w.expiry.snapIDs = make([]int64, len(snaps))
	}
	bySnap := make(map[int64]int, len(snaps))
	for si, snap := range snaps {
		bySnap[snap.SnapshotID] = si
		old := w.old != nil && w.old(snap.SnapshotID)
		if w.expiry != nil {
			w.expiry.snapIDs[si] = snap.SnapshotID
		}
		if snap.ManifestList != "" {
			if w.refs != nil {
				if err := w.refs(snap.ManifestList, CategoryManifestList, old); err != nil {
					return err
				}
			}
			if w.expiry != nil {
				var size int64
				if stat != nil {
					if fi, err := stat.Stat(snap.ManifestList); err == nil {
						size = fi.Size()
					}
				}
				if err := w.expiry.add(snap.ManifestList, size, kindSnapshot, si, ""); err != nil {
					return err
				}
			}
		}
		list, err := snap.Manifests(w.fsys)
		if err != nil {
			return fmt.Errorf("read manifest list of snapshot %d: %w", snap.SnapshotID, err)
		}
		current := w.agg != nil && snap.SnapshotID == w.aggSnap
		for _, m := range list {
			if current {
				w.agg.manifest(m)
			}
			i, ok := ord[m.FilePath()]
			if !ok {
				i = len(ms)
				ord[m.FilePath()] = i
				ms = append(ms, manifest{m: m})
			}
			ms[i].old = ms[i].old || old
			ms[i].current = ms[i].current || current
			if w.expiry != nil {
				w.expiry.member(i, si)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	tags := groupTags{}
	for sf := range w.md.Statistics() {
		if err := w.snapshotFile(bySnap, sf.SnapshotID, sf.StatisticsPath, sf.FileSizeInBytes, CategoryStatistics); err != nil {
			return err
		}
	}
	for sf := range w.md.PartitionStatistics() {
		if err := w.snapshotFile(bySnap, sf.SnapshotID, sf.StatisticsPath, sf.FileSizeInBytes, CategoryPartitionStatistics); err != nil {
			return err
		}
	}

	// Delete manifests first: the aggregate counts the deletes that apply
	// to each data file, so it must have seen every delete file before the
	// first data file.
	for _, deletes := range []bool{true, false} {
		if !deletes && w.agg != nil {
			w.agg.sealDeletes()
		}
		var todo []manifestRead
		for i, x := range ms {
			isDelete := x.m.ManifestContent() == iceberg.ManifestContentDeletes
			if isDelete != deletes {
				continue
			}
			aggregate := w.agg != nil && x.current
			if w.refs != nil {
				if err := w.refs(x.m.FilePath(), CategoryManifest, x.old); err != nil {
					return err
				}
			}
			if w.expiry != nil {
				if err := w.expiry.add(x.m.FilePath(), x.m.Length(), kindManifest, i, ""); err != nil {
					return err
				}
			}
			if w.refs == nil && w.expiry == nil && !aggregate {
				continue
			}
			// DELETED entries matter only to the referenced set; the
			// aggregate's delete index needs the bounds of delete files.
			todo = append(todo, manifestRead{
				ord:            i,
				m:              x.m,
				discardDeleted: w.refs == nil,
				proj:           iceberg.ManifestEntryProjection{IncludePruningStats: isDelete && aggregate},
			})
		}
		err := readManifests(ctx, w.fsys, todo, func(i int, entry iceberg.ManifestEntry) error {
			x := ms[i]
			aggregate := w.agg != nil && x.current
			df := entry.DataFile()
			deleted := entry.Status() == iceberg.EntryStatusDELETED
			c := CategoryData
			if deletes || df.ContentType() != iceberg.EntryContentData {
				c = CategoryDelete
			}
			if w.refs != nil {
				if err := w.refs(df.FilePath(), c, x.old && !deleted); err != nil {
					return err
				}
			}
			if deleted {
				return nil
			}
			tag := ""
			if aggregate {
				if deletes {
					w.agg.deleteEntry(entry)
				} else if k, cand := w.agg.dataEntry(entry); cand {
					tag = tags.of(k)
				}
			}
			if w.expiry != nil {
				return w.expiry.add(df.FilePath(), df.FileSizeBytes(), kindEntry, i, tag)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if w.expiry != nil {
		w.expiry.current = make([]bool, len(ms))
		for i, x := range ms {
			w.expiry.current[i] = x.current
		}
	}
	return nil
}

// manifestRead is one manifest for readManifests to decode.
type manifestRead struct {
	ord            int
	m              iceberg.ManifestFile
	discardDeleted bool
	proj           iceberg.ManifestEntryProjection
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
	type job struct {
		r   manifestRead
		out chan entryBatch
	}
	jobs := make(chan job)
	// order holds each manifest's channel in todo order; its capacity
	// bounds how far decoding runs ahead of the consumer.
	order := make(chan job, decodeWorkers)
	var wg sync.WaitGroup
	send := func(ch chan entryBatch, b entryBatch) bool {
		select {
		case ch <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for range min(decodeWorkers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				batch := make([]iceberg.ManifestEntry, 0, 256)
				ok := true
				for entry, err := range iceberg.EntriesWithProjection(fsys, j.r.m, j.r.discardDeleted, j.r.proj) {
					if err != nil {
						send(j.out, entryBatch{err: fmt.Errorf("read manifest %s: %w", j.r.m.FilePath(), err)})
						ok = false
						break
					}
					batch = append(batch, entry)
					if len(batch) == cap(batch) {
						if ok = send(j.out, entryBatch{entries: batch}); !ok {
							break
						}
						batch = make([]iceberg.ManifestEntry, 0, 256)
					}
				}
				if ok && len(batch) > 0 {
					send(j.out, entryBatch{entries: batch})
				}
				close(j.out)
			}
		}()
	}
	go func() {
		defer close(order)
		defer close(jobs)
		for _, r := range todo {
			j := job{r: r, out: make(chan entryBatch, batchesAhead)}
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
	var first error
consume:
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
				}
			}
			if b.err != nil {
				first = b.err
				break consume
			}
		}
		if err := ctx.Err(); err != nil {
			first = err // the caller cancelled: this manifest may be partial
			break
		}
	}
	cancel()
	wg.Wait()
	if first == nil {
		// The caller's cancellation may have stopped the workers early.
		first = parent.Err()
	}
	return first
}

// snapshotFile hands a statistics file of snapshot id to the consumers;
// files of snapshots the metadata no longer has are nobody's.
func (w walkSpec) snapshotFile(bySnap map[int64]int, id int64, p string, size int64, cat string) error {
	si, ok := bySnap[id]
	if !ok {
		return nil
	}
	if w.refs != nil {
		if err := w.refs(p, cat, w.old != nil && w.old(id)); err != nil {
			return err
		}
	}
	if w.expiry != nil {
		return w.expiry.add(p, size, kindSnapshot, si, "")
	}
	return nil
}

// groupTags interns the group tags of a walk: one string per partition,
// not one per candidate file.
type groupTags map[partKey]string

func (g groupTags) of(k partKey) string {
	t, ok := g[k]
	if !ok {
		t = groupTag(k.spec, k.part)
		g[k] = t
	}
	return t
}

// groupTag names a compaction group (spec and partition) in expiry records.
func groupTag(spec int, part string) string {
	return strconv.Itoa(spec) + "\x00" + part
}

// Kinds of expiry records: what reaches the file.
const (
	kindSnapshot = 1 // a manifest list or statistics file: its snapshot
	kindManifest = 2 // a manifest: the snapshots whose lists name it
	kindEntry    = 3 // a live data or delete file: its manifest
)

// maxMemberships bounds the (manifest, snapshot) pairs an expiry index
// keeps (4 bytes each). A table past it gets the expiry estimate from its
// own walks instead (estimateFreed).
const maxMemberships = 8 << 20

// expiryIndex is what walkTable records for the expiry estimate before the
// plan knows which snapshots it expires: every live file reachable from any
// snapshot, in an external sorter, with what reaches it (a snapshot index
// or a manifest ordinal), and which snapshots list each manifest. Once diff
// has chosen the snapshots, estimate says which files only expired
// snapshots reach, in one sorted pass, without reading a manifest again.
type expiryIndex struct {
	recs          *reach.Sorter
	snapIDs       []int64   // snapshot index -> id
	manifestSnaps [][]int32 // manifest ordinal -> snapshot indexes whose list names it
	current       []bool    // manifest ordinal -> in the observed current snapshot's list
	currentID     int64     // the observed current snapshot (the aggregate's); 0: none
	memberships   int
	overflow      bool // too many memberships: estimate must not be used
}

func newExpiryIndex(spillLimit int) *expiryIndex {
	return &expiryIndex{recs: reach.NewSorter(spillLimit)}
}

func (x *expiryIndex) add(p string, size int64, kind, idx int, tag string) error {
	return x.recs.Add(reach.Rec{Key: diff.NormalizePath(p, nil, nil), Aux: tag, N1: size, N2: int64(kind)<<32 | int64(idx)})
}

func (x *expiryIndex) member(manifest, snap int) {
	if x.overflow {
		return
	}
	if x.memberships++; x.memberships > maxMemberships {
		x.overflow = true
		x.manifestSnaps = nil
		return
	}
	for len(x.manifestSnaps) <= manifest {
		x.manifestSnaps = append(x.manifestSnaps, nil)
	}
	x.manifestSnaps[manifest] = append(x.manifestSnaps[manifest], int32(snap))
}

// Close removes the index's spill files.
func (x *expiryIndex) Close() error { return x.recs.Close() }

// estimate counts the files and bytes that expiring expireIDs frees: files
// some expired snapshot reaches and no kept one does. When the observed
// current snapshot is itself expired (the plan's own commits replace it),
// its files stay reachable from the new current snapshot, except those of
// the compaction groups compacted reports (the compaction replaces them).
// It is the same computation as estimateFreed, from the recorded walk.
func (x *expiryIndex) estimate(expireIDs []int64, compacted func(tag string) bool) (files, bytes int64, err error) {
	if x.overflow {
		return 0, 0, fmt.Errorf("expiry index overflowed")
	}
	expire := make(map[int64]bool, len(expireIDs))
	for _, id := range expireIDs {
		expire[id] = true
	}
	snapExpired := make([]bool, len(x.snapIDs))
	for si, id := range x.snapIDs {
		snapExpired[si] = expire[id]
	}
	curExpired := x.currentID != 0 && expire[x.currentID]
	inExpired := make([]bool, len(x.manifestSnaps))
	inKept := make([]bool, len(x.manifestSnaps))
	for i, snaps := range x.manifestSnaps {
		for _, si := range snaps {
			if snapExpired[si] {
				inExpired[i] = true
			} else {
				inKept[i] = true
			}
		}
	}
	var (
		cur         string
		started     bool
		fromExpired bool
		kept        bool
		size        int64
		flush       = func() {
			if started && fromExpired && !kept {
				files++
				bytes += max(size, 0)
			}
		}
	)
	for r, err := range x.recs.Sorted() {
		if err != nil {
			return 0, 0, err
		}
		if !started || r.Key != cur {
			flush()
			cur, started, fromExpired, kept, size = r.Key, true, false, false, 0
		}
		kind, idx := int(r.N2>>32), int(r.N2&0xffffffff)
		var exp, keep bool
		switch kind {
		case kindSnapshot:
			exp, keep = snapExpired[idx], !snapExpired[idx]
		case kindManifest:
			exp, keep = inExpired[idx], inKept[idx]
		case kindEntry:
			exp, keep = inExpired[idx], inKept[idx]
			if curExpired && x.current[idx] && (r.Aux == "" || compacted == nil || !compacted(r.Aux)) {
				keep = true
			}
		}
		if exp {
			fromExpired = true
			size = r.N1
		}
		kept = kept || keep
	}
	flush()
	return files, bytes, nil
}

// compactedGroups reports whether a group tag is one of groups.
func compactedGroups(groups []diff.CompactGroup) func(tag string) bool {
	tags := make([]string, 0, len(groups))
	for _, g := range groups {
		tags = append(tags, groupTag(g.SpecID, g.Partition))
	}
	slices.Sort(tags)
	return func(tag string) bool {
		_, ok := slices.BinarySearch(tags, tag)
		return ok
	}
}
