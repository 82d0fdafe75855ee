package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/iceops/iceops/diff"
)

// InspectJSON writes `inspect -json`. Secret-looking table properties are
// masked here too: the report is printed, so docs/design.md §3.2 applies.
func InspectJSON(w io.Writer, in *diff.Inspection) error {
	masked := *in
	masked.Properties = maskProps(in.Properties)
	return writeJSON(w, &masked, "inspection")
}

func maskProps(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		if isSecretKey(k) {
			v = Masked
		}
		out[k] = v
	}
	return out
}

// Inspect renders the health report of one table: what it holds, how its
// files are sized, its history and refs, what old snapshots and orphans
// cost, and what to do about it.
func Inspect(w io.Writer, in *diff.Inspection, s *Styles) error {
	var b strings.Builder
	kv := func(k, v string) { fmt.Fprintf(&b, "  %-20s %s\n", k, v) }
	section := func(title string) { fmt.Fprintf(&b, "\n%s\n", s.Bold(title)) }

	fmt.Fprintf(&b, "%s\n", s.Bold("# "+in.Address))
	if in.Managed {
		b.WriteString(s.Dim("# managed by this configuration") + "\n")
	} else {
		b.WriteString(s.Dim("# not managed by this configuration: figures use the table's own settings") + "\n")
	}

	section("Table")
	kv("uuid", in.UUID)
	kv("location", in.Location)
	kv("metadata", in.MetadataLocation)
	kv("format version", strconv.Itoa(in.FormatVersion))
	if in.CurrentSnapshotID != nil {
		kv("current snapshot", strconv.FormatInt(*in.CurrentSnapshotID, 10))
	} else {
		kv("current snapshot", "none (empty table)")
	}
	specs := make([]string, 0, len(in.Specs))
	for _, sp := range in.Specs {
		f := strings.Join(sp.Fields, ", ")
		if f == "" {
			f = "unpartitioned"
		}
		specs = append(specs, fmt.Sprintf("%d: %s", sp.ID, f))
	}
	kv("partition specs", strings.Join(specs, "; "))
	if len(in.SortOrder) == 0 {
		kv("sort order", "unsorted")
	} else {
		kv("sort order", quoteList(in.SortOrder))
	}

	section("Data files")
	f := in.Files
	kv("files", fmt.Sprintf("%s (%s, %s rows)", Count(f.DataFiles), Bytes(f.DataBytes), Count(f.Records)))
	if f.DataFiles > 0 {
		kv("size min/median/max", fmt.Sprintf("%s / %s / %s", Bytes(f.MinSize), Bytes(f.MedianSize), Bytes(f.MaxSize)))
		kv("small files", fmt.Sprintf("%s (%.0f%%) below %s; target %s",
			Count(f.SmallFiles), 100*in.SmallFileShare, Bytes(in.SmallFileLimit), Bytes(in.TargetFileSize)))
	}
	kv("delete files", fmt.Sprintf("%s (%s): %s position, %s equality, %s deletion vectors",
		Count(f.DeleteFiles), Bytes(f.DeleteBytes), Count(f.PositionDeletes), Count(f.EqualityDeletes), Count(f.DeletionVectors)))
	kv("partitions", Count(in.Partitions.Count))
	for _, p := range in.Partitions.Top {
		name := p.Partition
		if name == "" {
			name = "(unpartitioned)"
		}
		fmt.Fprintf(&b, "    %-30s %s, %s, %s small\n", name, countOf(p.DataFiles, "file", "files"), Bytes(p.DataBytes), Count(p.SmallFiles))
	}
	m := in.Manifests
	kv("manifests", fmt.Sprintf("%s (%s data, %s delete; %s)", Count(m.Count), Count(m.DataCount), Count(m.DeleteCount), Bytes(m.Bytes)))

	section("History")
	sn := in.Snapshots
	if sn.Count > 0 {
		kv("snapshots", fmt.Sprintf("%s, oldest %s ago, newest %s ago", Count(sn.Count), AgeMs(sn.OldestAgeMs), AgeMs(sn.NewestAgeMs)))
	} else {
		kv("snapshots", "0")
	}
	for _, r := range in.Refs {
		extra := ""
		if r.MaxRefAgeMs != nil {
			extra += fmt.Sprintf(", max ref age %s", AgeMs(*r.MaxRefAgeMs))
		}
		if r.MaxSnapshotAgeMs != nil {
			extra += fmt.Sprintf(", max snapshot age %s", AgeMs(*r.MaxSnapshotAgeMs))
		}
		if r.MinSnapshotsToKeep != nil {
			extra += fmt.Sprintf(", keeps %d", *r.MinSnapshotsToKeep)
		}
		kv("ref", fmt.Sprintf("%s %q -> %d%s", r.Type, r.Name, r.SnapshotID, extra))
	}
	kv("held by old history", fmt.Sprintf("%s (%s) only reachable from old snapshots", countOf(in.OldSnapshotFiles, "file", "files"), Bytes(in.OldSnapshotBytes)))

	section("Orphan files")
	switch {
	case in.OrphanError != "":
		kv("estimate", s.Warn("not available: ")+in.OrphanError)
	case in.Orphans != nil:
		o := in.Orphans
		kv("unreferenced", fmt.Sprintf("%s (%s)", countOf(o.Unreferenced, "file", "files"), Bytes(o.UnreferencedBytes)))
		kv("older than "+o.OlderThan, fmt.Sprintf("%s (%s)", countOf(o.Old, "file", "files"), Bytes(o.OldBytes)))
		if o.NonIceberg > 0 {
			kv("non-Iceberg files", Count(o.NonIceberg))
		}
		if o.Missing > 0 {
			kv("missing", s.Refuse(fmt.Sprintf("%s referenced but not in storage", countOf(o.Missing, "file", "files"))))
		}
		if len(o.NestedTables) > 0 {
			kv("nested tables", strings.Join(o.NestedTables, ", "))
		}
		if o.Refusal != "" {
			kv("deletion refused", o.Refusal)
		}
		for _, r := range o.StuckRuns {
			id := r.RunID
			if id == "" {
				id = "(all)" // the quarantine could not be listed
			}
			kv("stuck quarantine", s.Warn(id)+": "+r.Reason)
		}
	default:
		kv("estimate", "not computed")
	}

	section("Properties")
	if len(in.Properties) == 0 {
		b.WriteString("  (none)\n")
	}
	props := maskProps(in.Properties)
	for _, k := range sortedKeys(props) {
		v := props[k]
		if v != Masked {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, "  %s = %s\n", strconv.Quote(k), v)
	}

	section("Recommendations")
	if len(in.Recommendations) == 0 {
		b.WriteString("  " + s.OK("none: the table looks healthy") + "\n")
	}
	for _, r := range in.Recommendations {
		fmt.Fprintf(&b, "  %s %s\n", s.Change("»"), r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
