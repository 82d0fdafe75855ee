package diff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/icewright/icewright/config"
)

// Defaults of iceberg-go's compaction.DefaultConfig, used when the effective
// policy leaves a value at zero. They are repeated here (not imported) because
// diff may not import iceberg-go; the differential test pins them.
const (
	// deleteRatio is iceberg-go's (and Spark's) delete-ratio threshold, not
	// a policy attribute. The policy's own defaults are config's.
	deleteRatio float64 = 0.3
	// packingLookback is compaction.DefaultPackingLookback: how many open
	// bins the packer keeps before it emits the oldest one.
	packingLookback = 128
)

// CompactionSelection is the per-file rule of iceberg-go's compaction.Config.
// Providers apply IsCandidate to every live data file while streaming the
// manifests and keep only the candidates' sizes (PartitionStats.CandidateSizes),
// so diff can bin-pack them without an object per file.
type CompactionSelection struct {
	Target              int64
	Min                 int64 // files below this size are candidates
	Max                 int64 // files above this size are never rewritten for size alone
	MinInputFiles       int
	DeleteFileThreshold int
	DeleteRatio         float64 // 0 disables the rule
	// Where is compaction.where as written ("" when unset): only files of
	// partitions that may hold matching rows are candidates. Providers parse
	// and evaluate it (providers/compaction.WhereFilter); diff only carries it.
	Where string
	// Strategy is compaction.strategy ("" for binpack). Under "sort" and
	// "zorder", files that record another sort order than the rewrite's
	// are candidates whatever their size (providers/compaction.StaleSort
	// decides which; PartitionStats.StaleSortFiles counts them).
	Strategy string
	// Engine is compaction.engine ("" or "local": icewright's own). With an
	// engine, files are not taken for their sort order (no StaleSortFiles):
	// the partitions above engine_above go to an engine whose rewrite
	// selects files by size alone, so the same rule must hold for all.
	Engine string
	// SortOrder is the policy's sort_order, the order a sort rewrite
	// writes (nil: the table's own).
	SortOrder []SortField
}

// SelectionFor derives the selection rules from an effective policy, filling
// config's defaults where a policy built without config.Resolve carries
// zero values.
func SelectionFor(pol *config.Effective) CompactionSelection {
	target := pol.TargetFileSize.Value
	if target <= 0 {
		target = config.DefaultTargetFileSize
	}
	c := pol.Compaction
	s := CompactionSelection{
		Target:              target,
		Min:                 c.MinFileSize.Value,
		Max:                 c.MaxFileSize.Value,
		MinInputFiles:       c.MinInputFiles.Value,
		DeleteFileThreshold: c.DeleteFileThreshold.Value,
		DeleteRatio:         deleteRatio,
		Where:               c.Where.Value,
		Strategy:            c.Strategy.Value,
		Engine:              c.Engine.Value,
	}
	if pol.SortOrder.Set {
		s.SortOrder = sortFieldsFromConfig(pol.SortOrder.Value)
	}
	// An unset min of zero means "no default was resolved", not "nothing is
	// small": fall back to the default share of the target.
	if s.Min <= 0 && !c.MinFileSize.Set {
		s.Min = target * config.DefaultMinFileSizePercent / 100
	}
	if s.Max <= 0 {
		s.Max = target * config.DefaultMaxFileSizePercent / 100
	}
	if s.MinInputFiles <= 0 {
		s.MinInputFiles = config.DefaultMinInputFiles
	}
	if s.DeleteFileThreshold <= 0 {
		s.DeleteFileThreshold = config.DefaultDeleteFileThreshold
	}
	return s
}

// IsCandidate mirrors compaction.Config.isCandidate: a file with enough delete
// files, or enough of its rows shadowed by file-scoped deletes, is always
// rewritten; otherwise only files below Min are. deleteFiles counts position,
// equality and deletion-vector files applying to the data file; deletedRows
// sums the record counts of its file-scoped deletes (DVs and path-scoped
// position deletes).
func (s CompactionSelection) IsCandidate(size int64, deleteFiles int, records, deletedRows int64) bool {
	if deleteFiles >= s.DeleteFileThreshold {
		return true
	}
	if s.DeleteRatio > 0 && records > 0 {
		deleted := min(deletedRows, records)
		if float64(deleted)/float64(records) >= s.DeleteRatio {
			return true
		}
	}
	if size > s.Max {
		return false
	}
	return size < s.Min
}

// packEnd re-implements iceberg-go's internal SlicePacker.PackEnd (first-fit
// with a lookback of open bins, fed from the end of the slice, bins and their
// items reversed back afterwards). It is internal to iceberg-go, so it is
// copied in behaviour, not imported; the differential test compares the two.
// It returns the bins as index lists into weights.
func packEnd(weights []int64, target int64, lookback int) [][]int {
	type bin struct {
		weight int64
		items  []int
	}
	var bins []bin
	var out [][]int
	emit := func() {
		out = append(out, bins[0].items)
		bins = bins[1:]
	}
	for i := len(weights) - 1; i >= 0; i-- {
		w := weights[i]
		placed := false
		for b := range bins {
			if bins[b].weight+w <= target {
				bins[b].weight += w
				bins[b].items = append(bins[b].items, i)
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		bins = append(bins, bin{weight: w, items: []int{i}})
		if len(bins) > lookback {
			emit()
		}
	}
	for len(bins) > 0 {
		emit()
	}
	// Undo the reversal: bins in slice order, items ascending.
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	for _, items := range out {
		for l, r := 0, len(items)-1; l < r; l, r = l+1, r-1 {
			items[l], items[r] = items[r], items[l]
		}
	}
	return out
}

// compactGroups packs one partition's candidates exactly as
// compaction.Config.PlanCompaction does: nothing when the partition has fewer
// than MinInputFiles candidates, and bins below MinInputFiles are dropped.
// Each group names its files when the partition carries the candidates'
// paths (PartitionStats.CandidatePaths).
func (s CompactionSelection) compactGroups(p PartitionStats) []CompactGroup {
	sizes := p.CandidateSizes
	if len(sizes) < s.MinInputFiles || len(sizes) == 0 {
		return nil
	}
	var groups []CompactGroup
	for _, bin := range packEnd(sizes, s.Target, packingLookback) {
		if len(bin) < s.MinInputFiles {
			continue
		}
		g := CompactGroup{InputFiles: len(bin), Files: candidateFiles(p, bin)}
		for _, i := range bin {
			g.InputBytes += sizes[i]
		}
		g.EstimatedOutputFiles = max(1, int((g.InputBytes+s.Target-1)/s.Target))
		groups = append(groups, g)
	}
	return groups
}

// candidateFiles are the paths of p's candidates at indexes (all of them
// when indexes is nil); nil when p carries no paths.
func candidateFiles(p PartitionStats, indexes []int) []string {
	if len(p.CandidatePaths) != len(p.CandidateSizes) {
		return nil
	}
	if indexes == nil {
		return slices.Clone(p.CandidatePaths)
	}
	files := make([]string, len(indexes))
	for i, at := range indexes {
		files[i] = p.CandidatePaths[at]
	}
	return files
}

// sortsWholePartitions is whether the strategy rewrites each partition as
// one group (sort and z-order).
func (s CompactionSelection) sortsWholePartitions() bool {
	switch strings.ToLower(s.Strategy) {
	case "sort", "zorder":
		return true
	}
	return false
}

// partitionGroups are the groups the rewrite makes of partition p, before
// max_bytes_per_run. A partition with files written under another sort
// order (StaleSortFiles) is one group of all its candidates, whatever
// min_input_files (providers/compaction.StaleSort); the others are packed
// as iceberg-go packs them, but for a lone file with no delete to apply:
// one file in, one file out, no deletes to apply and no other file to grow
// it. Rewriting it changes nothing, and would be planned again after every
// apply (min_input_files = 1). That holds for a file of an older spec too:
// a rewrite keeps a group's spec (the partition tuple is the file's), it
// never moves files to the current one. A stale file alone is rewritten:
// its order changes.
func (s CompactionSelection) partitionGroups(p PartitionStats) []CompactGroup {
	if p.StaleSortFiles > 0 && len(p.CandidateSizes) > 0 {
		g := CompactGroup{InputFiles: len(p.CandidateSizes), StaleSortFiles: int(p.StaleSortFiles), Files: candidateFiles(p, nil)}
		for _, n := range p.CandidateSizes {
			g.InputBytes += n
		}
		g.EstimatedOutputFiles = max(1, int((g.InputBytes+s.Target-1)/s.Target))
		return []CompactGroup{g}
	}
	groups := s.compactGroups(p)
	if s.sortsWholePartitions() && len(groups) > 1 {
		// A sort or z-order rewrites the partition as one group of all
		// its bins (providers' sortsWholePartitions, PlanConfig
		// PerPartition), so its output files are consecutive ranges of
		// one order; the lone-file rule below then applies to the whole.
		one := CompactGroup{}
		for _, g := range groups {
			one.InputFiles += g.InputFiles
			one.InputBytes += g.InputBytes
			one.Files = append(one.Files, g.Files...)
		}
		one.EstimatedOutputFiles = max(1, int((one.InputBytes+s.Target-1)/s.Target))
		groups = []CompactGroup{one}
	}
	if p.DeleteFiles > 0 {
		return groups
	}
	return slices.DeleteFunc(groups, func(g CompactGroup) bool { return g.InputFiles == 1 })
}

// planCompact packs each partition's candidates as iceberg-go's planner does.
// It also returns how many snapshots the rewrite will commit on main, which
// expiry must count in.
func planCompact(pol *config.Effective, st *TableState) (Action, int, bool) {
	a, commits, _, ok := planCompactDelegating(pol, st)
	return a, commits, ok
}

// planCompactDelegating is planCompact, also returning the refusals of the
// partitions the policy's engine cannot be bounded to (docs/engines.md).
// A partition whose planned input is above compaction.engine_above goes to
// the engine whole (one call, one commit), so its groups carry the engine's
// name and the action one EngineCall for it.
func planCompactDelegating(pol *config.Effective, st *TableState) (Action, int, []Refusal, bool) {
	c := pol.Compaction
	if !c.Declared {
		return Action{}, 0, nil, false
	}
	sel := SelectionFor(pol)
	act := CompactAction{
		Strategy:       c.Strategy.Value,
		TargetFileSize: sel.Target,
		Groups:         []CompactGroup{},
		Where:          sel.Where,
	}
	if act.Strategy == "" {
		act.Strategy = "binpack"
	}
	var order []SortField
	switch act.Strategy {
	case "sort":
		// The rewrite sorts by the order the table will have after
		// replace_sort_order, which runs first.
		if pol.SortOrder.Set {
			order = sortFieldsFromConfig(pol.SortOrder.Value)
		} else {
			order = st.SortOrder
		}
		act.SortOrder = sortStrings(order)
	case "zorder":
		act.ZOrderColumns = c.ZOrderColumns.Value
	}
	prices, priced := pol.Pricing.For(st.Location)
	if c.MaxCost.Value > 0 && !priced {
		return Action{}, 0, []Refusal{{Action: string(Compact), Reason: reason("compaction.max_cost", strconv.FormatFloat(c.MaxCost.Value, 'g', -1, 64), c.MaxCost.Origin, c.DeclRange) +
			" needs prices, and the table's storage (" + st.Location + ") has none: set a pricing block with its prices (docs/cost.md), or use max_cpu_hours or max_bytes_per_run"}}, false
	}
	var refusals []Refusal
	partitions := 0
	assign := rowIDsAssignable(pol, st)
	var cands []budgetCandidate
	toEngine := map[int]bool{}
	for pi, p := range st.Partitions {
		// Files iceberg-go cannot open (escaped file: URIs, another
		// storage) are no obstacle to an engine that opens them as written.
		// A partition rewritten for its files' order stays with icewright:
		// an engine's rewrite selects by size alone, and the stale files
		// would be planned again after every apply.
		toEngine[pi] = delegates(pol, sel.plannedBytes(p)) && p.StaleSortFiles == 0
		if _, unwritable := st.UnwritableSpecs[p.SpecID]; unwritable || (p.NoRowIDCandidates > 0 && !assign) || (!toEngine[pi] && (p.EscapedFileURIs > 0 || p.ForeignFiles > 0)) {
			continue // refused: see compactRefusals
		}
		for _, g := range sel.partitionGroups(p) {
			g.SpecID, g.Partition = p.SpecID, p.Partition
			cands = append(cands, budgetCandidate{partition: pi, group: g, toEngine: toEngine[pi]})
		}
	}
	keptBy := withinBudgets(pol, st, &act, cands, prices, priced)
	for pi, p := range st.Partitions {
		kept := keptBy[pi]
		if len(kept) == 0 {
			continue
		}
		if toEngine[pi] {
			call, refusal := delegate(pol, st, &act, p, kept, order)
			if refusal != nil {
				refusals = append(refusals, *refusal)
				continue
			}
			act.EngineCalls = append(act.EngineCalls, call)
			for i := range kept {
				kept[i].Engine = call.Engine
			}
		}
		partitions++
		for _, g := range kept {
			act.AssignRowIDs = act.AssignRowIDs || p.NoRowIDCandidates > 0
			act.InputFiles += g.InputFiles
			act.InputBytes += g.InputBytes
			act.EstimatedOutputFiles += g.EstimatedOutputFiles
			act.Groups = append(act.Groups, g)
		}
	}
	if len(act.Groups) == 0 {
		return Action{}, 0, refusals, false
	}
	act.Partitions = partitions
	commits := compactCommits(&act, c.PartialProgress.Value)
	act.Commits = commits
	why := compactReason(&act, sel, c)
	return Action{
		Type:    Compact,
		Reason:  why,
		Compact: &act,
	}, commits, refusals, true
}

// compactCommits counts the commits of the action. icewright's rewrite
// (providers/compaction) commits all its groups in one snapshot, or with
// partial_progress one snapshot per group; an engine commits once per
// call.
func compactCommits(act *CompactAction, partialProgress bool) int {
	local := len(act.Groups)
	for _, g := range act.Groups {
		if g.Engine != "" {
			local--
		}
	}
	commits := len(act.EngineCalls)
	switch {
	case local > 0 && partialProgress:
		commits += local
	case local > 0:
		commits++
	}
	if act.AssignRowIDs {
		commits++ // the manifest rewrite that assigns the row ids
	}
	return commits
}

// compactReason says why the action is planned, naming the settings
// that decided it.
func compactReason(act *CompactAction, sel CompactionSelection, c config.CompactionPolicy) string {
	why := reason("compaction.min_file_size", quote(config.FormatSizeExact(sel.Min)), c.MinFileSize.Origin, c.DeclRange)
	if act.Where != "" {
		why += "; " + reason("compaction.where", quote(act.Where), c.Where.Origin, c.DeclRange)
	}
	stale := 0
	for _, g := range act.Groups {
		stale += g.StaleSortFiles
	}
	if stale > 0 {
		why += fmt.Sprintf("; %d files written under another sort order than the rewrite's, taken whatever their size: ", stale) +
			reason("compaction.strategy", quote(act.Strategy), c.Strategy.Origin, c.DeclRange)
	}
	if len(act.EngineCalls) > 0 {
		why += "; " + reason("compaction.engine", quote(c.Engine.Value), c.Engine.Origin, c.DeclRange)
	}
	return why
}

// compactRefusals are the partitions planCompact leaves out because the
// rewrite would lose information, read the wrong files or fail its commit:
// on a format v3 table, candidate files with no first_row_id (their
// manifests were listed before the table had row lineage, typically a
// table upgraded to v3 with no commit since); files of a spec whose
// manifests cannot be written (TableState.UnwritableSpecs); partitions with
// files named by file: URIs whose path changes when decoded
// (PartitionStats.EscapedFileURIs); partitions with files on another
// storage than the table location's, which the table's IO cannot read
// (PartitionStats.ForeignFiles). They are shown in the plan so that
// apply does not discover them, and the table's other partitions and
// actions still run. Each partition is in one refusal at most.
func compactRefusals(pol *config.Effective, st *TableState) []Refusal {
	if !pol.Compaction.Declared {
		return nil
	}
	sel := SelectionFor(pol)
	var refusals []Refusal
	type held struct{ files, parts int }
	bySpec := map[int]*held{}
	var specs []int
	for _, p := range st.Partitions {
		if _, ok := st.UnwritableSpecs[p.SpecID]; !ok {
			continue
		}
		n := sel.plannedInputs(p)
		if n == 0 {
			continue
		}
		h := bySpec[p.SpecID]
		if h == nil {
			h = &held{}
			bySpec[p.SpecID] = h
			specs = append(specs, p.SpecID)
		}
		h.files += n
		h.parts++
	}
	slices.Sort(specs)
	for _, id := range specs {
		refusals = append(refusals, Refusal{
			Action: string(Compact),
			Reason: fmt.Sprintf("%s in %s of spec %d %s not compacted: %s", dataFiles(bySpec[id].files), partitions(bySpec[id].parts), id, config.Plural(bySpec[id].files, "is", "are"), st.UnwritableSpecs[id]),
		})
	}
	assign := rowIDsAssignable(pol, st)
	var files, parts, escFiles, escParts, forFiles, forParts int64
	for _, p := range st.Partitions {
		if _, ok := st.UnwritableSpecs[p.SpecID]; ok {
			continue
		}
		if p.NoRowIDCandidates > 0 && len(sel.partitionGroups(p)) > 0 && !assign {
			files += p.NoRowIDCandidates
			parts++
			continue
		}
		n := sel.plannedInputs(p)
		if n == 0 || delegates(pol, sel.plannedBytes(p)) {
			continue
		}
		if p.ForeignFiles > 0 {
			forFiles += int64(n)
			forParts++
			continue
		}
		if p.EscapedFileURIs > 0 {
			escFiles += int64(n)
			escParts++
		}
	}
	if files > 0 {
		refusals = append(refusals, Refusal{
			Action: string(Compact),
			Reason: fmt.Sprintf("%s in %s %s no first_row_id (format v3 row lineage): rewriting them would not preserve their rows' _row_id and _last_updated_sequence_number, so they are not compacted. "+
				"Their manifests were listed before the table had row lineage (a table upgraded to v3 with no commit since), and the next v3 manifest list assigns the ids: %s",
				dataFiles(files), partitions(parts), config.Plural(files, "has", "have"), rowIDsHint(pol, st)),
		})
	}
	if forFiles > 0 {
		refusals = append(refusals, Refusal{
			Action: string(Compact),
			Reason: fmt.Sprintf("%s in %s %s not compacted: the table names them, or delete files of their partitions, on another storage than its location %s (first: %s). "+
				"iceberg-go reads a table's files through the one IO of its metadata location's storage (one file system, bucket or container), which cannot open them: a rewrite would fail on the first one. "+
				"Compact these partitions with an engine whose FileIO resolves each path's storage (Java's ResolvingFileIO or HadoopFileIO), or correct the paths; icewright compacts the table's other partitions",
				dataFiles(forFiles), partitions(forParts), config.Plural(forFiles, "is", "are"), st.Location, st.ForeignFile),
		})
	}
	if escFiles > 0 {
		refusals = append(refusals, Refusal{
			Action: string(Compact),
			Reason: fmt.Sprintf("%s in %s %s not compacted: the table names them, or files of their partitions, by file: URIs with percent-escapes (first: %s). "+
				"iceberg-go v0.7.0's local IO opens such a URI percent-decoded, while Java, PyIceberg, Spark, Trino and DuckDB open it as written, and the engines that escape partition values (Java, PyIceberg) put the files there: "+
				"a rewrite would read no file, or another one. Compact these partitions with an engine that reads the paths as written (Spark's rewrite_data_files); icewright compacts the table's other partitions",
				dataFiles(escFiles), partitions(escParts), config.Plural(escFiles, "is", "are"), st.EscapedFileURI),
		})
	}
	return refusals
}

// rowIDsAssignable reports whether the compaction may take candidates
// without first_row_id (PartitionStats.NoRowIDCandidates) because it first
// commits a manifest rewrite (CompactAction.AssignRowIDs): a v3 manifest
// list assigns a first_row_id to every data manifest it lists without one,
// rewritten or carried over (iceberg-go's ManifestListWriter, as Java's),
// and the files inherit theirs from it, so the rewrite after it keeps
// their rows' ids. It holds when the policy lets icewright rewrite manifests
// (a manifests block), a commit can land, and iceberg-go's rewrite of
// today's manifests would commit: it passes a lone manifest per bin
// through and then commits nothing, which assigns nothing.
func rowIDsAssignable(pol *config.Effective, st *TableState) bool {
	if st.FormatVersion < 3 || !pol.Manifests.Declared || st.CommitProblem != "" || len(st.Manifests.Files) == 0 {
		return false
	}
	return manifestsAfterRewrite(st.Manifests.Files, ManifestTarget(pol), st.UnwritableSpecs) < st.Manifests.Count
}

// rowIDsHint says, in a refusal of files without first_row_id, what would
// assign their ids.
func rowIDsHint(pol *config.Effective, st *TableState) string {
	switch {
	case !pol.Manifests.Declared:
		return "with a manifests block in the policy, icewright rewrites the manifests first (that assigns them) and compacts in the same apply; or any commit by a v3 writer (an append) does"
	case st.CommitProblem != "":
		return "icewright commits nothing to this table (see the other refusals); any commit by a v3 writer (an append) assigns them"
	default:
		return "iceberg-go's manifest rewrite leaves these manifests as they are (one per bin: nothing to merge), so it assigns nothing; any commit by a v3 writer (an append, Spark's rewrite_manifests) does"
	}
}

// plannedInputs is how many data files the rewrite of partition p would
// take: the files of its groups, but for a lone file with no delete to
// apply, which is no action (planCompact).
func (s CompactionSelection) plannedInputs(p PartitionStats) int {
	n := 0
	for _, g := range s.partitionGroups(p) {
		n += g.InputFiles
	}
	return n
}

// plannedBytes is the input bytes of partition p's planned groups (as
// plannedInputs counts them), before max_bytes_per_run: what decides
// whether the partition goes to compaction.engine.
func (s CompactionSelection) plannedBytes(p PartitionStats) int64 {
	var n int64
	for _, g := range s.partitionGroups(p) {
		n += g.InputBytes
	}
	return n
}

// compactBlocked is why a planned compaction cannot run at all ("" when it
// can): strategy sort with no order to sort by (neither the policy's
// sort_order nor the table's), an order or zorder columns icewright cannot
// sort this table by (sortOrderBlocked), or what providers found that the
// rewrite would get wrong (TableState.CompactProblem). The plan shows it as
// a refusal instead of an apply that fails.
func compactBlocked(pol *config.Effective, st *TableState) string {
	if pol.Compaction.Strategy.Value == "sort" {
		switch {
		case pol.SortOrder.Set && len(pol.SortOrder.Value) == 0:
			// replace_sort_order installs the unsorted order first.
			return fmt.Sprintf("compaction.strategy = \"sort\" needs a sort order, and %s leaves the table unsorted: set sort_order to the columns to sort by, or use strategy \"binpack\"",
				policySortOrder(pol))
		case !pol.SortOrder.Set && len(st.SortOrder) == 0:
			return "compaction.strategy = \"sort\" needs a sort order, and the policy has no sort_order and the table none: set sort_order in the table's block or policy, or use strategy \"binpack\""
		}
	}
	if why := sortOrderBlocked(pol, st); why != "" {
		return why
	}
	return st.CompactProblem
}

// dataFiles and partitions count the refusals' files and partitions with
// the right noun: "1 data file in 1 partition".
func dataFiles[T ~int | ~int64](n T) string  { return config.CountOf(n, "data file", "data files") }
func partitions[T ~int | ~int64](n T) string { return config.CountOf(n, "partition", "partitions") }
