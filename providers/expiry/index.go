package expiry

import (
	"fmt"
	"slices"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// Kinds of expiry records: what reaches the file.
const (
	kindSnapshot = 1 // a manifest list or statistics file: its snapshot
	kindManifest = 2 // a manifest: the snapshots whose lists name it
	kindEntry    = 3 // a live data or delete file: its manifest
)

// maxMemberships bounds the (manifest, snapshot) pairs an Index keeps (4
// bytes each). A table past it gets the expiry estimate from its own walks
// instead (Estimate).
const maxMemberships = 8 << 20

// Index is what a plan's walk records for the expiry estimate before
// the plan knows which snapshots it expires: every live file reachable from
// any snapshot, in an external sorter, with what reaches it (a snapshot
// index or a manifest ordinal), and which snapshots list each manifest.
// Once diff has chosen the snapshots, Estimate says which files only
// expired snapshots reach, in one sorted pass, without reading a manifest
// again. It rides on the walk as a reach.Consumer.
type Index struct {
	recs          *reach.Sorter
	snapIDs       []int64       // snapshot index -> id
	snapIndex     map[int64]int // id -> snapshot index
	manifestSnaps [][]int32     // manifest ordinal -> snapshot indexes whose list names it
	current       []bool        // manifest ordinal -> in the observed current snapshot's list
	currentID     int64         // the observed current snapshot (the aggregate's); 0: none
	storage       string        // the table location's (store.Storage)
	memberships   int
	overflow      bool // too many memberships: estimate must not be used
	// What apply's walks read (diff.ExpiryReads): each snapshot's manifest
	// list (by snapshot index; -1: none seen) and each manifest's bytes (by
	// ordinal).
	listBytes     []int64
	manifestBytes []int64
}

// NewIndex is an empty index of a table at location whose observed
// current snapshot is currentID; spillLimit bounds its sorter (0:
// reach.DefaultSpillLimit).
func NewIndex(spillLimit int, currentID int64, location string) *Index {
	if spillLimit <= 0 {
		spillLimit = reach.DefaultSpillLimit
	}
	return &Index{recs: reach.NewSorter(spillLimit), snapIndex: map[int64]int{}, currentID: currentID, storage: store.Storage(location)}
}

// Consumer is the index's part of a walk: live files with their sizes,
// manifest lists' sizes from storage, and which snapshot lists which
// manifest.
func (x *Index) Consumer() reach.Consumer {
	return reach.Consumer{File: x.file, Listed: x.listed, ListSizes: true}
}

func (x *Index) file(f reach.File) error {
	switch f.Category {
	case reach.CategoryManifest:
		for len(x.manifestBytes) <= f.Ordinal {
			x.manifestBytes = append(x.manifestBytes, 0)
		}
		x.manifestBytes[f.Ordinal] = f.Size
		return x.add(f.Path, f.Size, kindManifest, f.Ordinal, "")
	case reach.CategoryManifestList:
		si := x.snapshot(f.Snapshot)
		for len(x.listBytes) <= si {
			x.listBytes = append(x.listBytes, -1)
		}
		x.listBytes[si] = f.Size
		return x.add(f.Path, f.Size, kindSnapshot, si, "")
	case reach.CategoryData, reach.CategoryDelete:
		return x.add(f.Path, f.Size, kindEntry, f.Ordinal, f.Group)
	}
	return x.add(f.Path, f.Size, kindSnapshot, x.snapshot(f.Snapshot), "") // a manifest list or statistics
}

func (x *Index) add(p string, size int64, kind, idx int, tag string) error {
	return x.recs.Add(reach.Rec{Key: store.NormPath(p), Aux: tag, N1: size, N2: int64(kind)<<32 | int64(idx) | escapedFlag(p)})
}

// snapshot is the index of snapshot id, numbered on first sight.
func (x *Index) snapshot(id int64) int {
	si, ok := x.snapIndex[id]
	if !ok {
		si = len(x.snapIDs)
		x.snapIndex[id] = si
		x.snapIDs = append(x.snapIDs, id)
	}
	return si
}

func (x *Index) listed(manifest int, snapshotID int64) {
	if snapshotID == x.currentID {
		for len(x.current) <= manifest {
			x.current = append(x.current, false)
		}
		x.current[manifest] = true
	}
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
	x.manifestSnaps[manifest] = append(x.manifestSnaps[manifest], int32(x.snapshot(snapshotID)))
}

// isCurrent reports whether manifest ordinal i is in the observed current
// snapshot's list.
func (x *Index) isCurrent(i int) bool { return i < len(x.current) && x.current[i] }

// Overflowed reports an index that recorded too many memberships to be
// used: Estimate walks again instead.
func (x *Index) Overflowed() bool { return x.overflow }

// Close removes the index's spill files.
func (x *Index) Close() error { return x.recs.Close() }

// Estimate counts the files and bytes that expiring expireIDs frees: files
// some expired snapshot reaches and no kept one does. When the observed
// current snapshot is itself expired (the plan's own commits replace it),
// its files stay reachable from the new current snapshot, except those of
// the compaction groups compacted reports (the compaction replaces them).
// It is the same computation as Estimate, from the recorded walk; the
// groups are the plan's compaction groups.
func (x *Index) Estimate(expireIDs []int64, groups []diff.CompactGroup) (freed Freed, err error) {
	compacted := compactedGroups(groups)
	if x.overflow {
		return Freed{}, fmt.Errorf("expiry index overflowed")
	}
	freed.storage = x.storage
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
	freed.Reads = x.reads(snapExpired, inExpired, inKept)
	var (
		cur         string
		started     bool
		fromExpired bool
		kept        bool
		escaped     bool
		size        int64
		flush       = func() {
			if started && fromExpired && !kept {
				freed.count(cur, size, escaped)
			}
		}
	)
	for r, err := range x.recs.Sorted() {
		if err != nil {
			return Freed{}, err
		}
		if !started || r.Key != cur {
			flush()
			cur, started, fromExpired, kept, escaped, size = r.Key, true, false, false, false, 0
		}
		kind, idx := int(r.N2>>32&0xff), int(r.N2&0xffffffff)
		escaped = escaped || r.N2&escapedBit != 0
		var exp, keep bool
		switch kind {
		case kindSnapshot:
			exp, keep = snapExpired[idx], !snapExpired[idx]
		case kindManifest:
			exp, keep = inExpired[idx], inKept[idx]
		case kindEntry:
			exp, keep = inExpired[idx], inKept[idx]
			if curExpired && x.isCurrent(idx) && (r.Aux == "" || compacted == nil || !compacted(r.Aux)) {
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
	return freed, nil
}

// reads is what apply's expiry walks read (diff.ExpiryReads): the lists
// of the expired and of the kept snapshots, and the manifests each side
// lists.
func (x *Index) reads(snapExpired, inExpired, inKept []bool) *diff.ExpiryReads {
	var r diff.ExpiryReads
	for si, b := range x.listBytes {
		if b < 0 {
			continue
		}
		side := &r.Kept
		if snapExpired[si] {
			side = &r.Expired
		}
		side.Lists++
		side.ListBytes += b
	}
	for i := range inExpired {
		var b int64
		if i < len(x.manifestBytes) {
			b = x.manifestBytes[i]
		}
		if inExpired[i] {
			r.Expired.Manifests++
			r.Expired.ManifestBytes += b
		}
		if inKept[i] {
			r.Kept.Manifests++
			r.Kept.ManifestBytes += b
		}
		if inExpired[i] || inKept[i] {
			r.Manifests++
		}
	}
	return &r
}

// compactedGroups reports whether a group tag is one of groups.
func compactedGroups(groups []diff.CompactGroup) func(tag string) bool {
	tags := make([]string, 0, len(groups))
	for _, g := range groups {
		tags = append(tags, reach.GroupTag(g.SpecID, g.Partition))
	}
	slices.Sort(tags)
	return func(tag string) bool {
		_, ok := slices.BinarySearch(tags, tag)
		return ok
	}
}
