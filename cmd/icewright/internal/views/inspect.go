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
// cost, and what to do about it; one section a function.
func Inspect(w io.Writer, in *diff.Inspection, s *Styles) error {
	r := &report{s: s}
	fmt.Fprintf(&r.b, "%s\n", s.Bold("# "+in.Address))
	if in.Managed {
		r.b.WriteString(s.Dim("# managed by this configuration") + "\n")
	} else {
		r.b.WriteString(s.Dim("# not managed by this configuration: figures use the table's own settings") + "\n")
	}
	r.table(in)
	if len(in.Schema.Fields) > 0 {
		r.section(fmt.Sprintf("Schema (id %d)", in.Schema.ID))
		writeSchema(&r.b, in.Schema.Fields)
	}
	r.dataFiles(in)
	r.history(in)
	r.orphans(in)
	r.waste(in)
	r.properties(in)
	r.recommendations(in)
	_, err := io.WriteString(w, r.b.String())
	return err
}

// report is inspect's text as it is written: a title per section, then
// key-value lines.
type report struct {
	b strings.Builder
	s *Styles
}

func (r *report) kv(k, v string)       { fmt.Fprintf(&r.b, "  %-20s %s\n", k, v) }
func (r *report) section(title string) { fmt.Fprintf(&r.b, "\n%s\n", r.s.Bold(title)) }

// table: identity, specs and sort orders.
func (r *report) table(in *diff.Inspection) {
	r.section("Table")
	r.kv("uuid", in.UUID)
	r.kv("location", in.Location)
	r.kv("metadata", in.MetadataLocation)
	r.kv("format version", strconv.Itoa(in.FormatVersion))
	if in.CurrentSnapshotID != nil {
		r.kv("current snapshot", strconv.FormatInt(*in.CurrentSnapshotID, 10))
	} else {
		r.kv("current snapshot", "none (empty table)")
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
	r.kv("partition specs", strings.Join(specs, "; "))
	if len(in.SortOrder) == 0 {
		r.kv("sort order", "unsorted")
	} else {
		r.kv("sort order", quoteList(in.SortOrder))
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
		r.kv("sort orders", strings.Join(orders, "; "))
	}
}

// dataFiles: sizes, delete files, histograms, partitions, manifests.
func (r *report) dataFiles(in *diff.Inspection) {
	b := &r.b
	r.section("Data files")
	f := in.Files
	r.kv("files", fmt.Sprintf("%s (%s, %s rows)", Count(f.DataFiles), Bytes(f.DataBytes), Count(f.Records)))
	if f.DataFiles > 0 {
		r.kv("size min/median/max", fmt.Sprintf("%s / %s / %s", Bytes(f.MinSize), Bytes(f.MedianSize), Bytes(f.MaxSize)))
		r.kv("small files", fmt.Sprintf("%s (%.0f%%) below %s; target %s",
			Count(f.SmallFiles), 100*in.SmallFileShare, Bytes(in.SmallFileLimit), Bytes(in.TargetFileSize)))
	}
	r.kv("delete files", fmt.Sprintf("%s (%s): %s position, %s equality, %s deletion vectors",
		Count(f.DeleteFiles), Bytes(f.DeleteBytes), Count(f.PositionDeletes), Count(f.EqualityDeletes), Count(f.DeletionVectors)))
	if len(in.SizeHistogram) > 0 {
		r.kv("file sizes", "data files per size range, target "+Bytes(in.TargetFileSize))
		writeHistogram(b, in.SizeHistogram, in.TargetFileSize, "    ")
	}
	r.kv("partitions", Count(in.Partitions.Count))
	for _, p := range in.Partitions.Top {
		name := p.Partition
		if name == "" {
			name = "(unpartitioned)"
		}
		fmt.Fprintf(b, "    %-30s %s, %s, %s small\n", name, countOf(p.DataFiles, "file", "files"), Bytes(p.DataBytes), Count(p.SmallFiles))
	}
	for _, h := range in.PartitionHistograms {
		name := h.Partition
		if name == "" {
			name = "(unpartitioned)"
		}
		fmt.Fprintf(b, "  file sizes of %s (spec %d)\n", name, h.SpecID)
		writeHistogram(b, h.Buckets, in.TargetFileSize, "    ")
	}
	m := in.Manifests
	r.kv("manifests", fmt.Sprintf("%s (%s data, %s delete; %s)", Count(m.Count), Count(m.DataCount), Count(m.DeleteCount), Bytes(m.Bytes)))
}

// history: snapshots, refs and what old snapshots hold alone.
func (r *report) history(in *diff.Inspection) {
	r.section("History")
	sn := in.Snapshots
	if sn.Count > 0 {
		r.kv("snapshots", fmt.Sprintf("%s, oldest %s ago, newest %s ago", Count(sn.Count), AgeMs(sn.OldestAgeMs), AgeMs(sn.NewestAgeMs)))
	} else {
		r.kv("snapshots", "0")
	}
	for _, ref := range in.Refs {
		extra := ""
		if ref.MaxRefAgeMs != nil {
			extra += fmt.Sprintf(", max ref age %s", AgeMs(*ref.MaxRefAgeMs))
		}
		if ref.MaxSnapshotAgeMs != nil {
			extra += fmt.Sprintf(", max snapshot age %s", AgeMs(*ref.MaxSnapshotAgeMs))
		}
		if ref.MinSnapshotsToKeep != nil {
			extra += fmt.Sprintf(", keeps %d", *ref.MinSnapshotsToKeep)
		}
		r.kv("ref", fmt.Sprintf("%s %q -> %d%s", ref.Type, ref.Name, ref.SnapshotID, extra))
	}
	r.kv("held by old history", fmt.Sprintf("%s (%s) only reachable from old snapshots", countOf(in.OldSnapshotFiles, "file", "files"), Bytes(in.OldSnapshotBytes)))
}

// orphans: the orphan estimate and the quarantine runs.
func (r *report) orphans(in *diff.Inspection) {
	s := r.s
	r.section("Orphan files")
	switch {
	case in.OrphanError != "":
		r.kv("estimate", s.Warn("not available: ")+in.OrphanError)
		return
	case in.Orphans == nil:
		r.kv("estimate", "not computed")
		return
	}
	o := in.Orphans
	r.kv("unreferenced", fmt.Sprintf("%s (%s)", countOf(o.Unreferenced, "file", "files"), Bytes(o.UnreferencedBytes)))
	r.kv("older than "+o.OlderThan, fmt.Sprintf("%s (%s)", countOf(o.Old, "file", "files"), Bytes(o.OldBytes)))
	if o.NonIceberg > 0 {
		r.kv("non-Iceberg files", Count(o.NonIceberg))
	}
	if o.Missing > 0 {
		r.kv("missing", s.Refuse(fmt.Sprintf("%s referenced but not in storage", countOf(o.Missing, "file", "files"))))
	}
	if len(o.NestedTables) > 0 {
		r.kv("nested tables", strings.Join(o.NestedTables, ", "))
	}
	if o.Refusal != "" {
		r.kv("deletion refused", o.Refusal)
	}
	for _, run := range o.StuckRuns {
		id := run.RunID
		if id == "" {
			id = "(all)" // the quarantine could not be listed
		}
		r.kv("stuck quarantine", s.Warn(id)+": "+run.Reason)
	}
	for _, run := range o.QuarantineRuns {
		purge := "never purged by icewright"
		if run.PurgeAfterMs > 0 {
			purge = "purge after " + utcMinute(run.PurgeAfterMs)
		}
		if run.Stuck != "" {
			purge = "stuck"
		}
		created := "created " + utcMinute(run.CreatedAtMs)
		if run.CreatedAtMs <= 0 {
			created = "creation time unknown" // no readable manifest
		}
		r.kv("quarantine run", fmt.Sprintf("%s: %s (%s), %s, %s", run.RunID, countOf(run.Files, "file", "files"), Bytes(run.Bytes), created, purge))
	}
}

// waste: what the table pays for today and no reader needs, in bytes and
// opens, and a month's money with prices.
func (r *report) waste(in *diff.Inspection) {
	w := in.Waste
	r.section("Waste")
	if w.ExpirableSnapshots == 0 {
		r.kv("past retention", "no snapshot")
	} else {
		r.kv("past retention", fmt.Sprintf("%s only %s hold (%s)",
			countOf(w.ExpirableFiles, "file", "files"), countOf(w.ExpirableSnapshots, "snapshot past retention", "snapshots past retention"), Bytes(w.ExpirableBytes)))
	}
	switch {
	case w.OrphanFiles != nil && w.OrphanBytes != nil:
		older := ""
		if in.Orphans != nil {
			older = " older than " + in.Orphans.OlderThan
		}
		r.kv("orphan files", fmt.Sprintf("%s (%s)%s", countOf(*w.OrphanFiles, "file", "files"), Bytes(*w.OrphanBytes), older))
	case in.OrphanError != "":
		r.kv("orphan files", "not counted: the storage could not be listed (see Orphan files); inspect again once it can")
	default:
		r.kv("orphan files", "not counted")
	}
	if w.SmallFiles == 0 {
		r.kv("small files", "none below "+Bytes(in.SmallFileLimit))
	} else {
		r.kv("small files", fmt.Sprintf("%s (%s) below %s: %s a full scan",
			countOf(w.SmallFiles, "file", "files"), Bytes(w.SmallBytes), Bytes(in.SmallFileLimit),
			countOf(w.ExtraScanOpens, "extra open", "extra opens")))
	}
	if w.USDPerMonth != nil {
		r.kv("costs", diff.FormatUSD(*w.USDPerMonth)+" a month (storage and the scans' requests; docs/cost.md)")
	} else {
		r.kv("costs", "no prices for this storage: quantities only")
	}
}

// properties: the table's properties, secret-looking values masked.
func (r *report) properties(in *diff.Inspection) {
	r.section("Properties")
	if len(in.Properties) == 0 {
		r.b.WriteString("  (none)\n")
	}
	props := maskProps(in.Properties)
	for _, k := range sortedKeys(props) {
		v := props[k]
		if v != Masked {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&r.b, "  %s = %s\n", strconv.Quote(k), v)
	}
}

func (r *report) recommendations(in *diff.Inspection) {
	r.section("Recommendations")
	if len(in.Recommendations) == 0 {
		r.b.WriteString("  " + r.s.OK("none: the table looks healthy") + "\n")
	}
	for _, rec := range in.Recommendations {
		fmt.Fprintf(&r.b, "  %s %s\n", r.s.Change("»"), rec)
	}
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
