package diff

import (
	"fmt"
	"slices"
)

// ExpiryFreed is what expiring snapshots frees, as providers count it on
// the table's manifests (providers/expiry.Freed): files and bytes, the
// files named by escaped file: URIs, and the files on another storage than
// the table location (ForeignExample names one).
type ExpiryFreed struct {
	Files, Bytes, EscapedFileURIs int64
	ForeignFiles                  int64
	ForeignExample                string
}

// EstimateExpiry fills the plan's expire_snapshots figures with what
// estimate counts for its snapshots; groups are the plan's compaction
// groups, whose files the same plan's expiry frees too when it expires the
// current snapshot. An expiry that would release files on another storage
// than the table location (st.Location) is refused and leaves the plan: the table's IO (iceberg-go
// reads and deletes a table's files through the one IO of its metadata
// location's storage) cannot delete them, so the commit would land and the
// deletions fail. The figures need the table's manifests, which providers
// read; the decision is here.
func (tp *TablePlan) EstimateExpiry(st *TableState, estimate func(expireIDs []int64, groups []CompactGroup) (ExpiryFreed, error)) error {
	var groups []CompactGroup
	refuse := -1
	for i := range tp.Actions {
		a := &tp.Actions[i]
		if a.Type == Compact && a.Compact != nil {
			groups = a.Compact.Groups
		}
		if a.Type != ExpireSnapshots || a.Expire == nil || len(a.Expire.SnapshotIDs) == 0 {
			continue
		}
		freed, err := estimate(a.Expire.SnapshotIDs, groups)
		if err != nil {
			return fmt.Errorf("estimate expiry: %w", err)
		}
		if a.Estimate != nil {
			// The estimate counted the deletions of the figures it had.
			u := a.Estimate
			u.Requests.Add(negRequests(deleteRequests(st, a.Expire.FilesToDelete)))
			u.Requests.Add(deleteRequests(st, freed.Files))
			u.FilesDeleted, u.BytesFreed = freed.Files, freed.Bytes
		}
		a.Expire.FilesToDelete, a.Expire.BytesToDelete, a.Expire.EscapedFileURIs = freed.Files, freed.Bytes, freed.EscapedFileURIs
		if freed.ForeignFiles > 0 {
			refuse = i
			tp.Refusals = append(tp.Refusals, Refusal{
				Action: string(ExpireSnapshots),
				Reason: fmt.Sprintf("expiring %d snapshots would release %d files on another storage than the table location %s (first: %s), which the table's IO (iceberg-go reads and deletes a table's files through the one IO of its metadata location's storage) cannot delete: "+
					"the commit would land and the deletions fail, leaving the files unreferenced. Expire with an engine whose FileIO resolves each path's storage (Java's ResolvingFileIO or HadoopFileIO), or correct the paths",
					len(a.Expire.SnapshotIDs), freed.ForeignFiles, st.Location, freed.ForeignExample),
			})
		}
	}
	if refuse >= 0 {
		tp.Actions = slices.Delete(tp.Actions, refuse, refuse+1)
	}
	return nil
}
