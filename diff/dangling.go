package diff

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/icewright/icewright/config"
)

// DanglingDeletes is what remove_dangling_deletes removes: the delete files
// of the current snapshot that no live data file can apply to any more, by
// the rule a scan matches deletes with (providers/compaction.FindDangling
// decides it), and the delete manifests that hold them. Providers fill it
// as TableState.DanglingDeletes when the policy has a dangling_deletes
// block; the action's payload is the same figures.
type DanglingDeletes struct {
	DeleteFiles     int   `json:"delete_files"`
	DeleteBytes     int64 `json:"delete_bytes"`
	PositionDeletes int   `json:"position_deletes"`
	EqualityDeletes int   `json:"equality_deletes"`
	DeletionVectors int   `json:"deletion_vectors"`
	// ManifestsDropped hold only dangling delete files and leave the
	// snapshot (which lists instead one manifest of the removal's DELETED
	// entries, as every commit that removes files); ManifestsRewritten
	// also hold live ones and are rewritten without them, as delete
	// manifests of their spec.
	ManifestsDropped   int `json:"manifests_dropped"`
	ManifestsRewritten int `json:"manifests_rewritten"`
	// SpecIDs are the partition specs of the removed files, ascending.
	SpecIDs []int `json:"spec_ids"`
}

// planDangling plans remove_dangling_deletes when the policy has a
// dangling_deletes block and the observation found dangling delete files.
// Removing them rewrites the delete manifests that also hold live ones: a
// file of a spec whose manifests the writer cannot write
// (TableState.UnwritableSpecs) makes the action a refusal, as the commit
// would fail after the manifests are written.
func planDangling(pol *config.Effective, st *TableState) (Action, []Refusal, bool) {
	d := st.DanglingDeletes
	if !pol.DanglingDeletes.Declared || d == nil || d.DeleteFiles == 0 {
		return Action{}, nil, false
	}
	for _, id := range d.SpecIDs {
		if why, ok := st.UnwritableSpecs[id]; ok {
			return Action{}, []Refusal{{Action: string(RemoveDanglingDeletes),
				Reason: fmt.Sprintf("%d dangling delete files are not removed: some are of spec %d, %s", d.DeleteFiles, id, why)}}, false
		}
	}
	p := *d
	p.SpecIDs = slices.Clone(d.SpecIDs)
	return Action{
		Type:            RemoveDanglingDeletes,
		Reason:          fmt.Sprintf("dangling_deletes (%s): %s apply to no live data file", fileLine(pol.DanglingDeletes.DeclRange), danglingCounts(d)),
		DanglingDeletes: &p,
	}, nil, true
}

// danglingCounts says how many delete files of each kind d holds.
func danglingCounts(d *DanglingDeletes) string {
	var parts []string
	for _, c := range []struct {
		n          int
		one, other string
	}{
		{d.PositionDeletes, "position delete file", "position delete files"},
		{d.EqualityDeletes, "equality delete file", "equality delete files"},
		{d.DeletionVectors, "deletion vector", "deletion vectors"},
	} {
		if c.n == 1 {
			parts = append(parts, "1 "+c.one)
		} else if c.n > 1 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.other))
		}
	}
	return strings.Join(parts, ", ")
}

func validateDangling(d *DanglingDeletes) error {
	if d == nil || d.DeleteFiles <= 0 {
		return errors.New("no dangling delete files")
	}
	if d.PositionDeletes+d.EqualityDeletes+d.DeletionVectors != d.DeleteFiles {
		return fmt.Errorf("delete_files %d but %d position, %d equality, %d deletion vectors", d.DeleteFiles, d.PositionDeletes, d.EqualityDeletes, d.DeletionVectors)
	}
	return nil
}
