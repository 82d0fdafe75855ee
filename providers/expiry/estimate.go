package expiry

import (
	"context"
	"iter"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/internal/reach"
	"github.com/icewright/icewright/providers/internal/store"
)

// Estimate counts the files (and their bytes) that expiring expireIDs of md
// frees: files reachable now and not after the plan's commits. "After" is
// every snapshot that is kept, plus the live data and delete files of the
// current snapshot that the plan's compaction does not rewrite
// (compactInputs reports the inputs by path; nil means none), which the
// compaction commit carries into its new snapshot. It fills
// diff.ExpireAction.FilesToDelete/BytesToDelete when the plan's walk did not
// record an Index, and inspect's figure of what old snapshots hold.
//
// What it does not see: manifests and manifest lists that the plan's own
// commits will write and then drop, and manifests that rewrite_manifests
// replaces (kept reachable here), so it can only under-count.
func Estimate(ctx context.Context, fsys iceio.IO, md table.Metadata, expireIDs []int64, compactInputs func(path string) bool) (freed Freed, err error) {
	expire := map[int64]bool{}
	for _, id := range expireIDs {
		expire[id] = true
	}
	freed.storage = store.Storage(md.Location())
	var kept []int64
	for _, id := range reach.AllSnapshots(md) {
		if !expire[id] {
			kept = append(kept, id)
		}
	}

	// Both sides go through external sorters so that a table with millions
	// of files is compared in bounded memory, by a sorted merge.
	before, after := reach.NewSorter(reach.DefaultSpillLimit), reach.NewSorter(reach.DefaultSpillLimit)
	defer before.Close()
	defer after.Close()
	// Only files reachable from an expired snapshot can be freed, so the
	// before side is walked from those alone.
	err = walkWith(ctx, fsys, md, expireIDs, reach.DecodeFast, func(f reach.File) error {
		return before.Add(reach.Rec{Key: store.NormPath(f.Path), N1: f.Size, N2: escapedFlag(f.Path)})
	})
	if err != nil {
		return Freed{}, err
	}
	err = walkWith(ctx, fsys, md, kept, reach.DecodeFast, func(f reach.File) error {
		return after.Add(reach.Rec{Key: store.NormPath(f.Path)})
	})
	if err != nil {
		return Freed{}, err
	}
	if cur := md.CurrentSnapshot(); cur != nil && expire[cur.SnapshotID] {
		err = walkWith(ctx, fsys, md, []int64{cur.SnapshotID}, reach.DecodeFast, func(f reach.File) error {
			if (f.Category == reach.CategoryData || f.Category == reach.CategoryDelete) && (compactInputs == nil || !compactInputs(f.Path)) {
				return after.Add(reach.Rec{Key: store.NormPath(f.Path)})
			}
			return nil
		})
		if err != nil {
			return Freed{}, err
		}
	}
	err = unmatched(before, after, func(r reach.Rec) error {
		freed.count(r.Key, r.N1, r.N2&escapedBit != 0)
		return nil
	})
	if err != nil {
		return Freed{}, err
	}
	return freed, nil
}

// Freed is what expiring snapshots frees: files and their bytes, and how
// many of the files are named by file: URIs whose path changes when decoded
// (store.LiteralKey), which expiry deletes only under their literal name and
// only while no file has the decoded one (store.DeletionName), so that the
// plan can say so (diff.ExpireAction.EscapedFileURIs).
//
// ForeignFiles counts the files on another storage than the table
// location's (store.Storage), which the table's IO cannot delete, and
// ForeignExample names the first: the plan refuses such an expiry rather
// than commit it and fail its deletions.
type Freed struct {
	Files, Bytes, EscapedFileURIs int64
	ForeignFiles                  int64
	ForeignExample                string
	// Reads is what apply's walks read (Index.Estimate); nil when not
	// known.
	Reads   *diff.ExpiryReads
	storage string // the table location's; "": not checked
}

func (f *Freed) count(key string, size int64, escaped bool) {
	f.Files++
	f.Bytes += max(size, 0)
	if escaped {
		f.EscapedFileURIs++
	}
	if f.storage != "" && store.Storage(key) != f.storage {
		f.ForeignFiles++
		if f.ForeignExample == "" {
			f.ForeignExample = key
		}
	}
}

// escapedBit marks, in a record's N2, a file named by a file: URI whose path
// changes when decoded.
const escapedBit = int64(1) << 40

// escapedFlag is escapedBit for a path store.LiteralKey says names two
// files, else 0.
func escapedFlag(p string) int64 {
	if _, ok := store.LiteralKey(p); ok {
		return escapedBit
	}
	return 0
}

// walk hands fn every file the snapshots ids of md reach through their
// live entries (reach.Walk, iceberg-go's reader: what expiry deletes is
// decided on it); listSizes asks for the manifest lists' sizes (only the
// released side, whose sizes are the bytes freed, needs them): each read
// gives its list's size from the opened file, a stat only where it did
// not (reach.Consumer.ListSizes).
func walk(ctx context.Context, fsys iceio.IO, md table.Metadata, ids []int64, listSizes bool, fn func(reach.File) error) error {
	return reach.Walk(ctx, reach.Spec{Meta: md, FS: fsys, Snapshots: ids, Consumers: []reach.Consumer{{ListSizes: listSizes, File: fn}}})
}

// walkWith is a walk (with the lists' sizes) decoding with dec: the
// estimate's walks are a plan's figure and take the fast decoder.
func walkWith(ctx context.Context, fsys iceio.IO, md table.Metadata, ids []int64, dec reach.Decoder, fn func(reach.File) error) error {
	return reach.Walk(ctx, reach.Spec{Meta: md, FS: fsys, Snapshots: ids, Consumers: []reach.Consumer{{ListSizes: true, File: fn}}, Decoder: dec})
}

// unmatched calls fn, in key order, with the first record of every key of
// gone that kept does not have: a sorted merge of the two sorters.
func unmatched(gone, kept *reach.Sorter, fn func(reach.Rec) error) error {
	next, stop := iter.Pull2(kept.Sorted())
	defer stop()
	k, kerr, kok := next()
	last, first := "", true
	for r, err := range gone.Sorted() {
		if err != nil {
			return err
		}
		if !first && r.Key == last {
			continue
		}
		last, first = r.Key, false
		for kok && kerr == nil && k.Key < r.Key {
			k, kerr, kok = next()
		}
		if kerr != nil {
			return kerr
		}
		if kok && k.Key == r.Key {
			continue
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// EstimateTable is Estimate on tbl as loaded (its storage and metadata).
func EstimateTable(ctx context.Context, tbl *table.Table, expireIDs []int64, compactInputs func(path string) bool) (Freed, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return Freed{}, err
	}
	return Estimate(ctx, fsys, tbl.Metadata(), expireIDs, compactInputs)
}
