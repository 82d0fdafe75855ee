package reach

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// ErrCommitCheck marks a commit the commit check refused: the new
// snapshot's live files are not what the change says they are. Nothing was
// sent to the catalog.
var ErrCommitCheck = errors.New("commit check")

// RewriteGroup is one rewritten group: data files replaced by files that
// hold their live rows.
type RewriteGroup struct {
	// Inputs are the replaced data files' paths, as the parent's manifests
	// spell them.
	Inputs []string
	// Outputs are the files written, as the executor built them (path,
	// record count, partition, spec id).
	Outputs []iceberg.DataFile
	// RowsRead are the live rows read from the inputs, deletes applied.
	RowsRead int64
	// Target, when set, moves the group to another spec (partition
	// ageing): its outputs must be in Target's spec and partition, and each
	// input must coarsen to that partition (Coarsen). Without it the outputs
	// stay in the inputs' spec and partition.
	Target *Target
}

// Change is what a commit that adds a snapshot means to do to its branch's
// live data and delete files. The zero Change changes none: a manifest
// rewrite.
type Change struct {
	Groups []RewriteGroup
	// RetiredDeletes are the delete files the commit removes (dead or
	// dangling once the groups are rewritten).
	RetiredDeletes []iceberg.DataFile
}

// FileKey names one live entry of a table: a data, position or equality
// delete file is its path; a deletion vector is its Puffin file and the
// data file it references, because one Puffin file holds the DVs of
// several data files (Trino and Java write them so).
func FileKey(df iceberg.DataFile) string {
	if ref := df.ReferencedDataFile(); ref != nil && table.IsDeletionVector(df) {
		return df.FilePath() + "\x00" + *ref
	}
	return df.FilePath()
}

// CheckCommit checks a commit before it is sent: updates applied to cur
// (the catalog's current metadata, which the commit's requirements were
// validated against) must move each branch they move from its head in cur
// to a new snapshot whose parent is that head and whose live files are the
// head's changed by ch (CheckSnapshots). A commit that adds no snapshot to
// a branch passes.
func CheckCommit(ctx context.Context, fsys iceio.IO, cur table.Metadata, updates []table.Update, ch Change) error {
	staged, err := table.UpdateTableMetadata(cur, updates, "")
	if err != nil {
		return fmt.Errorf("%w: apply the commit's updates: %w", ErrCommitCheck, err)
	}
	known := map[int64]bool{}
	for _, s := range cur.Snapshots() {
		known[s.SnapshotID] = true
	}
	var refs []string
	for name := range staged.Refs() {
		refs = append(refs, name)
	}
	slices.Sort(refs)
	for _, name := range refs {
		newSnap := staged.SnapshotByName(name)
		if newSnap == nil || known[newSnap.SnapshotID] {
			continue
		}
		old := cur.SnapshotByName(name)
		if old == nil {
			return &CheckError{Differences: []string{fmt.Sprintf("branch %s has no snapshot to check snapshot %d against", name, newSnap.SnapshotID)}}
		}
		if err := CheckSnapshots(ctx, fsys, staged, old.SnapshotID, newSnap.SnapshotID, ch); err != nil {
			return err
		}
	}
	return nil
}

// CheckError lists what differed between a new snapshot and its parent
// changed as the commit meant to.
type CheckError struct {
	Differences []string
}

func (e *CheckError) Error() string {
	const shown = 5
	d := e.Differences
	msg := "commit check: " + strings.Join(d[:min(len(d), shown)], "; ")
	if len(d) > shown {
		msg += fmt.Sprintf("; and %d more differences", len(d)-shown)
	}
	return msg
}

func (e *CheckError) Is(target error) bool { return target == ErrCommitCheck }

// CheckSnapshots checks, from manifests alone, that snapshot newID of meta
// is snapshot oldID changed by ch and nothing else:
//
//   - its parent is oldID;
//   - its live data and delete files are exactly oldID's, minus the groups'
//     inputs and the retired delete files, plus the groups' outputs, each
//     unchanged file with the same record count, partition, spec id and
//     content, each output as the executor built it, in its group's
//     partition and spec;
//   - each group's outputs hold as many records as the rows it read, which
//     are no more than its inputs' records;
//   - each total of its summary (total-data-files, total-records, ...) is
//     the parent's moved by exactly the change of the live set, a total the
//     parent lacks counting from 0 as iceberg-go counts it: right whenever
//     the parent's was.
//
// It is one Walk over both snapshots. A manifest both list (as often) holds
// the same entries in both and is not read: the cost follows the
// manifests the commit wrote or dropped, not the table. An executor of
// another engine commits through the same check: it needs the two
// snapshots in one metadata and the change it meant.
func CheckSnapshots(ctx context.Context, fsys iceio.IO, meta table.Metadata, oldID, newID int64, ch Change) error {
	oldSnap, newSnap := meta.SnapshotByID(oldID), meta.SnapshotByID(newID)
	if oldSnap == nil || newSnap == nil || oldID == newID {
		return fmt.Errorf("%w: snapshots %d and %d are not two snapshots of the metadata", ErrCommitCheck, oldID, newID)
	}
	var diffs []string
	if p := newSnap.ParentSnapshotID; p == nil || *p != oldID {
		diffs = append(diffs, fmt.Sprintf("the new snapshot %d names parent %s, the branch head is %d", newID, parentName(p), oldID))
	}
	var listedOld, listedNew []int // by manifest ordinal: how many times each snapshot lists it
	grow := func(s []int, i int) []int {
		for len(s) <= i {
			s = append(s, 0)
		}
		return s
	}
	files := map[string]*seenFile{}
	var sums [2]liveTotals
	err := Walk(ctx, Spec{Meta: meta, FS: fsys, Snapshots: []int64{oldID, newID}, Consumers: []Consumer{{
		Listed: func(i int, snap int64) {
			listedOld, listedNew = grow(listedOld, i), grow(listedNew, i)
			if snap == oldID {
				listedOld[i]++
			} else {
				listedNew[i]++
			}
		},
		File: func(f File) error {
			switch f.Category {
			case CategoryManifest:
				if listedOld[f.Ordinal] == listedNew[f.Ordinal] {
					return SkipEntries // the same entries on both sides
				}
			case CategoryData, CategoryDelete:
				no, nn := listedOld[f.Ordinal], listedNew[f.Ordinal]
				df := f.Entry.DataFile()
				s := files[FileKey(df)]
				if s == nil {
					s = &seenFile{}
					files[FileKey(df)] = s
				}
				a := attrsOf(df)
				if no > 0 && s.part == nil {
					s.part = df.Partition()
				}
				s.side[0].add(a, no)
				s.side[1].add(a, nn)
				sums[0].add(df, no)
				sums[1].add(df, nn)
			}
			return nil
		},
	}}})
	if err != nil {
		return fmt.Errorf("%w: read the snapshots' manifests: %w", ErrCommitCheck, err)
	}
	diffs = append(diffs, compareFiles(meta, files, ch)...)
	diffs = append(diffs, compareSummary(oldSnap.Summary, newSnap.Summary, sums[1].minus(sums[0]))...)
	if len(diffs) > 0 {
		return &CheckError{Differences: diffs}
	}
	return nil
}

func parentName(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}

// fileAttrs are what must not change about a file that stays live.
type fileAttrs struct {
	content   iceberg.ManifestEntryContent
	records   int64
	spec      int32
	partition string
}

func attrsOf(df iceberg.DataFile) fileAttrs {
	return fileAttrs{content: df.ContentType(), records: df.Count(), spec: df.SpecID(), partition: partitionString(df.Partition())}
}

func (a fileAttrs) String() string {
	p := a.partition
	if p == "" {
		p = "()"
	}
	return fmt.Sprintf("%s, %d records, spec %d, partition %s", contentName(a.content), a.records, a.spec, p)
}

// partitionString spells a partition tuple by field id; a null value and
// an absent one are the same.
func partitionString(p map[int]any) string {
	ids := slices.Sorted(maps.Keys(p))
	var b strings.Builder
	for _, id := range ids {
		if p[id] == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d=%v", id, p[id])
	}
	return b.String()
}

func contentName(c iceberg.ManifestEntryContent) string {
	switch c {
	case iceberg.EntryContentData:
		return "data file"
	case iceberg.EntryContentPosDeletes:
		return "position delete file"
	case iceberg.EntryContentEqDeletes:
		return "equality delete file"
	}
	return "file"
}

// seenSide is one snapshot's view of a file key: how many live entries it
// has there and the first one's attributes.
type seenSide struct {
	n     int
	attrs fileAttrs
}

func (s *seenSide) add(a fileAttrs, times int) {
	if times == 0 {
		return
	}
	if s.n == 0 {
		s.attrs = a
	}
	s.n += times
}

type seenFile struct {
	side [2]seenSide // parent, new
	// part is the partition tuple of its first entry in the parent, for
	// the check of a group's Target.
	part map[int]any
}

// compareFiles checks the live entries the two snapshots do not share.
func compareFiles(meta table.Metadata, files map[string]*seenFile, ch Change) []string {
	removed := map[string]bool{}
	var retiredKeys []string
	for _, g := range ch.Groups {
		for _, p := range g.Inputs {
			removed[p] = true
		}
	}
	for _, df := range ch.RetiredDeletes {
		removed[FileKey(df)] = true
		retiredKeys = append(retiredKeys, FileKey(df))
	}
	added := map[string]iceberg.DataFile{}
	for _, g := range ch.Groups {
		for _, df := range g.Outputs {
			added[FileKey(df)] = df
		}
	}
	keys := map[string]bool{}
	for k := range files {
		keys[k] = true
	}
	for k := range removed {
		keys[k] = true
	}
	for k := range added {
		keys[k] = true
	}
	var (
		missing, extra      = map[string][]string{}, map[string][]string{}
		notRemoved, changed []string
		repeated            []string
		diffs               []string
	)
	noun := func(a fileAttrs) string {
		if a.content == iceberg.EntryContentData {
			return "data"
		}
		return "delete"
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		s := files[k]
		if s == nil {
			s = &seenFile{}
		}
		old, nw := s.side[0], s.side[1]
		path, _, _ := strings.Cut(k, "\x00")
		want := old.n
		if removed[k] {
			if old.n == 0 {
				notRemoved = append(notRemoved, path)
			}
			want = 0
		}
		if out, ok := added[k]; ok {
			if old.n > 0 {
				diffs = append(diffs, fmt.Sprintf("output %s is already live in the parent snapshot", path))
			}
			want++
			if nw.n > 0 && nw.attrs != attrsOf(out) {
				diffs = append(diffs, fmt.Sprintf("output %s: the new snapshot records %s, the executor wrote %s", path, nw.attrs, attrsOf(out)))
			}
		}
		switch {
		case nw.n < want:
			a := old.attrs
			if old.n == 0 {
				a = attrsOf(added[k])
			}
			missing[noun(a)] = append(missing[noun(a)], path)
		case nw.n > want && want > 0:
			repeated = append(repeated, fmt.Sprintf("%s (%d times, not %d)", path, nw.n, want))
		case nw.n > want:
			extra[noun(nw.attrs)] = append(extra[noun(nw.attrs)], path)
		}
		if old.n > 0 && nw.n > 0 && !removed[k] && old.attrs != nw.attrs {
			changed = append(changed, fmt.Sprintf("%s: %s in the parent snapshot, %s in the new one", path, old.attrs, nw.attrs))
		}
	}
	for _, noun := range []string{"data", "delete"} {
		if ps := missing[noun]; len(ps) > 0 {
			diffs = append(diffs, listed(len(ps), "live "+noun+" file", "missing from the new snapshot", ps))
		}
		if ps := extra[noun]; len(ps) > 0 {
			diffs = append(diffs, listed(len(ps), noun+" file", "in the new snapshot that the change does not add", ps))
		}
	}
	if len(repeated) > 0 {
		diffs = append(diffs, listed(len(repeated), "file", "live more often in the new snapshot than the change makes it", repeated))
	}
	if len(notRemoved) > 0 {
		diffs = append(diffs, listed(len(notRemoved), "file", "the change replaces or retires not removed from the parent snapshot's live files (not live in the parent, or still live in the new snapshot)", notRemoved))
	}
	if len(changed) > 0 {
		diffs = append(diffs, listed(len(changed), "live file", "changed", changed))
	}
	diffs = append(diffs, compareGroups(meta, files, ch)...)
	return diffs
}

// compareGroups checks each group's rows and that its outputs stay in its
// inputs' partition and spec (a rewrite keeps a group's partition), or,
// for a group with a Target, that its outputs are in the target's spec and
// partition and each input coarsens to exactly that partition.
func compareGroups(meta table.Metadata, files map[string]*seenFile, ch Change) []string {
	var diffs []string
	for i, g := range ch.Groups {
		var inRecords, outRecords int64
		var inAttrs *fileAttrs
		want := func() (int32, string) { return inAttrs.spec, inAttrs.partition }
		var target *iceberg.PartitionSpec
		if g.Target != nil {
			target = meta.PartitionSpecByID(g.Target.SpecID)
			if target == nil {
				diffs = append(diffs, fmt.Sprintf("group %d: target spec %d is not in the new metadata", i, g.Target.SpecID))
			}
			want = func() (int32, string) { return int32(g.Target.SpecID), partitionString(g.Target.Partition) }
		}
		for _, p := range g.Inputs {
			s := files[p]
			if s == nil || s.side[0].n == 0 {
				continue
			}
			inRecords += s.side[0].attrs.records
			if inAttrs == nil {
				a := s.side[0].attrs
				inAttrs = &a
			}
			if g.Target == nil || target == nil {
				continue
			}
			from := meta.PartitionSpecByID(int(s.side[0].attrs.spec))
			if from == nil {
				diffs = append(diffs, fmt.Sprintf("group %d: input %s is in spec %d, not in the metadata", i, p, s.side[0].attrs.spec))
				continue
			}
			got, err := Coarsen(*from, *target, s.part)
			if err != nil {
				diffs = append(diffs, fmt.Sprintf("group %d: input %s cannot move to spec %d: %v", i, p, g.Target.SpecID, err))
			} else if ps, ts := partitionString(got), partitionString(g.Target.Partition); ps != ts {
				diffs = append(diffs, fmt.Sprintf("group %d: input %s in partition (%s) coarsens to (%s) in spec %d, not the group's target (%s)",
					i, p, s.side[0].attrs.partition, ps, g.Target.SpecID, ts))
			}
		}
		for _, df := range g.Outputs {
			if s := files[FileKey(df)]; s != nil && s.side[1].n > 0 {
				outRecords += s.side[1].attrs.records
			}
			if inAttrs == nil && g.Target == nil {
				continue
			}
			wantSpec, wantPart := want()
			if a := attrsOf(df); a.spec != wantSpec || a.partition != wantPart {
				whose := "its inputs"
				if g.Target != nil {
					whose = "its target"
				}
				diffs = append(diffs, fmt.Sprintf("group %d: output %s is in spec %d partition (%s), %s in spec %d partition (%s)",
					i, df.FilePath(), a.spec, a.partition, whose, wantSpec, wantPart))
			}
		}
		if outRecords != g.RowsRead {
			diffs = append(diffs, fmt.Sprintf("group %d: its outputs hold %d records in the new snapshot, %d live rows were read", i, outRecords, g.RowsRead))
		}
		if g.RowsRead > inRecords {
			diffs = append(diffs, fmt.Sprintf("group %d: %d live rows read from inputs holding %d records", i, g.RowsRead, inRecords))
		}
	}
	return diffs
}

// listed says "N <noun>s <what>: a, b, c (and k more)".
func listed(n int, noun, what string, items []string) string {
	const shown = 3
	if n != 1 {
		noun += "s"
	}
	s := fmt.Sprintf("%d %s %s: %s", n, noun, what, strings.Join(items[:min(len(items), shown)], ", "))
	if len(items) > shown {
		s += fmt.Sprintf(" (and %d more)", len(items)-shown)
	}
	return s
}

// liveTotals are the summary totals of a set of live entries, counted as
// iceberg-go's snapshot summary counts them.
type liveTotals map[string]int64

func (t *liveTotals) add(df iceberg.DataFile, times int) {
	if times == 0 {
		return
	}
	if *t == nil {
		*t = liveTotals{}
	}
	n := int64(times)
	(*t)["total-files-size"] += n * SummarySize(df)
	switch df.ContentType() {
	case iceberg.EntryContentData:
		(*t)["total-data-files"] += n
		(*t)["total-records"] += n * df.Count()
	case iceberg.EntryContentPosDeletes:
		(*t)["total-delete-files"] += n
		(*t)["total-position-deletes"] += n * df.Count()
	case iceberg.EntryContentEqDeletes:
		(*t)["total-delete-files"] += n
		(*t)["total-equality-deletes"] += n * df.Count()
	}
}

func (t liveTotals) minus(o liveTotals) liveTotals {
	d := liveTotals{}
	for k, v := range t {
		d[k] += v
	}
	for k, v := range o {
		d[k] -= v
	}
	return d
}

// SummarySize is the size a snapshot summary counts for a file, as Java
// Iceberg counts it (SnapshotSummary, ContentFileUtil.contentSizeInBytes):
// a deletion vector is its blob, content_size_in_bytes, not its Puffin
// file, which may hold the DVs of several data files; every other file is
// its file_size_in_bytes. iceberg-go v0.7.0 counts a DV at its whole
// Puffin file (compaction's commit catalog corrects what it sends).
func SummarySize(df iceberg.DataFile) int64 {
	if table.IsDeletionVector(df) {
		if cs := df.ContentSizeInBytes(); cs != nil {
			return *cs
		}
	}
	return df.FileSizeBytes()
}

// summaryTotals are the totals a snapshot summary carries.
var summaryTotals = []string{"total-data-files", "total-delete-files", "total-records", "total-files-size", "total-position-deletes", "total-equality-deletes"}

// compareSummary checks that each total of the new summary is the
// parent's moved by delta, the change of the live set.
func compareSummary(old, nw *table.Summary, delta liveTotals) []string {
	get := func(s *table.Summary, k string) (int64, bool, error) {
		if s == nil {
			return 0, false, nil
		}
		v, ok := s.Properties[k]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, true, err
	}
	var diffs []string
	for _, k := range summaryTotals {
		ov, oHas, oerr := get(old, k)
		nv, nHas, nerr := get(nw, k)
		switch {
		case nerr != nil:
			diffs = append(diffs, fmt.Sprintf("summary %s is not a number: %v", k, nerr))
			continue
		case oerr != nil:
			continue // the parent's own summary is unreadable; nothing to move from
		}
		want := ov + delta[k]
		if !nHas {
			if oHas && want >= 0 {
				diffs = append(diffs, fmt.Sprintf("summary lacks %s, which the parent has (%d; with the change %d)", k, ov, want))
			}
			continue
		}
		if nv != want {
			diffs = append(diffs, fmt.Sprintf("summary %s is %d; the parent's %d moved by the live change %+d makes %d", k, nv, ov, delta[k], want))
		}
	}
	return diffs
}
