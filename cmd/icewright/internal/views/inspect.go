package views

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/icewright/icewright/diff"
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
		if len(in.Specs) > 1 && sp.ID == in.DefaultSpecID {
			f += " (default)"
		}
		specs = append(specs, fmt.Sprintf("%d: %s", sp.ID, f))
	}
	kv("partition specs", strings.Join(specs, "; "))
	if len(in.SortOrder) == 0 {
		kv("sort order", "unsorted")
	} else {
		kv("sort order", quoteList(in.SortOrder))
	}
	if len(in.SortOrders) > 1 {
		orders := make([]string, 0, len(in.SortOrders))
		for _, o := range in.SortOrders {
			f := "unsorted"
			if len(o.Fields) > 0 {
				f = quoteList(o.Fields)
			}
			if o.Default {
				f += " (default)"
			}
			orders = append(orders, fmt.Sprintf("%d: %s", o.ID, f))
		}
		kv("sort orders", strings.Join(orders, "; "))
	}

	if len(in.Schema.Fields) > 0 {
		section(fmt.Sprintf("Schema (id %d)", in.Schema.ID))
		writeSchema(&b, in.Schema.Fields)
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
	if len(in.SizeHistogram) > 0 {
		kv("file sizes", "data files per size range, target "+Bytes(in.TargetFileSize))
		writeHistogram(&b, in.SizeHistogram, in.TargetFileSize, "    ")
	}
	kv("partitions", Count(in.Partitions.Count))
	for _, p := range in.Partitions.Top {
		name := p.Partition
		if name == "" {
			name = "(unpartitioned)"
		}
		fmt.Fprintf(&b, "    %-30s %s, %s, %s small\n", name, countOf(p.DataFiles, "file", "files"), Bytes(p.DataBytes), Count(p.SmallFiles))
	}
	for _, h := range in.PartitionHistograms {
		name := h.Partition
		if name == "" {
			name = "(unpartitioned)"
		}
		fmt.Fprintf(&b, "  file sizes of %s (spec %d)\n", name, h.SpecID)
		writeHistogram(&b, h.Buckets, in.TargetFileSize, "    ")
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
		for _, r := range o.QuarantineRuns {
			purge := "never purged by icewright"
			if r.PurgeAfterMs > 0 {
				purge = "purge after " + utcMinute(r.PurgeAfterMs)
			}
			if r.Stuck != "" {
				purge = "stuck"
			}
			created := "created " + utcMinute(r.CreatedAtMs)
			if r.CreatedAtMs <= 0 {
				created = "creation time unknown" // no readable manifest
			}
			kv("quarantine run", fmt.Sprintf("%s: %s (%s), %s, %s", r.RunID, countOf(r.Files, "file", "files"), Bytes(r.Bytes), created, purge))
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

// writeSchema prints one line a field, nested fields indented under their
// parent.
func writeSchema(b *strings.Builder, fields []diff.SchemaColumn) {
	width := 0
	for _, f := range fields {
		width = max(width, 2*f.Depth+len(f.Name))
	}
	for _, f := range fields {
		req := "optional"
		if f.Required {
			req = "required"
		}
		name := strings.Repeat("  ", f.Depth) + f.Name
		fmt.Fprintf(b, "  %4d  %-*s  %-12s %s\n", f.ID, width, name, f.Type, req)
	}
}

// histogramWidth is the longest bar, in characters.
const histogramWidth = 40

// writeHistogram draws size buckets as bars scaled to the fullest one,
// marking the bucket that holds the target size. A run of three or more
// empty buckets is one line (the JSON keeps every bucket).
func writeHistogram(b *strings.Builder, buckets []diff.SizeBucket, target int64, indent string) {
	type row struct {
		label  string
		files  int64
		target bool
	}
	var rows []row
	var most int64
	for i := 0; i < len(buckets); i++ {
		k := buckets[i]
		most = max(most, k.Files)
		j := i
		holds := func(x diff.SizeBucket) bool { return target >= x.MinBytes && target < x.MaxBytes }
		for k.Files == 0 && !holds(k) && j+1 < len(buckets) && buckets[j+1].Files == 0 && !holds(buckets[j+1]) {
			j++
		}
		if j-i+1 < 3 {
			j = i
		}
		rows = append(rows, row{label: pow2Size(k.MinBytes) + " - " + pow2Size(buckets[j].MaxBytes), files: k.Files, target: holds(k)})
		i = j
	}
	width := 0
	for _, r := range rows {
		width = max(width, len(r.label))
	}
	for _, r := range rows {
		n := 0
		if most > 0 {
			n = int((r.files*histogramWidth + most - 1) / most)
		}
		line := fmt.Sprintf("%s%-*s  %-*s %s", indent, width, r.label, histogramWidth, strings.Repeat("#", n), Count(r.files))
		if r.target {
			line += "  <- target " + Bytes(target)
		}
		b.WriteString(line + "\n")
	}
}

// pow2Size renders a bucket bound, a power of two, in its exact unit:
// "512 B", "4 KiB", "128 MiB".
func pow2Size(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	u := 0
	for n >= 1024 && n%1024 == 0 && u < len(units)-1 {
		n /= 1024
		u++
	}
	return fmt.Sprintf("%d %s", n, units[u])
}

func utcMinute(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04 UTC")
}

// InspectJSONList writes `inspect -json` for a selector or several
// addresses: an array of the documents InspectJSON writes.
func InspectJSONList(w io.Writer, ins []*diff.Inspection) error {
	masked := make([]diff.Inspection, len(ins))
	for i, in := range ins {
		masked[i] = *in
		masked[i].Properties = maskProps(in.Properties)
	}
	return writeJSON(w, masked, "inspection")
}
