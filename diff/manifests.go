package diff

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/icewright/icewright/config"
)

// planManifests rewrites the current snapshot's manifests when there are more
// than max_count of them, now or once the plan's own commits are in
// (manifestsBeforeRewrite: what rewrite_manifests, which runs after them,
// finds). Counting only today's manifests made max_count = 1 take two
// applies. The rewrite is one commit on main, planned only when iceberg-go's
// packing of what it finds leaves fewer.
//
// Manifests of a spec the writer cannot write (TableState.UnwritableSpecs)
// are left as they are, by the plan's estimate and by the rewrite; when
// the rewrite would have merged them, a refusal says why they stay.
func planManifests(pol *config.Effective, st *TableState, c *CompactAction, added int) (Action, []Refusal, bool) {
	m := pol.Manifests
	if !m.Declared {
		return Action{}, nil, false
	}
	maxCount := m.MaxCount.Value
	if maxCount <= 0 && !m.MaxCount.Set {
		maxCount = config.DefaultManifestMaxCount
	}
	target := ManifestTarget(pol)
	files := manifestsBeforeRewrite(st, c, added)
	count, bytes := st.Manifests.Count, st.Manifests.Bytes
	if len(files) > 0 {
		count, bytes = len(files), totalLength(files)
	}
	if max(count, st.Manifests.Count) <= maxCount {
		return Action{}, nil, false
	}
	var refusals []Refusal
	held := map[int]int{}
	for _, f := range files {
		if _, ok := st.UnwritableSpecs[f.SpecID]; ok && f.Data {
			held[f.SpecID]++
		}
	}
	for _, id := range slices.Sorted(maps.Keys(held)) {
		if held[id] > 1 {
			refusals = append(refusals, Refusal{
				Action: string(RewriteManifests),
				Reason: fmt.Sprintf("%s of spec %d %s not rewritten: %s", config.CountOf(held[id], "data manifest", "data manifests"), id, config.Plural(held[id], "is", "are"), st.UnwritableSpecs[id]),
			})
		}
	}
	after := max(1, int((bytes+target-1)/target))
	if len(files) > 0 {
		after = manifestsAfterRewrite(files, target, st.UnwritableSpecs)
	}
	if after >= count {
		// The manifests are already about target size: iceberg-go would
		// report "already optimal" and commit nothing, and a plan that
		// asks for it would never converge.
		return Action{}, refusals, false
	}
	return Action{
		Type:   RewriteManifests,
		Reason: reason("manifests.max_count", strconv.Itoa(maxCount), m.MaxCount.Origin, m.DeclRange),
		Manifests: &ManifestsAction{
			ManifestsBefore:         st.Manifests.Count,
			EstimatedManifestsAfter: after,
			TargetSize:              target,
		},
	}, refusals, true
}

// manifestsBeforeRewrite are the manifests a rewrite_manifests finds
// after the plan's commits before it (added snapshots on main, c's among
// them): those c leaves (manifestsAfterCompaction) and a data manifest of
// an average size for each other commit (partition ageing, dangling
// deletes). Empty without the per-manifest list (ManifestStats.Files).
func manifestsBeforeRewrite(st *TableState, c *CompactAction, added int) []ManifestInfo {
	files := manifestsAfterCompaction(st, c)
	if c != nil {
		added -= c.Commits
	}
	if len(st.Manifests.Files) == 0 || added <= 0 {
		return files
	}
	avg := totalLength(st.Manifests.Files) / int64(len(st.Manifests.Files))
	files = slices.Clone(files)
	for range added {
		files = append(files, ManifestInfo{SpecID: st.DefaultSpecID, Data: true, Length: avg})
	}
	return files
}

// manifestsAfterCompaction is the current snapshot's manifests as the
// plan's compaction c leaves them (st's own without one, or without the
// per-manifest list): iceberg-go's overwrite commit (RewriteFiles) keeps a
// manifest none of whose files it removes, rewrites one with some
// removed to the rest, and drops one with all removed; each commit adds
// a manifest of the files it writes, and one of the entries it removed,
// which the next commit drops (they are all deleted): a commit per spec
// rewritten, each about an average manifest's size. A manifest whose
// live files or whose candidates' manifests are not known is kept. With
// AssignRowIDs the executor first rewrites the manifests themselves: the
// count is then taken as kept, plus a manifest per commit.
func manifestsAfterCompaction(st *TableState, c *CompactAction) []ManifestInfo {
	files := st.Manifests.Files
	if c == nil || c.Commits == 0 || len(files) == 0 {
		return files
	}
	avg := totalLength(files) / int64(len(files))
	added := ManifestInfo{SpecID: st.DefaultSpecID, Data: true, Length: avg}
	if c.AssignRowIDs {
		out := slices.Clone(files)
		for range c.Commits {
			out = append(out, added)
		}
		return out
	}
	at := map[string]int{}
	for _, p := range st.Partitions {
		for i, path := range p.CandidatePaths {
			if i < len(p.CandidateManifests) && p.CandidateManifests[i] >= 0 {
				at[path] = p.CandidateManifests[i]
			}
		}
	}
	removed := make([]int64, len(files))
	specs := map[int]int64{} // files removed per spec
	for _, g := range c.Groups {
		specs[g.SpecID] += int64(g.InputFiles)
		for _, f := range g.Files {
			if i, ok := at[f]; ok && i < len(files) {
				removed[i]++
			}
		}
	}
	out := make([]ManifestInfo, 0, len(files)+c.Commits+len(specs))
	for i, m := range files {
		if m.Data && m.LiveFiles > 0 && removed[i] >= m.LiveFiles {
			continue // every file it lists is rewritten
		}
		if m.LiveFiles > 0 {
			m.LiveFiles -= min(removed[i], m.LiveFiles)
		}
		out = append(out, m)
	}
	for _, spec := range slices.Sorted(maps.Keys(specs)) {
		// The entries removed: a manifest of that many entries, as the
		// compaction's estimate sizes it (manifestBytes).
		length := manifestBytes(st, specs[spec])
		out = append(out, ManifestInfo{SpecID: spec, Data: true, Length: length, Tombstones: true})
	}
	for i := range max(c.Commits, len(specs)) {
		m := added
		if i < len(specs) {
			m.SpecID = slices.Sorted(maps.Keys(specs))[i]
		}
		out = append(out, m) // the files written
	}
	return out
}

// totalLength is the manifests' bytes in all.
func totalLength(files []ManifestInfo) int64 {
	var n int64
	for _, f := range files {
		n += f.Length
	}
	return n
}

// ManifestTarget is the manifests' target size under pol (the plan's and the rewrite's).
func ManifestTarget(pol *config.Effective) int64 {
	if t := pol.Manifests.TargetSize.Value; t > 0 {
		return t
	}
	return config.DefaultManifestTarget
}

// manifestsAfterRewrite is how many manifests iceberg-go's RewriteManifests
// leaves: delete manifests stay, and so do those of the specs in held (the
// rewrite leaves them out); data manifests are grouped by spec and packed
// toward target in list order (PackEnd with a lookback of one), each bin
// becoming one manifest.
func manifestsAfterRewrite(files []ManifestInfo, target int64, held map[int]string) int {
	bySpec := map[int][]int64{}
	after := 0
	for _, m := range files {
		if m.Tombstones {
			continue // no live entry: nothing of it is written again
		}
		if _, ok := held[m.SpecID]; !m.Data || ok {
			after++
			continue
		}
		bySpec[m.SpecID] = append(bySpec[m.SpecID], m.Length)
	}
	for _, lengths := range bySpec {
		after += len(packEnd(lengths, target, 1))
	}
	return after
}
