package diff

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/icewright/icewright/config"
)

// planManifests rewrites the current snapshot's manifests when there are more
// than max_count of them once the plan's own commits are in: each compaction
// commit adds a data manifest, and rewrite_manifests runs after it, so a
// table at max_count before the compaction is over it when the rewrite
// runs. Counting only today's manifests made max_count = 1 take two
// applies. The rewrite is one commit on main.
//
// Manifests of a spec the writer cannot write (TableState.UnwritableSpecs)
// are left as they are, by the plan's estimate and by the rewrite; when
// the rewrite would have merged them, a refusal says why they stay.
func planManifests(pol *config.Effective, st *TableState, compactCommits int) (Action, []Refusal, bool) {
	m := pol.Manifests
	if !m.Declared {
		return Action{}, nil, false
	}
	maxCount := m.MaxCount.Value
	if maxCount <= 0 && !m.MaxCount.Set {
		maxCount = config.DefaultManifestMaxCount
	}
	target := ManifestTarget(pol)
	count, files, bytes := st.Manifests.Count, st.Manifests.Files, st.Manifests.Bytes
	if compactCommits > 0 && len(files) > 0 {
		// The manifests a compaction adds: one data manifest of the
		// default spec per commit, about the size of an average one.
		var avg int64
		for _, f := range files {
			avg += f.Length
		}
		avg /= int64(len(files))
		files = slices.Clone(files)
		for range compactCommits {
			files = append(files, ManifestInfo{SpecID: st.DefaultSpecID, Data: true, Length: avg})
		}
		count += compactCommits
		bytes += avg * int64(compactCommits)
	}
	if count <= maxCount {
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
