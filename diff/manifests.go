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
