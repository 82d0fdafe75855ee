package diff

import (
	"slices"
	"strings"
	"testing"
)

// A spec whose manifests the writer cannot write (iceberg-go v0.7.0 and
// two decimal partition fields, TableState.UnwritableSpecs) would fail
// the commit of any rewrite of its files or manifests after the files are
// written: the plan refuses them, names the spec and why, and plans the
// rest of the table; a lone file is no action there either.
func TestUnwritableSpecRefused(t *testing.T) {
	const why = "partition spec 1 has 2 decimal fields"
	part := func(spec int, sizes ...int64) PartitionStats {
		p := PartitionStats{SpecID: spec, DataFiles: int64(len(sizes)), CandidateSizes: sizes}
		for _, s := range sizes {
			p.DataBytes += s
			p.CandidateBytes += s
		}
		return p
	}
	refusal := func(tp TablePlan, action ActionType) string {
		i := slices.IndexFunc(tp.Refusals, func(r Refusal) bool { return r.Action == string(action) })
		if i < 0 {
			return ""
		}
		return tp.Refusals[i].Reason
	}
	t.Run("compact", func(t *testing.T) {
		st := linear(1 * day)
		st.UnwritableSpecs = map[int]string{1: why}
		st.Partitions = []PartitionStats{part(0, 10, 10), part(1, 10, 10, 10), part(1, 10)}
		tp := PlanTable(fullPolicy(), st, testNow)
		a := actionOf(tp, Compact)
		if a == nil || a.Compact.InputFiles != 2 || slices.ContainsFunc(a.Compact.Groups, func(g CompactGroup) bool { return g.SpecID == 1 }) {
			t.Fatalf("want spec 0's two files compacted, nothing of spec 1: %+v", a)
		}
		if got := refusal(tp, Compact); !strings.Contains(got, "3 data files in 1 partition of spec 1 are not compacted: "+why) {
			t.Fatalf("refusal %q", got)
		}
		st.Partitions = st.Partitions[1:]
		tp = PlanTable(fullPolicy(), st, testNow)
		if hasAction(tp, Compact) || refusal(tp, Compact) == "" {
			t.Fatalf("only spec 1 to compact: want a refusal and no compaction: %v %+v", tp.Actions, tp.Refusals)
		}
		st.Partitions = []PartitionStats{part(1, 10)}
		pol := fullPolicy()
		pol.Compaction.MinInputFiles = set(1, 6)
		if tp = PlanTable(pol, st, testNow); hasAction(tp, Compact) || refusal(tp, Compact) != "" {
			t.Fatalf("a lone file is no action, not a refusal: %v %+v", tp.Actions, tp.Refusals)
		}
	})
	t.Run("rewrite_manifests", func(t *testing.T) {
		data := func(spec int) ManifestInfo { return ManifestInfo{SpecID: spec, Data: true, Length: 1000} }
		for _, tt := range []struct {
			name  string
			files []ManifestInfo
			want  bool // rewrite_manifests planned
		}{
			{name: "both specs", files: []ManifestInfo{data(0), data(0), data(1), data(1), data(1)}, want: true},
			{name: "only the unwritable spec merges", files: []ManifestInfo{data(0), data(1), data(1)}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				st := linear(1 * day)
				st.UnwritableSpecs = map[int]string{1: why}
				st.Manifests = ManifestStats{Count: len(tt.files), DataCount: len(tt.files), Files: tt.files, Bytes: int64(len(tt.files)) * 1000}
				pol := fullPolicy()
				pol.Manifests.MaxCount = set(1, 31)
				tp := PlanTable(pol, st, testNow)
				a := actionOf(tp, RewriteManifests)
				if (a != nil) != tt.want {
					t.Fatalf("rewrite_manifests planned = %v, want %v", a != nil, tt.want)
				}
				if a != nil {
					held := 0
					for _, f := range tt.files {
						if f.SpecID == 1 {
							held++
						}
					}
					if a.Manifests.EstimatedManifestsAfter != 1+held {
						t.Fatalf("estimated %d manifests after, want spec 0's one and spec 1's %d as they are", a.Manifests.EstimatedManifestsAfter, held)
					}
				}
				if got := refusal(tp, RewriteManifests); !strings.Contains(got, "data manifests of spec 1 are not rewritten: "+why) {
					t.Fatalf("refusal %q", got)
				}
			})
		}
	})
}

func actionOf(tp TablePlan, typ ActionType) *Action {
	for i := range tp.Actions {
		if tp.Actions[i].Type == typ {
			return &tp.Actions[i]
		}
	}
	return nil
}
