package diff

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/icewright/icewright/config"
)

// minOrphanAge is the floor of orphan_files.older_than (docs/design.md §5.5 rule 5).
// Config refuses lower values; diff checks again because a plan deletes.
const minOrphanAge = 24 * time.Hour

// planOrphans applies the policy to the provider's orphan scan. It returns
// either an action, or refusals (the table then needs a person), or neither.
func planOrphans(pol *config.Effective, st *TableState, props map[string]string, now time.Time) (Action, []Refusal, bool) {
	o := pol.OrphanFiles
	if !o.Declared {
		return Action{}, nil, false
	}
	refuse := func(why string) (Action, []Refusal, bool) {
		return Action{}, []Refusal{{Action: string(RemoveOrphanFiles), Reason: why}}, false
	}
	if why := orphansRefusal(o, st, props); why != "" {
		return refuse(why)
	}
	scan := st.Orphans
	act, orphans := orphansToRemove(o, scan, now)

	// Rule 4 counts every unreferenced file, young ones included, so that
	// a broken referenced set cannot hide behind the age guard.
	if total := orphans + scan.Referenced; total > 0 {
		act.Ratio = float64(orphans) / float64(total)
	}
	minFiles := int64(o.MinFilesForRatio.Value)
	if act.Ratio > act.MaxRatio && scan.ListedFiles >= minFiles {
		return refuse(fmt.Sprintf("%d of %d files (%.1f%%) are unreferenced, above orphan_files.max_orphan_ratio = %g%s",
			orphans, orphans+scan.Referenced, act.Ratio*100, act.MaxRatio, originSuffix(o.MaxOrphanRatio)))
	}
	act.PurgeRuns = DuePurgeRuns(scan.Quarantine, now)
	if act.Count == 0 && len(act.PurgeRuns) == 0 {
		return Action{}, nil, false
	}
	why := reason("orphan_files.older_than", quote(act.OlderThan), o.OlderThan.Origin, o.DeclRange)
	if act.Count == 0 && o.Quarantine.Value > 0 {
		// Only a purge: what the reviewer wants to know is the grace period.
		why = reason("orphan_files.quarantine", quote(act.Quarantine), o.Quarantine.Origin, o.DeclRange)
	}
	return Action{
		Type:        RemoveOrphanFiles,
		Destructive: true,
		Reason:      why,
		Orphans:     &act,
	}, nil, true
}

// orphansRefusal is why the sweep is refused before any file is
// considered ("" when it is not): gc disabled, an age below the floor, no
// scan or a refused one, a partial listing, nested tables, prefix
// mismatches, or an incomplete referenced set.
func orphansRefusal(o config.OrphanPolicy, st *TableState, props map[string]string) string {
	scan := st.Orphans
	switch {
	case !gcEnabled(props):
		return fmt.Sprintf("gc.enabled is %q: the table's files may be shared with another table", props[propGCEnabled])
	case o.OlderThan.Value < minOrphanAge:
		return fmt.Sprintf("orphan_files.older_than = %q is below the 24h floor", config.FormatDuration(o.OlderThan.Value))
	case scan == nil:
		return "storage was not scanned for orphan files"
	case scan.Refusal != "":
		return scan.Refusal
	case scan.MissingReferencedCount > 0 && scan.LiteralNamed > 0:
		return fmt.Sprintf("%d referenced files are missing from the listing under the names iceberg-go v0.7.0 reads (first: %s), and %d listed files are the table's under the literal names of its file: URIs with percent-escapes (first: %s): "+
			"iceberg-go's local IO opens such a URI percent-decoded, while Java, PyIceberg, Spark, Trino and DuckDB open it as written, where those writers put the files. "+
			"icewright compares the listing with the names iceberg-go reads, so it cannot tell an orphan from a file the table reaches and does not sweep this table (no listed file is proposed); "+
			"remove its orphans with an engine that reads the paths as written (Spark's remove_orphan_files)%s",
			scan.MissingReferencedCount, strings.Join(scan.MissingReferenced, ", "), scan.LiteralNamed, scan.LiteralNamedExample, quarantinedLive(scan.Quarantine, st.Address))
	case scan.MissingReferencedCount > 0:
		return fmt.Sprintf("the listing is partial: %d referenced files are missing from it (first: %s)%s",
			scan.MissingReferencedCount, strings.Join(scan.MissingReferenced, ", "), quarantinedLive(scan.Quarantine, st.Address))
	case len(scan.NestedTables) > 0:
		return OverlapRefusal(scan.NestedTables)
	case len(scan.PrefixMismatches) > 0 && o.PrefixMismatch.Value != "ignore":
		// "delete" is not honoured here: treating a file that differs from a
		// referenced one only by scheme or authority as an orphan is a guess
		// we do not make on a reviewer's behalf.
		return fmt.Sprintf("%d listed files match referenced files only after ignoring scheme or authority (first: %s); set orphan_files.prefix_mismatch = \"ignore\" to keep them and go on",
			len(scan.PrefixMismatches), scan.PrefixMismatches[0])
	}
	if len(st.Snapshots) > 0 {
		// Each category must have referenced files on a table with
		// snapshots; an empty one means the referenced set was built wrong,
		// and everything in that category would look orphaned.
		for _, c := range []string{"manifest_list", "manifest", "data", "metadata"} {
			if c == "manifest_list" && !slices.ContainsFunc(st.Snapshots, func(s Snapshot) bool { return s.ManifestList != "" }) {
				// Format v1 allows a snapshot to name its manifests
				// inline ("manifests") instead of in a manifest list: a
				// table whose snapshots all do has no manifest list.
				continue
			}
			if scan.Categories[c] == 0 {
				return fmt.Sprintf("no referenced %s files were found on a table with snapshots: the referenced set is incomplete", c)
			}
		}
	}
	return ""
}

// orphansToRemove is the action's paths: the scan's candidates (and, when
// the policy says so, its non-Iceberg files) strictly older than
// older_than, never a symbolic link or a prefix mismatch. It also returns
// every unreferenced file counted, young ones included.
func orphansToRemove(o config.OrphanPolicy, scan *OrphanScan, now time.Time) (OrphansAction, int64) {
	// Files we must never delete, whatever the provider put in the lists.
	protected := make(map[string]struct{}, len(scan.Symlinks)+len(scan.PrefixMismatches))
	for _, p := range scan.Symlinks {
		protected[p] = struct{}{}
	}
	for _, p := range scan.PrefixMismatches {
		protected[p] = struct{}{}
	}

	cutoffMs := now.Add(-o.OlderThan.Value).UnixMilli()
	act := OrphansAction{
		Paths:       []string{},
		OlderThan:   config.FormatDuration(o.OlderThan.Value),
		OlderThanMs: o.OlderThan.Value.Milliseconds(),
		Excluded:    scan.Excluded,
		MaxRatio:    o.MaxOrphanRatio.Value,
		Staging:     scan.Staging,
		Foreign:     scan.Foreign,
	}
	if o.Quarantine.Value > 0 {
		act.Quarantine = config.FormatDuration(o.Quarantine.Value)
	}
	consider := func(f FileInfo) {
		if _, ok := protected[f.Path]; ok {
			return
		}
		// Strictly older: a file written at the cutoff instant may belong
		// to a commit still in flight.
		if f.MtimeMs >= cutoffMs {
			act.KeptByAgeGuard++
			act.KeptBytes += f.Size
			return
		}
		act.Count++
		act.Bytes += f.Size
		act.Paths = append(act.Paths, f.Path)
	}
	orphans := int64(len(scan.Candidates))
	for _, f := range scan.Candidates {
		consider(f)
	}
	act.NonIceberg = len(scan.NonIceberg)
	for _, f := range scan.NonIceberg {
		act.NonIcebergPaths = append(act.NonIcebergPaths, f.Path)
	}
	slices.Sort(act.NonIcebergPaths)
	if o.IncludeNonIcebergFiles.Value {
		act.IncludeNonIceberg = true
		orphans += int64(len(scan.NonIceberg))
		for _, f := range scan.NonIceberg {
			consider(f)
		}
	}
	slices.Sort(act.Paths)
	return act, orphans
}

// RecheckOrphans holds the plan's rules again at apply time (docs/design.md
// §5.5): st is the table as it is now, with a scan of its storage made now
// (st.Orphans), and the rules are planOrphans', the plan's own, so apply
// cannot drift from them: the listing complete, every referenced file
// present, the reference categories, the unreferenced ratio, the age
// guard at now, gc.enabled, the scope. It returns what the rules allow
// deleting now (an action with no paths when nothing), or the refusal.
// Apply deletes only what the approved plan listed and this allows.
func RecheckOrphans(pol *config.Effective, st *TableState, now time.Time) (*OrphansAction, string) {
	act, refusals, ok := planOrphans(pol, st, propsAfter(pol, st), now)
	if len(refusals) > 0 {
		reasons := make([]string, len(refusals))
		for i, r := range refusals {
			reasons[i] = r.Reason
		}
		return nil, strings.Join(reasons, "; ")
	}
	if !ok {
		return &OrphansAction{Paths: []string{}}, ""
	}
	return act.Orphans, ""
}

// PurgeRun is a quarantine run the plan deletes: every file its manifest
// lists, then the manifest. ManifestDigest pins the manifest that was
// planned; apply purges nothing of a run whose manifest changed since.
type PurgeRun struct {
	RunID          string `json:"run_id"`
	Files          int64  `json:"files"`
	Bytes          int64  `json:"bytes"`
	CreatedAtMs    int64  `json:"created_at_ms"`
	PurgeAfterMs   int64  `json:"purge_after_ms"`
	ManifestDigest string `json:"manifest_digest"`
}

// DuePurgeRuns are the runs whose grace period is over at now, by run id.
// A run without a purge time, or with a problem, is never due: a person
// decides about it (icewright restore, or deleting it by hand).
func DuePurgeRuns(runs []QuarantineRun, now time.Time) []PurgeRun {
	var out []PurgeRun
	for _, r := range runs {
		if r.Problem != "" || len(r.Referenced) > 0 || r.PurgeAfterMs <= 0 || r.PurgeAfterMs > now.UnixMilli() || r.ManifestDigest == "" {
			continue
		}
		out = append(out, PurgeRun{RunID: r.RunID, Files: r.Files, Bytes: r.Bytes, CreatedAtMs: r.CreatedAtMs,
			PurgeAfterMs: r.PurgeAfterMs, ManifestDigest: r.ManifestDigest})
	}
	slices.SortFunc(out, func(a, b PurgeRun) int { return strings.Compare(a.RunID, b.RunID) })
	return out
}

// quarantineWarnings names every quarantine run that no apply will ever
// purge, so that a person learns it is there (DuePurgeRuns leaves it out
// silently). Every stuck run warns, due or not: waiting never makes it
// purgeable, a run whose manifest cannot be read has no purge time to wait
// for, and a run holding referenced files means the table lacks live data
// now. A healthy run that is merely not yet due is not stuck and does not
// warn. The scan is there whenever the policy has orphan_files, so the
// warning shows even when remove_orphan_files is refused.
func quarantineWarnings(address string, scan *OrphanScan) []Warning {
	if scan == nil {
		return nil
	}
	var out []Warning
	for _, r := range scan.Quarantine {
		why := r.StuckReason(address, scan.MissingUnnamed())
		if why == "" {
			continue
		}
		subject := "quarantine run " + r.RunID + " is"
		if r.RunID == "" {
			subject = "the quarantine runs are" // the listing itself failed
		}
		out = append(out, NewWarning(config.LintQuarantineStuck, subject+" never purged: "+why, ""))
	}
	return out
}

// MissingUnnamed reports whether the listing lacked more referenced files
// than MissingReferenced names: a quarantine run may then hold more live
// files than its Referenced shows.
func (s *OrphanScan) MissingUnnamed() bool {
	return s.MissingReferencedCount > int64(len(s.MissingReferenced))
}

// StuckReason says why apply will never purge the run and what a person
// must do about it, or "" when the run is not stuck (due or not). address
// is the table's, for the icewright restore command line; unnamedMissing
// (OrphanScan.MissingUnnamed) makes the count of live files a lower bound.
func (r QuarantineRun) StuckReason(address string, unnamedMissing bool) string {
	var why []string
	if n := len(r.Referenced); n > 0 {
		files, verb, them := "1 file", "is", "it"
		if n > 1 {
			files, verb, them = fmt.Sprintf("%d files", n), "are", "them"
		}
		if unnamedMissing {
			files, them = "at least "+files, "them"
		}
		why = append(why, fmt.Sprintf("%s of this run %s referenced by the table again; put %s back with icewright restore %s %s",
			files, verb, them, r.RunID, address))
	}
	switch {
	case r.Problem == "":
	case r.RunID == "":
		why = append(why, r.Problem+"; check the table location's .icewright-quarantine/ by hand")
	default:
		why = append(why, fmt.Sprintf("%s; inspect its manifest (.icewright-quarantine/%s/.icewright-manifest.json in the table location), then fix or remove the run by hand",
			r.Problem, r.RunID))
	}
	return strings.Join(why, "; and ")
}

// quarantinedLive names the quarantine runs that hold files the table
// references (the likely reason they are missing from the listing), with
// the command that puts them back.
func quarantinedLive(runs []QuarantineRun, address string) string {
	var b strings.Builder
	for _, r := range runs {
		if len(r.Referenced) > 0 {
			fmt.Fprintf(&b, "; quarantine run %s holds %s: run icewright restore %s %s", r.RunID, strings.Join(r.Referenced, ", "), r.RunID, address)
		}
	}
	return b.String()
}

func originSuffix[T any](s config.Setting[T]) string {
	if fl := fileLine(s.Origin); fl != "" {
		return " (" + fl + ")"
	}
	return ""
}

// OverlapRefusal is the reason a sweep is refused for other tables whose
// location or write paths overlap it (docs/design.md §5.5 rule 6), the same words
// in the plan and in apply's re-check.
func OverlapRefusal(tables []string) string {
	return fmt.Sprintf("other tables lie inside the sweep or share its paths (their location or a write path overlaps a sweep root): %s", strings.Join(tables, ", "))
}

// CatalogNamesShared is what the plan (WarnCatalogNameShared) and doctor
// say when catalog's database holds tables under the other catalog names
// names, which no catalog block reads.
func CatalogNamesShared(catalog string, names []string) (message, detail string) {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("catalog %q's database also holds tables under catalog_name %s, which no catalog block reads", catalog, strings.Join(q, ", ")),
		"icewright counts them as other tables: an orphan sweep keeps every file they reference and is refused where their locations overlap it, and expiry keeps what they reference; to manage them, add a catalog block labelled with that name on the same database."
}
