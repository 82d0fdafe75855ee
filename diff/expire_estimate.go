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
	// Reads, when known (the plan's walk recorded them), is what the
	// expired and the kept snapshots reach of the table's metadata: what
	// apply's expiry reads (EstimateExpiry) and, after it, an orphan
	// sweep's walks.
	Reads *ExpiryReads
}

// ExpiryReads is what the expired snapshots (Expired) and the kept ones
// (Kept) reach of the table's metadata; Manifests is the distinct
// manifests of both.
type ExpiryReads struct {
	Expired, Kept ManifestReads
	Manifests     int64
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
	refuse, commits := -1, 0
	var after *ManifestReads          // what the snapshots kept by the plan's expiry reach
	metadataAfter := st.MetadataBytes // the metadata file the sweep loads: the expiry's, once it ran
	for i := range tp.Actions {
		a := &tp.Actions[i]
		if a.Type == Compact && a.Compact != nil {
			groups = a.Compact.Groups
			commits += a.Compact.Commits
		}
		if a.Type == RemoveOrphanFiles && a.Orphans != nil && a.Estimate != nil && after != nil {
			// The sweep runs after the expiry: it walks what is kept.
			u := estimateOrphansWith(st, a.Orphans, after, metadataAfter)
			a.Estimate = &u
		}
		if a.Type != ExpireSnapshots || a.Expire == nil || len(a.Expire.SnapshotIDs) == 0 {
			continue
		}
		freed, err := estimate(a.Expire.SnapshotIDs, groups)
		if err != nil {
			return fmt.Errorf("estimate expiry: %w", err)
		}
		a.Expire.FilesToDelete, a.Expire.BytesToDelete, a.Expire.EscapedFileURIs = freed.Files, freed.Bytes, freed.EscapedFileURIs
		if a.Estimate != nil {
			// Again, with the figures and reads known now.
			u := expireUsage(st, i == 0, a.Expire, freed.Reads, commits)
			a.Estimate = &u
			metadataAfter = u.BytesWritten // the commit writes the metadata file alone
		}
		if freed.Reads != nil {
			after = keptReads(st, freed.Reads, commits)
		}
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
