package diff

import (
	"errors"
	"fmt"
	"slices"

	"github.com/iceops/iceops/config"
)

// PartitionAgeing is what age_partitions does to a table: the coarser
// partitions it writes, each from the finer partitions of the default spec
// whose coarser window ended at least After before the plan's clock
// (providers/compaction.PlanAgeing decides it). Providers fill it as
// TableState.PartitionAgeing when the policy has a partition_ageing block;
// the action's payload is the same figures.
type PartitionAgeing struct {
	After   string `json:"after"` // as written
	AfterMs int64  `json:"after_ms"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Column is the partition source column; Field the default spec's
	// field of the From transform on it.
	Column string `json:"column"`
	Field  string `json:"field"`
	// CutoffMs is the plan's clock minus After: a coarser window that
	// ended at or before it is aged. Apply ages what ended by the same
	// cutoff, whatever its own clock.
	CutoffMs     int64 `json:"cutoff_ms"`
	SourceSpecID int   `json:"source_spec_id"`
	TargetSpecID int   `json:"target_spec_id"`
	// AddsSpec: the table lacks the coarser spec and the commit adds it
	// (not as the default spec).
	AddsSpec bool `json:"adds_spec"`
	// SetsDefault: the commit also makes the coarser spec the default
	// (partition_ageing.default), alone when nothing is aged yet.
	SetsDefault bool          `json:"sets_default"`
	InputFiles  int           `json:"input_files"`
	InputBytes  int64         `json:"input_bytes"`
	Records     int64         `json:"records"`
	Groups      []AgeingGroup `json:"groups"`
}

// AgeingGroup is one coarser partition and the finer ones that go into it.
type AgeingGroup struct {
	Partition  string   `json:"partition"`
	Sources    []string `json:"sources"`
	InputFiles int      `json:"input_files"`
	InputBytes int64    `json:"input_bytes"`
	Records    int64    `json:"records"`
}

// planAgeing plans age_partitions when the policy has a partition_ageing
// block and some partition is aged; a table whose coarser spec is
// ambiguous is a refusal, as is one whose source spec cannot be written.
func planAgeing(pol *config.Effective, st *TableState) (Action, []Refusal, bool) {
	ag := st.PartitionAgeing
	if !pol.PartitionAgeing.Declared {
		return Action{}, nil, false
	}
	if st.AgeingRefusal != "" {
		return Action{}, []Refusal{{Action: string(AgePartitions), Reason: "partition_ageing (" + fileLine(pol.PartitionAgeing.DeclRange) + "): " + st.AgeingRefusal}}, false
	}
	if ag == nil || (len(ag.Groups) == 0 && !ag.SetsDefault) {
		return Action{}, nil, false
	}
	if why, ok := st.UnwritableSpecs[ag.SourceSpecID]; ok {
		return Action{}, []Refusal{{Action: string(AgePartitions),
			Reason: fmt.Sprintf("%d partitions are not aged: spec %d, %s", len(ag.Groups), ag.SourceSpecID, why)}}, false
	}
	if st.CompactProblem != "" {
		return Action{}, []Refusal{{Action: string(AgePartitions), Reason: st.CompactProblem}}, false
	}
	p := *ag
	p.Groups = slices.Clone(ag.Groups)
	spec := fmt.Sprintf("spec %d", p.TargetSpecID)
	if p.AddsSpec {
		spec = "new " + spec
	}
	if p.SetsDefault {
		spec += ", made the default"
	} else if p.AddsSpec {
		spec += ", not the default"
	}
	if len(p.Groups) == 0 {
		return Action{
			Type: AgePartitions,
			Reason: fmt.Sprintf("partition_ageing.default (%s): no %s partition of %s is old enough yet; %s",
				fileLine(pol.PartitionAgeing.Default.Origin), p.From, p.Column, spec),
			PartitionAgeing: &p,
		}, nil, true
	}
	return Action{
		Type: AgePartitions,
		Reason: fmt.Sprintf("partition_ageing (%s): %s partitions of %s whose %s ended %s ago or more, into %d %s partitions of %s",
			fileLine(pol.PartitionAgeing.DeclRange), p.From, p.Column, p.To, p.After, len(p.Groups), p.To, spec),
		PartitionAgeing: &p,
	}, nil, true
}

func validateAgeing(a *PartitionAgeing) error {
	if a == nil || (len(a.Groups) == 0 && !a.SetsDefault) {
		return errors.New("no partitions to age")
	}
	files := 0
	for _, g := range a.Groups {
		if g.InputFiles <= 0 || len(g.Sources) == 0 {
			return fmt.Errorf("group %s has no input", g.Partition)
		}
		files += g.InputFiles
	}
	if files != a.InputFiles {
		return fmt.Errorf("input_files %d but the groups have %d", a.InputFiles, files)
	}
	if a.AfterMs < 0 {
		return fmt.Errorf("after_ms %d is negative", a.AfterMs)
	}
	return nil
}
