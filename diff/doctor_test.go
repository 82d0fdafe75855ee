package diff

import (
	"strings"
	"testing"
)

// TestTableLimits: each problem the observation records becomes one
// finding with the plan's reason, a commit problem a failure and the rest
// warnings; a table without any has only its format line.
func TestTableLimits(t *testing.T) {
	neg := int64(-5)
	pos := int64(7)
	for _, c := range []struct {
		name  string
		st    TableState
		want  map[string]string // check -> status
		quote string            // a sentence the findings must carry
	}{
		{"clean", TableState{FormatVersion: 2, CurrentSnapshotID: &pos}, map[string]string{"format": DoctorOK}, "format v2, 0 data files; nothing in the table stops compaction"},
		{"metadata name", TableState{FormatVersion: 2, CommitProblem: "the current metadata file x.json is not named"},
			map[string]string{"format": DoctorOK, "commit": DoctorFail}, "x.json is not named"},
		{"v3 types", TableState{FormatVersion: 3, CompactProblem: "columns of type variant"},
			map[string]string{"format": DoctorOK, "compaction": DoctorWarn}, "compaction is refused: columns of type variant"},
		{"unwritable spec", TableState{FormatVersion: 2, UnwritableSpecs: map[int]string{1: "two decimal fields"}},
			map[string]string{"format": DoctorOK, "spec": DoctorWarn}, "partition spec 1 are neither compacted nor rewritten: two decimal fields"},
		{"head id", TableState{FormatVersion: 2, CurrentSnapshotID: &neg},
			map[string]string{"format": DoctorOK, "snapshots": DoctorWarn}, "snapshot -5"},
		{"row lineage", TableState{FormatVersion: 3, Partitions: []PartitionStats{{NoRowIDCandidates: 3}}},
			map[string]string{"format": DoctorOK, "row-lineage": DoctorWarn}, "3 data files have no first_row_id"},
		{"deletes", TableState{FormatVersion: 3, Files: FileStats{DataFiles: 4, DeleteFiles: 3, PositionDeletes: 1, EqualityDeletes: 1, DeletionVectors: 1}},
			map[string]string{"format": DoctorOK}, "3 delete files (1 position, 1 equality, 1 deletion vector)"},
		{"foreign and escaped", TableState{FormatVersion: 2, ForeignFile: "s3://other/f.parquet", EscapedFileURI: "file:///a%3Db/f.parquet"},
			map[string]string{"format": DoctorOK, "storage": DoctorWarn, "file-names": DoctorWarn}, "s3://other/f.parquet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.st.Address = "c.ns.t"
			got := TableLimits(&c.st)
			seen := map[string]string{}
			var all []string
			for _, f := range got {
				if f.Table != "c.ns.t" {
					t.Errorf("finding %+v has no table", f)
				}
				seen[f.Check] = f.Status
				all = append(all, f.Message)
			}
			if len(seen) != len(c.want) || len(got) != len(c.want) {
				t.Errorf("checks %v, want %v", seen, c.want)
			}
			for k, v := range c.want {
				if seen[k] != v {
					t.Errorf("%s: %q, want %q", k, seen[k], v)
				}
			}
			if !strings.Contains(strings.Join(all, "\n"), c.quote) {
				t.Errorf("findings %q do not say %q", all, c.quote)
			}
			if clear := strings.Contains(all[0], "nothing in the table stops"); clear != (len(got) == 1) {
				t.Errorf("format line %q says the table is clear with %d findings", all[0], len(got))
			}
		})
	}
}
