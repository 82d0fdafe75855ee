package diff

import (
	"strconv"

	"github.com/iceops/iceops/config"
)

const (
	defaultManifestMaxCount   = 100
	defaultManifestTargetSize = int64(8 << 20)
)

// planManifests rewrites the current snapshot's manifests when there are more
// than max_count of them. The rewrite is one commit on main.
func planManifests(pol *config.Effective, st *TableState) (Action, bool) {
	m := pol.Manifests
	if !m.Declared {
		return Action{}, false
	}
	maxCount := m.MaxCount.Value
	if maxCount <= 0 && !m.MaxCount.Set {
		maxCount = defaultManifestMaxCount
	}
	target := m.TargetSize.Value
	if target <= 0 {
		target = defaultManifestTargetSize
	}
	if st.Manifests.Count <= maxCount {
		return Action{}, false
	}
	after := max(1, int((st.Manifests.Bytes+target-1)/target))
	if len(st.Manifests.Files) > 0 {
		after = manifestsAfterRewrite(st.Manifests.Files, target)
	}
	if after >= st.Manifests.Count {
		// The manifests are already about target size: iceberg-go would
		// report "already optimal" and commit nothing, and a plan that
		// asks for it would never converge.
		return Action{}, false
	}
	return Action{
		Type:   RewriteManifests,
		Reason: reason("manifests.max_count", strconv.Itoa(maxCount), m.MaxCount.Origin, m.DeclRange),
		Manifests: &ManifestsAction{
			ManifestsBefore:         st.Manifests.Count,
			EstimatedManifestsAfter: after,
			TargetSize:              target,
		},
	}, true
}

// manifestsAfterRewrite is how many manifests iceberg-go's RewriteManifests
// leaves: delete manifests stay; data manifests are grouped by spec and
// packed toward target in list order (PackEnd with a lookback of one), each
// bin becoming one manifest.
func manifestsAfterRewrite(files []ManifestInfo, target int64) int {
	bySpec := map[int][]int64{}
	after := 0
	for _, m := range files {
		if !m.Data {
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
