package diff

import (
	"fmt"
	"slices"

	"github.com/icewright/icewright/config"
)

// Doctor is the report of `icewright doctor`: what icewright can and cannot do
// with each configured catalog, its storage and its tables, one finding a
// line. Plain data, like Inspection, so the views never import providers.
type Doctor struct {
	Findings []DoctorFinding `json:"findings"`
	Failures int             `json:"failures"`
	Warnings int             `json:"warnings"`
}

// Doctor statuses. A failure means something icewright needs is broken (the
// command exits 1); a warning is something icewright will not do on a table,
// with the reason (exit 0: the rest of the table is maintained).
const (
	DoctorOK   = "ok"
	DoctorWarn = "warn"
	DoctorFail = "fail"
)

// DoctorFinding is one line of the report.
type DoctorFinding struct {
	Catalog string `json:"catalog"`
	// Engine is the engine block's name for an engine's findings (its
	// Catalog is then ""); omitted for the others.
	Engine string `json:"engine,omitempty"`
	// Table is the table's address for a table's findings, "" for the
	// catalog's own.
	Table string `json:"table,omitempty"`
	// Check names what was looked at: reachable, credentials, list, write,
	// read, delete, clock, tables, format, commit, compaction...
	Check   string `json:"check"`
	Status  string `json:"status"`
	Message string `json:"message"`
	// Fix says what to do, when the message does not already.
	Fix string `json:"fix,omitempty"`
}

// Add appends f and counts it.
func (d *Doctor) Add(f DoctorFinding) {
	switch f.Status {
	case DoctorFail:
		d.Failures++
	case DoctorWarn:
		d.Warnings++
	}
	d.Findings = append(d.Findings, f)
}

// TableLimits is what icewright can and cannot do on the observed table st,
// from the same observed problems the plan turns into refusals
// (CommitProblem, CompactProblem, UnwritableSpecs, HeadIDProblem, files
// without first_row_id, foreign and escaped file names), so that doctor
// and plan cannot disagree: doctor says it for every table up front, the
// plan only where an action would need it. The reasons are the plan's own
// sentences. A table no commit can reach is a failure; everything else
// icewright only leaves out is a warning.
func TableLimits(st *TableState) []DoctorFinding {
	f := func(check, status, msg string) DoctorFinding {
		return DoctorFinding{Table: st.Address, Check: check, Status: status, Message: msg}
	}
	out := []DoctorFinding{f("format", DoctorOK, formatSummary(st))}
	if st.CommitProblem != "" {
		out = append(out, f("commit", DoctorFail, st.CommitProblem))
	}
	if why := HeadIDProblem(st.CurrentSnapshotID); why != "" {
		out = append(out, f("snapshots", DoctorWarn, "actions that add a snapshot (compaction, manifest rewrites) are refused: "+why))
	}
	if st.CompactProblem != "" {
		out = append(out, f("compaction", DoctorWarn, "compaction is refused: "+st.CompactProblem))
	}
	specs := make([]int, 0, len(st.UnwritableSpecs))
	for id := range st.UnwritableSpecs {
		specs = append(specs, id)
	}
	slices.Sort(specs)
	for _, id := range specs {
		out = append(out, f("spec", DoctorWarn, fmt.Sprintf("files and manifests of partition spec %d are neither compacted nor rewritten: %s", id, st.UnwritableSpecs[id])))
	}
	var noRowID int64
	for _, p := range st.Partitions {
		noRowID += p.NoRowIDCandidates
	}
	if noRowID > 0 {
		out = append(out, f("row-lineage", DoctorWarn, fmt.Sprintf("%s %s no first_row_id (format v3 row lineage): compaction leaves them until a manifest rewrite assigns the ids (declare a manifests block, or let another engine commit once)", dataFiles(noRowID), config.Plural(noRowID, "has", "have"))))
	}
	if st.ForeignFile != "" {
		out = append(out, f("storage", DoctorWarn, fmt.Sprintf("the table names files on another storage than its location %s (first: %s), which iceberg-go's one IO per table cannot read or delete: their partitions are not compacted and expiry that would free them is refused", st.Location, st.ForeignFile)))
	}
	if st.EscapedFileURI != "" {
		out = append(out, f("file-names", DoctorWarn, fmt.Sprintf("the table names files by file: URIs with percent-escapes (first: %s), which iceberg-go v0.7.0 opens decoded: their partitions are not compacted (use Spark's rewrite_data_files there)", st.EscapedFileURI)))
	}
	if len(out) == 1 {
		// Said so that a table with nothing to report reads as checked.
		out[0].Message += "; nothing in the table stops compaction, expiry or manifest rewrites (plan checks the orphan sweep)"
	}
	return out
}

// formatSummary is the table's format and the kinds of delete files it
// has, which decide what a rewrite must carry.
func formatSummary(st *TableState) string {
	noun := "data files"
	if st.Files.DataFiles == 1 {
		noun = "data file"
	}
	s := fmt.Sprintf("format v%d, %d %s", st.FormatVersion, st.Files.DataFiles, noun)
	if st.Files.DeleteFiles > 0 {
		s += fmt.Sprintf(", %s (%d position, %d equality, %s)",
			config.CountOf(st.Files.DeleteFiles, "delete file", "delete files"), st.Files.PositionDeletes, st.Files.EqualityDeletes, config.CountOf(st.Files.DeletionVectors, "deletion vector", "deletion vectors"))
	}
	return s
}
