package compaction

import (
	"bytes"
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	icecompaction "github.com/apache/iceberg-go/table/compaction"

	"github.com/icewright/icewright/providers/internal/reach"
)

// posDeleteFilePathID is the reserved field id of a position delete file's
// file_path column (Iceberg spec); its bounds say which data files the
// delete can name.
const posDeleteFilePathID = 2147483546

// truncatedBoundLength is the default length writers truncate string bounds
// to; a bound no longer than it may be a prefix, not a path.
const truncatedBoundLength = 16

// maxRangeDeletes bounds the position delete files whose file_path bounds
// span several paths that danglingDeletes checks against every live data
// file (a linear scan each); past it they are kept, as if live.
const maxRangeDeletes = 1024

// Dangling is what Dangling found in a snapshot: the delete files that can
// apply to no live data file, and the delete manifests that hold them.
type Dangling struct {
	Files []iceberg.DataFile
	// Bytes is their size; a deletion vector counts its blob (several
	// share one Puffin file), not the whole file.
	Bytes                                 int64
	PositionDeletes, EqualityDeletes, DVs int
	// ManifestsDropped are the delete manifests whose every live entry is
	// dangling; ManifestsRewritten those that also hold live deletes, which
	// a removal rewrites as delete manifests of their spec.
	ManifestsDropped, ManifestsRewritten int
}

// FindDangling is the dangling delete files of tbl's current snapshot
// (danglingDeletes): what remove_dangling_deletes removes.
func FindDangling(ctx context.Context, tbl *table.Table) (*Dangling, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil || !mayHaveDeletes(snap) {
		return &Dangling{}, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open table io: %w", err)
	}
	return danglingDeletes(ctx, fs, tbl.Metadata(), snap, snap)
}

// DanglingAgainst is the delete files live in deletesOf that can apply to
// no live data file of dataOf (danglingDeletes' rules), both snapshots of
// md: what an engine's rewrite committed as dataOf, with deletesOf its
// parent, may drop (docs/engines.md).
func DanglingAgainst(ctx context.Context, fs icebergio.IO, md table.Metadata, deletesOf, dataOf *table.Snapshot) (*Dangling, error) {
	return danglingDeletes(ctx, fs, md, deletesOf, dataOf)
}

// danglingDeletes is the delete files of snap that can apply to no live
// data file, by the rules a scan matches deletes to data files with (the
// Iceberg spec's, as Java's DeleteFileIndex and iceberg-go's planner apply
// them):
//
//   - a position delete or deletion vector whose file_path bounds (or a
//     DV's referenced data file) allow only paths gone from the snapshot,
//     removed by an earlier rewrite that left them behind (Trino's optimize,
//     Spark's rewrite_data_files without remove-dangling-deletes do). A
//     position delete without file_path bounds, or with bounds that may be
//     truncated, is never dangling by this rule (it may name any file);
//   - an equality delete that no live data file it could apply to (its own
//     spec and partition, or every file when its spec is unpartitioned) is
//     older than: it applies to a data file only when its sequence number
//     is above the file's, and a file added later gets a higher one. This
//     is iceberg-go's own rule (compaction.DecideDeadEqualityDeletesWithSpecs)
//     over the snapshot's every live data file.
//
// Position deletes are not also decided by sequence number (one older
// than every data file of its partition): an engine's rewrite keeps its
// inputs' sequence numbers, so such files are rare, and their paths decide
// them anyway once their data files are gone.
//
// They delete nothing, so a rewrite drops them in its snapshot, as Java's
// RewriteDataFiles does with remove-dangling-deletes, and
// remove_dangling_deletes drops them on their own. Otherwise they stay in
// the table and the next plan counts them as deletes its files still carry,
// compacting the same files again on every run. Only the data file paths
// the position deletes can name are held, not every live path.
//
// The delete files are those of snap, the data files they are matched
// against those of dataOf (snap itself, except for DanglingAgainst).
func danglingDeletes(ctx context.Context, fs icebergio.IO, md table.Metadata, snap, dataOf *table.Snapshot) (*Dangling, error) {
	if snap == nil || dataOf == nil {
		return &Dangling{}, nil
	}
	delMans, err := snap.Manifests(fs)
	if err != nil {
		return nil, err
	}
	dataMans := delMans
	if dataOf != snap {
		if dataMans, err = dataOf.Manifests(fs); err != nil {
			return nil, err
		}
	}
	d := &danglingScan{ctx: ctx, fs: fs, delMans: delMans, dataMans: dataMans,
		exact: map[string][]danglingCandidate{}, eqManifest: map[string]int{}, liveDeletes: map[int]int{}}
	if err := d.each(iceberg.ManifestContentDeletes, d.deleteEntry); err != nil {
		return &Dangling{}, err
	}
	if len(d.exact) == 0 && len(d.ranges) == 0 && len(d.eq) == 0 {
		return &Dangling{}, nil
	}
	d.survey = icecompaction.NewSurvivorSurvey()
	if err := d.each(iceberg.ManifestContentData, d.dataEntry); err != nil {
		return nil, err
	}
	return d.decide(md)
}

// danglingScan is danglingDeletes' state: the delete files that may
// dangle, gathered from the delete manifests (deleteEntry), struck off by
// the live data files (dataEntry), and what is left (decide).
type danglingScan struct {
	ctx               context.Context
	fs                icebergio.IO
	delMans, dataMans []iceberg.ManifestFile

	exact       map[string][]danglingCandidate // a single path they can name
	ranges      []*rangeDelete
	eq          []iceberg.ManifestEntry
	eqManifest  map[string]int
	liveDeletes map[int]int // manifest ordinal -> live delete entries
	survey      *icecompaction.SurvivorSurvey
}

type rangeDelete struct {
	lower, upper []byte
	df           iceberg.DataFile
	manifest     int
	live         bool
}

type danglingCandidate struct {
	df       iceberg.DataFile
	manifest int
}

// each calls fn with every live entry of the manifests of one content.
func (d *danglingScan) each(content iceberg.ManifestContent, fn func(int, iceberg.ManifestEntry)) error {
	mans := d.delMans
	if content == iceberg.ManifestContentData {
		mans = d.dataMans
	}
	for i, m := range mans {
		if m.ManifestContent() != content {
			continue
		}
		for e, err := range m.Entries(d.fs, true) {
			if err != nil {
				return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			fn(i, e)
		}
		if err := d.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// deleteEntry files a live delete entry of manifest i under what it can
// name: one path, a range of paths, or (equality deletes) its partition.
func (d *danglingScan) deleteEntry(i int, e iceberg.ManifestEntry) {
	df := e.DataFile()
	d.liveDeletes[i]++
	if df.ContentType() == iceberg.EntryContentEqDeletes {
		d.eq = append(d.eq, e)
		d.eqManifest[df.FilePath()] = i
		return
	}
	if df.ContentType() != iceberg.EntryContentPosDeletes {
		return
	}
	if ref := df.ReferencedDataFile(); ref != nil && *ref != "" {
		d.exact[*ref] = append(d.exact[*ref], danglingCandidate{df, i})
		return
	}
	lo, hi := df.LowerBoundValues()[posDeleteFilePathID], df.UpperBoundValues()[posDeleteFilePathID]
	switch {
	case len(lo) <= truncatedBoundLength || len(hi) <= truncatedBoundLength:
		// No bounds, or bounds that may be truncated (writers cut
		// string bounds to 16 characters by default): it may name
		// any file.
	case bytes.Equal(lo, hi):
		d.exact[string(lo)] = append(d.exact[string(lo)], danglingCandidate{df, i})
	case len(d.ranges) < maxRangeDeletes:
		d.ranges = append(d.ranges, &rangeDelete{lower: lo, upper: hi, df: df, manifest: i})
	}
}

// dataEntry strikes off what a live data file keeps alive: the deletes
// naming its path or a range holding it; and adds it to the survey the
// equality deletes are decided by.
func (d *danglingScan) dataEntry(_ int, e iceberg.ManifestEntry) {
	df := e.DataFile()
	if len(d.eq) > 0 {
		d.survey.AddSurvivorWithSpec(df.SpecID(), df.Partition(), e.SequenceNum())
	}
	p := df.FilePath()
	delete(d.exact, p)
	if len(d.ranges) == 0 {
		return
	}
	pb := []byte(p)
	for _, r := range d.ranges {
		if !r.live && bytes.Compare(r.lower, pb) <= 0 && bytes.Compare(pb, r.upper) <= 0 {
			r.live = true
		}
	}
}

// decide is what dangles once every data file was seen: the exact and
// range deletes not struck off, the equality deletes iceberg-go's rule
// finds dead, and how many manifests that drops or rewrites.
func (d *danglingScan) decide(md table.Metadata) (*Dangling, error) {
	out := &Dangling{}
	dangling := map[int]int{} // manifest ordinal -> dangling entries
	seen := map[string]bool{}
	add := func(df iceberg.DataFile, manifest int) {
		dangling[manifest]++
		// An entry listed twice (manifests merged by a writer) is one
		// file; a DV is told apart by its data file (reach.FileKey).
		key := reach.FileKey(df)
		if seen[key] {
			return
		}
		seen[key] = true
		out.Files = append(out.Files, df)
		switch {
		case df.ContentType() == iceberg.EntryContentEqDeletes:
			out.EqualityDeletes++
		case df.FileFormat() == iceberg.PuffinFile:
			out.DVs++
		default:
			out.PositionDeletes++
		}
		out.Bytes += reach.SummarySize(df)
	}
	for _, cs := range d.exact {
		for _, c := range cs {
			add(c.df, c.manifest)
		}
	}
	for _, r := range d.ranges {
		if !r.live {
			add(r.df, r.manifest)
		}
	}
	if len(d.eq) > 0 {
		dead, err := icecompaction.DecideDeadEqualityDeletesWithSpecs(d.survey, d.eq, md)
		if err != nil {
			return nil, fmt.Errorf("decide dangling equality deletes: %w", err)
		}
		for _, df := range dead {
			add(df, d.eqManifest[df.FilePath()])
		}
	}
	for i, n := range dangling {
		if n >= d.liveDeletes[i] {
			out.ManifestsDropped++
		} else {
			out.ManifestsRewritten++
		}
	}
	return out, nil
}

// RemoveDangling commits one replace snapshot that removes the dangling
// delete files of tbl's current snapshot (danglingDeletes) and changes
// nothing else, through the commit check (reach.CheckSnapshots: the live
// files are exactly the parent's minus those delete files). "replace", as
// Java's RemoveDanglingDeleteFiles action commits it (RewriteFiles): no
// row changes, so incremental readers have nothing to read. iceberg-go's
// rewrite drops a delete manifest whose every live entry goes and rewrites
// one that keeps some, as a delete manifest of its spec; the removed
// entries are listed as DELETED in one new manifest, as in every commit
// that removes files. When nothing is
// dangling nothing is committed (the returned Dangling is empty and the
// table is tbl).
func RemoveDangling(ctx context.Context, tbl *table.Table, opts Options) (*table.Table, *Dangling, error) {
	d, err := FindDangling(ctx, tbl)
	if err != nil || len(d.Files) == 0 {
		return tbl, d, err
	}
	// A commit of no rewritten group retires exactly the dangling deletes
	// (no file is rewritten, so no other delete file is dead).
	next, _, err := commitGroups(ctx, tbl, nil, opts)
	if err != nil {
		return nil, d, err
	}
	return next, d, nil
}
