package inspect

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers"
	"github.com/icewright/icewright/providers/expiry"
	"github.com/icewright/icewright/providers/internal/reach"
)

const topPartitions = 5

// Options are what inspect reports beyond the table-wide figures.
type Options struct {
	// PerPartition adds each partition's file-size histogram.
	PerPartition bool
}

// Run reports on any table of a configured catalog of the session,
// managed or not.
func Run(ctx context.Context, s *providers.Session, address string, opts Options) (*diff.Inspection, error) {
	ctx = s.WithStorageLimits(ctx)
	tbl, err := s.LoadTable(ctx, address)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", address, err)
	}
	pol, managed := s.Config().Resolve(address)
	if !managed {
		pol = providers.UnmanagedPolicy(address, tbl)
	}
	sel := diff.SelectionFor(pol)
	// The health report is about the whole table: compaction.where scopes
	// what apply compacts, not what inspect reports (and a where naming a
	// column this table lacks must not make the table uninspectable).
	sel.Where = ""
	st, hist, parts, err := providers.TableSizes(ctx, tbl, address, sel, s.Now(), opts.PerPartition)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", address, err)
	}
	now := s.Now()
	in := tableReport(address, managed, st, tbl.Metadata(), sel, now)
	in.SizeHistogram, in.PartitionHistograms = hist, parts
	if err := oldSnapshotFiles(ctx, in, tbl, st); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", address, err)
	}
	orphanPol := pol
	if !pol.OrphanFiles.Declared {
		orphanPol.OrphanFiles.OlderThan.Value = config.DefaultOlderThan
	}
	scan, err := s.ScanOrphans(ctx, orphanPol, tbl)
	if err != nil {
		in.OrphanError = err.Error()
	} else {
		in.Orphans = summariseOrphans(scan, address, orphanPol.OrphanFiles.OlderThan.Value, now)
	}
	if err := waste(ctx, in, tbl, st, pol, sel, now); err != nil {
		return nil, fmt.Errorf("inspect %s: %w", address, err)
	}
	// A managed table's recommendations come from the plan itself: what
	// inspect says the next apply does is what plan shows.
	// A table the plan cannot be made for (a where naming an unknown
	// column, say) is still reported: the report is about the table, and
	// the recommendation says why plan fails for it.
	var tp *diff.TablePlan
	var planErr error
	if managed {
		tp, planErr = inspectPlan(ctx, s, pol, now)
	}
	in.Recommendations = recommend(in, pol, sel, tp)
	if planErr != nil {
		in.Recommendations = append(in.Recommendations, "plan: this table cannot be planned: "+planErr.Error())
	}
	return in, nil
}

// tableReport is the part of the report the observed state st and the
// table's metadata md give: identity, schema, sort orders, file and
// partition figures, snapshot ages at now.
func tableReport(address string, managed bool, st *diff.TableState, md table.Metadata, sel diff.CompactionSelection, now time.Time) *diff.Inspection {
	in := &diff.Inspection{
		Address:           address,
		Managed:           managed,
		UUID:              st.UUID,
		Location:          st.Location,
		MetadataLocation:  st.MetadataLocation,
		FormatVersion:     st.FormatVersion,
		CurrentSnapshotID: st.CurrentSnapshotID,
		Properties:        st.Properties,
		SortOrder:         []string{},
		Specs:             st.Specs,
		TargetFileSize:    sel.Target,
		SmallFileLimit:    sel.Min,
		Files:             st.Files,
		Manifests:         st.Manifests,
		Refs:              st.Refs,
		Recommendations:   []string{},
	}
	for _, f := range st.SortOrder {
		in.SortOrder = append(in.SortOrder, f.String())
	}
	in.DefaultSpecID = md.DefaultPartitionSpec()
	in.Schema = inspectSchema(md.CurrentSchema())
	for _, so := range md.SortOrders() {
		o := diff.InspectSortOrder{ID: so.OrderID(), Fields: []string{}, Default: so.OrderID() == md.DefaultSortOrder()}
		for _, f := range providers.SortFields(so, md.CurrentSchema()) {
			o.Fields = append(o.Fields, f.String())
		}
		in.SortOrders = append(in.SortOrders, o)
	}
	if st.Files.DataFiles > 0 {
		in.SmallFileShare = float64(st.Files.SmallFiles) / float64(st.Files.DataFiles)
	}
	in.Partitions.Count = len(st.Partitions)
	top := slices.Clone(st.Partitions)
	slices.SortStableFunc(top, func(a, b diff.PartitionStats) int { return cmp.Compare(b.DataFiles, a.DataFiles) })
	in.Partitions.Top = top[:min(len(top), topPartitions)]
	in.Snapshots.Count = len(st.Snapshots)
	for i, sn := range st.Snapshots {
		if i == 0 || sn.TimestampMs < in.Snapshots.OldestTimestampMs {
			in.Snapshots.OldestTimestampMs = sn.TimestampMs
		}
		age := now.UnixMilli() - sn.TimestampMs
		if i == 0 || age < in.Snapshots.NewestAgeMs {
			in.Snapshots.NewestAgeMs = age
		}
	}
	if len(st.Snapshots) > 0 {
		in.Snapshots.OldestAgeMs = now.UnixMilli() - in.Snapshots.OldestTimestampMs
	}
	return in
}

// oldSnapshotFiles fills what the snapshots no ref points at hold alone
// (expiry's estimate).
func oldSnapshotFiles(ctx context.Context, in *diff.Inspection, tbl *table.Table, st *diff.TableState) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	heads := map[int64]bool{}
	for _, r := range st.Refs {
		heads[r.SnapshotID] = true
	}
	md := tbl.Metadata()
	var old []int64
	for _, id := range reach.AllSnapshots(md) {
		if !heads[id] {
			old = append(old, id)
		}
	}
	freed, err := expiry.Estimate(ctx, fsys, md, old, nil)
	if err != nil {
		return err
	}
	in.OldSnapshotFiles, in.OldSnapshotBytes = freed.Files, freed.Bytes
	return nil
}

// waste fills what the table pays for today and no reader needs: the
// files only snapshots past retention hold (the snapshots diff's expiry
// rule selects now, with the policy's retention where it sets one, as
// planExpire does), the old orphans, and the extra opens of small files.
func waste(ctx context.Context, in *diff.Inspection, tbl *table.Table, st *diff.TableState, pol *config.Effective, sel diff.CompactionSelection, now time.Time) error {
	w := &in.Waste
	r := pol.SnapshotRetention
	maxAge, minSnapshots := diff.RetentionArgs(r)
	if ex := diff.SelectExpired(st, maxAge, minSnapshots, r.MaxRefAge.Value, 0, now); ex.Problem == "" && len(ex.Expired) > 0 {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return err
		}
		freed, err := expiry.Estimate(ctx, fsys, tbl.Metadata(), ex.Expired, nil)
		if err != nil {
			return err
		}
		w.ExpirableSnapshots, w.ExpirableFiles, w.ExpirableBytes = len(ex.Expired), freed.Files, freed.Bytes
	}
	if o := in.Orphans; o != nil {
		w.OrphanFiles, w.OrphanBytes = &o.Old, &o.OldBytes
	}
	w.SmallFiles, w.SmallBytes = st.Files.SmallFiles, st.Files.SmallBytes
	for _, p := range st.Partitions {
		w.ExtraScanOpens += extraOpens(p.SmallFiles, p.SmallBytes, sel.Target)
	}
	if pr, ok := pol.Pricing.For(in.Location); ok {
		// The waste is what removing it would save a month: the one
		// function that prices a plan's savings prices it.
		in.Pricing = &pr
		m, _ := diff.Price(w.Usage(), &pr)
		w.USDPerMonth = &m.SavingPerMonth
	}
	return nil
}

// extraOpens is how many more files a scan opens for n small files of
// bytes in all than for the same bytes in files of the target size.
func extraOpens(n, bytes, target int64) int64 {
	if n == 0 || target <= 0 {
		return 0
	}
	return max(n-(bytes+target-1)/target, 0)
}

// inspectPlan is the plan apply would make for the table (the same
// Observation.Plan), for inspect's recommendations.
func inspectPlan(ctx context.Context, s *providers.Session, pol *config.Effective, now time.Time) (*diff.TablePlan, error) {
	o, err := s.ObservePlan(ctx, pol)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	p, err := o.Plan(ctx, now)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

func summariseOrphans(scan *diff.OrphanScan, address string, olderThan time.Duration, now time.Time) *diff.InspectOrphans {
	o := &diff.InspectOrphans{
		OlderThan:    config.FormatDuration(olderThan),
		Unreferenced: len(scan.Candidates),
		NonIceberg:   len(scan.NonIceberg),
		Excluded:     scan.Excluded,
		Missing:      scan.MissingReferencedCount,
		NestedTables: scan.NestedTables,
		Symlinks:     len(scan.Symlinks),
		Refusal:      scan.Refusal,
	}
	o.QuarantineRuns = []diff.InspectQuarantineRun{}
	for _, r := range scan.Quarantine {
		why := r.StuckReason(address, scan.MissingUnnamed())
		if why != "" {
			o.StuckRuns = append(o.StuckRuns, diff.InspectStuckRun{RunID: r.RunID, Reason: why})
		}
		if r.RunID != "" {
			o.QuarantineRuns = append(o.QuarantineRuns, diff.InspectQuarantineRun{RunID: r.RunID, Files: r.Files, Bytes: r.Bytes,
				CreatedAtMs: r.CreatedAtMs, PurgeAfterMs: r.PurgeAfterMs, Stuck: why})
		}
	}
	cutoff := now.Add(-olderThan).UnixMilli()
	for _, f := range scan.Candidates {
		o.UnreferencedBytes += f.Size
		if f.MtimeMs < cutoff {
			o.Old++
			o.OldBytes += f.Size
		}
	}
	return o
}

// recommend turns the report into advice. For a block the policy lacks it
// recommends adding one; for a block it has, it says what the plan tp (the
// same diff plan and apply run) does about it, and nothing is promised that
// the plan does not do. tp is nil for an unmanaged table.
func recommend(in *diff.Inspection, pol *config.Effective, sel diff.CompactionSelection, tp *diff.TablePlan) []string {
	p := planned{tp}
	out := compactAdvice(in, pol, sel, p)
	out = append(out, manifestAdvice(in, pol, p)...)
	out = append(out, expiryAdvice(in, pol, p)...)
	out = append(out, orphanAdvice(in, pol, p)...)
	if why := p.refusal(diff.ReplaceSortOrder); why != "" {
		out = append(out, "sort order: refused: "+why)
	}
	if len(in.SortOrder) == 0 && in.Files.DataFiles > 0 && !pol.SortOrder.Set {
		out = append(out, "sort order: the table is unsorted; a sort_order on the columns queries filter by makes compaction cluster the data")
	}
	if in.Properties["gc.enabled"] == "false" {
		out = append(out, "gc.enabled is false: expiry and orphan removal are refused on this table")
	}
	return out
}

// planned is the table's plan as recommend reads it; nil for an unmanaged
// table.
type planned struct{ tp *diff.TablePlan }

// action is the plan's action of type typ, nil when it has none.
func (p planned) action(typ diff.ActionType) *diff.Action {
	if p.tp == nil {
		return nil
	}
	for i := range p.tp.Actions {
		if p.tp.Actions[i].Type == typ {
			return &p.tp.Actions[i]
		}
	}
	return nil
}

// refusal is why the plan refuses an action of type typ, "" when it does
// not.
func (p planned) refusal(typ diff.ActionType) string {
	if p.tp == nil {
		return ""
	}
	for _, r := range p.tp.Refusals {
		if r.Action == string(typ) {
			return r.Reason
		}
	}
	return ""
}

// compactAdvice is about small files and delete files.
func compactAdvice(in *diff.Inspection, pol *config.Effective, sel diff.CompactionSelection, p planned) []string {
	var out []string
	compact := p.action(diff.Compact)
	compactRefused := p.refusal(diff.Compact)
	compactTodo := func() string {
		if compact != nil && compact.Compact != nil {
			c := compact.Compact
			return fmt.Sprintf("the next apply rewrites %s (%s) in %s", config.CountOf(c.InputFiles, "file", "files"), config.FormatSize(c.InputBytes), config.CountOf(c.Partitions, "partition", "partitions"))
		}
		if compactRefused != "" {
			return "the plan refuses the compaction: " + compactRefused
		}
		return "the compaction policy rewrites none of them: no partition has enough candidates for a rewrite that changes something"
	}
	if in.Files.SmallFiles >= int64(sel.MinInputFiles) && in.SmallFileShare >= 0.25 {
		todo := fmt.Sprintf("add a compaction block (target_file_size = %q)", config.FormatSize(in.TargetFileSize))
		if pol.Compaction.Declared {
			todo = compactTodo()
		}
		out = append(out, fmt.Sprintf("compact: %d of %d data files (%.0f%%) are below %s; %s",
			in.Files.SmallFiles, in.Files.DataFiles, in.SmallFileShare*100, config.FormatSize(in.SmallFileLimit), todo))
	}
	if in.Files.DeleteFiles > 0 {
		todo := "compaction with delete_file_threshold applies them"
		if pol.Compaction.Declared {
			todo = compactTodo()
		}
		out = append(out, fmt.Sprintf("compact: %d delete files (%s) slow every read; %s",
			in.Files.DeleteFiles, config.FormatSize(in.Files.DeleteBytes), todo))
	}
	if compactRefused != "" && !slices.ContainsFunc(out, func(r string) bool { return strings.HasPrefix(r, "compact: ") }) {
		out = append(out, "compact: refused: "+compactRefused)
	}
	return out
}

// manifestAdvice is about the current snapshot's manifest count.
func manifestAdvice(in *diff.Inspection, pol *config.Effective, p planned) []string {
	maxManifests := pol.Manifests.MaxCount.Value
	if maxManifests <= 0 {
		maxManifests = config.DefaultManifestMaxCount
	}
	switch rm := p.action(diff.RewriteManifests); {
	case rm != nil && rm.Manifests != nil:
		return []string{fmt.Sprintf("rewrite manifests: the current snapshot has %d manifests (more than %d); the next apply rewrites them into ~%d",
			in.Manifests.Count, maxManifests, rm.Manifests.EstimatedManifestsAfter)}
	case !pol.Manifests.Declared && in.Manifests.Count > maxManifests:
		return []string{fmt.Sprintf("rewrite manifests: the current snapshot has %d manifests (more than %d); add a manifests block", in.Manifests.Count, maxManifests)}
	}
	return nil
}

// expiryAdvice is about old snapshots.
func expiryAdvice(in *diff.Inspection, pol *config.Effective, p planned) []string {
	maxAge := pol.SnapshotRetention.MaxAge.Value
	if maxAge <= 0 {
		maxAge = config.DefaultMaxSnapshotAge
	}
	expire := p.action(diff.ExpireSnapshots)
	switch {
	case pol.SnapshotRetention.Declared && expire != nil && expire.Expire != nil:
		e := expire.Expire
		return []string{fmt.Sprintf("expire snapshots: %d snapshots, the oldest %s old; the next apply expires %d of them and frees %d files (%s)",
			in.Snapshots.Count, roughAge(in.Snapshots.OldestAgeMs), len(e.SnapshotIDs), e.FilesToDelete, config.FormatSize(e.BytesToDelete))}
	case pol.SnapshotRetention.Declared:
		if why := p.refusal(diff.ExpireSnapshots); why != "" {
			return []string{"expire snapshots: refused: " + why}
		}
	case in.Snapshots.Count > 1 && in.Snapshots.OldestAgeMs > maxAge.Milliseconds():
		return []string{fmt.Sprintf("expire snapshots: %d snapshots, the oldest %s old; old snapshots alone hold %d files (%s); set snapshot_retention (max_age = %q)",
			in.Snapshots.Count, roughAge(in.Snapshots.OldestAgeMs),
			in.OldSnapshotFiles, config.FormatSize(in.OldSnapshotBytes), config.FormatDuration(maxAge))}
	}
	return nil
}

// orphanAdvice is about unreferenced files and stuck quarantine runs.
func orphanAdvice(in *diff.Inspection, pol *config.Effective, p planned) []string {
	o := in.Orphans
	if o == nil {
		return nil
	}
	var out []string
	remove := p.action(diff.RemoveOrphanFiles)
	switch {
	case pol.OrphanFiles.Declared && remove != nil && remove.Orphans != nil:
		out = append(out, fmt.Sprintf("remove orphan files: the next apply removes %d unreferenced files (%s) older than %s",
			remove.Orphans.Count, config.FormatSize(remove.Orphans.Bytes), o.OlderThan))
	case pol.OrphanFiles.Declared && p.refusal(diff.RemoveOrphanFiles) != "":
		out = append(out, "orphan files: refused: "+p.refusal(diff.RemoveOrphanFiles))
	case pol.OrphanFiles.Declared:
	case o.Refusal != "" || len(o.NestedTables) > 0 || o.Missing > 0:
		out = append(out, "orphan files: the storage cannot be swept safely; see orphans")
	case o.Old > 0:
		out = append(out, fmt.Sprintf("remove orphan files: %d unreferenced files (%s) are older than %s; add an orphan_files block",
			o.Old, config.FormatSize(o.OldBytes), o.OlderThan))
	}
	if len(o.StuckRuns) > 0 {
		runs := "1 run is"
		if n := len(o.StuckRuns); n > 1 {
			runs = fmt.Sprintf("%d runs are", n)
		}
		out = append(out, "quarantine: "+runs+" stuck: apply never purges a stuck run; see stuck quarantine under orphan files")
	}
	return out
}

// roughAge renders an age for people in its largest whole unit ("13d",
// "5h", "42m"); config.FormatDuration is exact and would print
// "1166402781ms".
func roughAge(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	for _, u := range []time.Duration{24 * time.Hour, time.Hour, time.Minute, time.Second} {
		if d >= u {
			return config.FormatDuration(d.Truncate(u))
		}
	}
	return config.FormatDuration(d)
}

// inspectSchema flattens a schema for inspect: each field, then its nested
// fields (a struct's, a list's element, a map's key and value) one level
// deeper.
func inspectSchema(sc *iceberg.Schema) diff.InspectSchema {
	out := diff.InspectSchema{ID: sc.ID, Fields: []diff.SchemaColumn{}}
	var walk func(prefix string, depth int, id int, name string, t iceberg.Type, required bool)
	walk = func(prefix string, depth int, id int, name string, t iceberg.Type, required bool) {
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		col := diff.SchemaColumn{ID: id, Name: name, Path: path, Type: t.String(), Required: required, Depth: depth}
		switch t := t.(type) {
		case *iceberg.StructType:
			col.Type = "struct"
			out.Fields = append(out.Fields, col)
			for _, f := range t.FieldList {
				walk(path, depth+1, f.ID, f.Name, f.Type, f.Required)
			}
		case *iceberg.ListType:
			col.Type = "list"
			out.Fields = append(out.Fields, col)
			walk(path, depth+1, t.ElementID, "element", t.Element, t.ElementRequired)
		case *iceberg.MapType:
			col.Type = "map"
			out.Fields = append(out.Fields, col)
			walk(path, depth+1, t.KeyID, "key", t.KeyType, true)
			walk(path, depth+1, t.ValueID, "value", t.ValueType, t.ValueRequired)
		default:
			out.Fields = append(out.Fields, col)
		}
	}
	for _, f := range sc.Fields() {
		walk("", 0, f.ID, f.Name, f.Type, f.Required)
	}
	return out
}
