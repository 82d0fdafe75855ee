package compaction

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/providers/internal/reach"
)

// commitCatalog sits between a table and its catalog for the engine's
// commits. It does two things iceberg-go's SQL catalog does not:
//
//  1. It checks the commit's requirements against the catalog's current
//     metadata first and reports a violation as table.ErrCommitFailed. The
//     SQL catalog returns a bare "requirement failed" error, which
//     Table.doCommit treats as "outcome unknown" and never retries; so one
//     concurrent append would fail every compaction. As ErrCommitFailed it
//     takes iceberg-go's refresh-and-replay path, where the rewrite's
//     conflict validators run against the snapshots committed meanwhile
//     (an append is fine, a delete on a rewritten file is not).
//  2. It checks every attempt's new snapshot against the catalog's current
//     one before sending it (reach.CheckCommit): its live files must be the
//     current snapshot's changed exactly by the rewrite. A difference sends
//     nothing, removes the manifests and manifest list the attempt wrote,
//     and fails the commit (reach.ErrCommitCheck, never retried).
//  3. It remembers whether the catalog was reached and what it answered,
//     so the engine knows when a failed commit definitely changed nothing
//     (staged files may be removed) and when the outcome is unknown (they
//     must stay: the catalog may reference them).
type commitCatalog struct {
	inner table.CatalogIO
	fs    icebergio.IO
	// change is what the commit means to do, set before it is sent.
	change reach.Change
	// tamper, set only by tests, changes an attempt's updates before they
	// are checked: the seam that shows the check stops a wrong snapshot.
	tamper commitTamper
	// addSpec, when set, is a partition spec the commit adds (and may make
	// the default) before its snapshot (partition ageing): its files are
	// of that spec, so the spec and the snapshot are one commit, and a
	// failed rewrite adds no spec.
	addSpec *addedSpec

	mu      sync.Mutex
	reached bool  // CommitTable of the inner catalog was called
	lastErr error // its last answer
}

// commitTamper rewrites a commit's updates (tests only).
type commitTamper func(ctx context.Context, fs icebergio.IO, cur table.Metadata, updates []table.Update) ([]table.Update, error)

func (c *commitCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	return c.inner.LoadTable(ctx, ident)
}

func (c *commitCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	cur, err := c.inner.LoadTable(ctx, ident)
	if err != nil {
		// Without the current metadata the commit cannot be checked.
		return nil, "", fmt.Errorf("load the table to check the commit (nothing sent): %w", err)
	}
	if c.addSpec != nil {
		updates, reqs = c.addSpec.prepend(updates, reqs)
	}
	for _, r := range reqs {
		if verr := r.Validate(cur.Metadata()); verr != nil {
			return nil, "", fmt.Errorf("%w: %w", table.ErrCommitFailed, verr)
		}
	}
	updates = countDVsAsIceberg(cur.Metadata(), updates, c.change.RetiredDeletes)
	if c.tamper != nil {
		if updates, err = c.tamper(ctx, c.fs, cur.Metadata(), updates); err != nil {
			return nil, "", err
		}
	}
	if err := reach.CheckCommit(ctx, c.fs, cur.Metadata(), updates, c.change); err != nil {
		if rerr := removeUnsent(c.fs, cur.Metadata(), updates); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, "", err
	}
	meta, loc, err := c.inner.CommitTable(ctx, ident, reqs, updates)
	if err != nil && !errors.Is(err, table.ErrCommitFailed) && isRequirementFailure(err) {
		// A peer won the race between our check and the catalog's: the
		// catalog validated before writing anything, so nothing changed.
		err = fmt.Errorf("%w: %w", table.ErrCommitFailed, err)
	}
	c.mu.Lock()
	c.reached, c.lastErr = true, err
	c.mu.Unlock()
	return meta, loc, err
}

// countDVsAsIceberg corrects the summary of the snapshot updates add:
// iceberg-go v0.7.0 counts each removed deletion vector at its whole
// Puffin file's size (several DVs share one), Java Iceberg, Spark's
// commits and the commit check at its blob's (reach.SummarySize). Left
// as iceberg-go writes it, removed-files-size and total-files-size move by
// more than the files dropped, the check refuses the commit, and the next
// engine's totals start from a wrong one. The totals are recomputed as
// iceberg-go computes them (parent's total + added - removed; omitted when
// negative) from the corrected removed size.
func countDVsAsIceberg(cur table.Metadata, updates []table.Update, retired []iceberg.DataFile) []table.Update {
	over := dvSizeOvercount(retired)
	if over == 0 {
		return updates
	}
	out := slices.Clone(updates)
	for i, u := range out {
		if u.Action() != table.UpdateAddSnapshot {
			continue
		}
		v := reflect.Indirect(reflect.ValueOf(u)).FieldByName("Snapshot")
		if !v.IsValid() || !v.CanInterface() {
			continue // the check reports the summary it cannot match
		}
		snap, ok := v.Interface().(*table.Snapshot)
		if !ok || snap == nil || snap.Summary == nil {
			continue
		}
		fixed := *snap
		sum := *snap.Summary
		sum.Properties = maps.Clone(sum.Properties)
		removed := sum.Properties.GetInt64("removed-files-size", 0) - over
		delete(sum.Properties, "removed-files-size")
		if removed > 0 {
			sum.Properties["removed-files-size"] = strconv.FormatInt(removed, 10)
		}
		var prev int64
		if p := snap.ParentSnapshotID; p != nil {
			if ps := cur.SnapshotByID(*p); ps != nil && ps.Summary != nil {
				prev = ps.Summary.Properties.GetInt64("total-files-size", 0)
			}
		}
		delete(sum.Properties, "total-files-size")
		if total := prev + sum.Properties.GetInt64("added-files-size", 0) - max(removed, 0); total >= 0 {
			sum.Properties["total-files-size"] = strconv.FormatInt(total, 10)
		}
		fixed.Summary = &sum
		out[i] = table.NewAddSnapshotUpdate(&fixed)
	}
	return out
}

// dvSizeOvercount is how much more than Java Iceberg iceberg-go counts in
// removed-files-size for removing retired (countDVsAsIceberg).
func dvSizeOvercount(retired []iceberg.DataFile) int64 {
	var over int64
	for _, df := range retired {
		over += df.FileSizeBytes() - reach.SummarySize(df)
	}
	return over
}

// definitelyNotCommitted reports whether a failed commit certainly left the
// catalog unchanged.
func (c *commitCatalog) definitelyNotCommitted() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reached {
		// Failed before the catalog was asked (staging, validators).
		return true
	}
	if c.lastErr == nil {
		return false // the catalog accepted a commit
	}
	// The catalog refused the last attempt; anything after it (a validator
	// rejecting the replay, a cancelled wait) happened before the catalog.
	return errors.Is(c.lastErr, table.ErrCommitFailed)
}

// definitelyNotCommittedWithout classifies a commit error when no catalog
// wrapper was available.
func definitelyNotCommittedWithout(err error) bool {
	return errors.Is(err, table.ErrCommitFailed) || isRequirementFailure(err) ||
		errors.Is(err, table.ErrConflictingDeleteFiles)
}

// isRequirementFailure recognises iceberg-go's requirement validation
// errors (table/requirements.go), which have no sentinel; every catalog
// that returns them validates before writing.
func isRequirementFailure(err error) bool {
	return strings.Contains(err.Error(), "requirement failed")
}

// withCommitCatalog rebinds tbl to a commitCatalog over cat. Without a
// catalog the table is used as is and only errors that are certainly
// pre-write count as "not committed".
func withCommitCatalog(tbl *table.Table, cat table.CatalogIO, fs icebergio.IO, noReplay bool, tamper commitTamper) (*table.Table, *commitCatalog) {
	if cat == nil {
		return tbl, nil
	}
	if cc, ok := cat.(*commitCatalog); ok {
		cat = cc.inner
	}
	cc := &commitCatalog{inner: cat, fs: fs, tamper: tamper}
	meta := tbl.Metadata()
	// iceberg-go's default is 0 retries (Java's is 4), which makes any
	// concurrent append fatal to a compaction. Unless the table sets
	// commit.retry.num-retries itself, replay up to defaultCommitRetries
	// times. The property is set on this in-memory copy only: the commit
	// carries just the rewrite's updates, so it never reaches the catalog.
	// With noReplay it is 0 whatever the table sets.
	retries := strconv.Itoa(defaultCommitRetries)
	if noReplay {
		retries = "0"
	}
	if _, set := meta.Properties()[table.CommitNumRetriesKey]; !set || noReplay {
		if b, err := table.MetadataBuilderFromBase(meta, tbl.MetadataLocation()); err == nil {
			if err := b.SetProperties(iceberg.Properties{table.CommitNumRetriesKey: retries}); err == nil {
				if m, err := b.Build(); err == nil {
					meta = m
				}
			}
		}
	}
	t := table.New(tbl.Identifier(), meta, tbl.MetadataLocation(),
		func(ctx context.Context) (icebergio.IO, error) { return tbl.FS(ctx) }, cc)
	return t, cc
}

const defaultCommitRetries = 4

// removeUnsent removes what iceberg-go wrote for the new snapshots of a
// commit that was never sent (staged is cur with its updates): each one's
// manifest list and the manifests written for it. A file some snapshot of
// cur lists, or the parent's manifest list names, is never among them, so
// a snapshot that wrongly reuses a file of the table cannot make this
// remove it. Data files are the engine's to remove (its outputs only).
func removeUnsent(fs icebergio.IO, cur table.Metadata, updates []table.Update) error {
	staged, err := table.UpdateTableMetadata(cur, updates, "")
	if err != nil {
		return fmt.Errorf("find the unsent snapshot's files (kept): %w", err)
	}
	return removeUnsentStaged(fs, cur, staged)
}

// removeUnsentStaged is removeUnsent on the staged metadata.
func removeUnsentStaged(fs icebergio.IO, cur, staged table.Metadata) error {
	known := map[int64]bool{}
	lists := map[string]bool{}
	for _, s := range cur.Snapshots() {
		known[s.SnapshotID] = true
		lists[s.ManifestList] = true
	}
	var paths []string
	for _, s := range staged.Snapshots() {
		if known[s.SnapshotID] {
			continue
		}
		parentHas := map[string]bool{}
		if s.ParentSnapshotID != nil {
			if p := cur.SnapshotByID(*s.ParentSnapshotID); p != nil {
				pm, err := p.Manifests(fs)
				if err != nil {
					return fmt.Errorf("read the parent's manifest list (unsent files kept): %w", err)
				}
				for _, m := range pm {
					parentHas[m.FilePath()] = true
				}
			}
		}
		ms, err := s.Manifests(fs)
		if err != nil {
			return fmt.Errorf("read the unsent manifest list (kept): %w", err)
		}
		for _, m := range ms {
			if m.SnapshotID() == s.SnapshotID && !parentHas[m.FilePath()] {
				paths = append(paths, m.FilePath())
			}
		}
		if s.ManifestList != "" && !lists[s.ManifestList] {
			paths = append(paths, s.ManifestList)
		}
	}
	return removeFiles(fs, paths)
}
