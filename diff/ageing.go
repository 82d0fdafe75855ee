package diff

import (
	"errors"
	"fmt"
	"slices"

	"github.com/icewright/icewright/config"
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
			Reason: fmt.Sprintf("%s %s not aged: spec %d, %s", partitions(len(ag.Groups)), config.Plural(len(ag.Groups), "is", "are"), ag.SourceSpecID, why)}}, false
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

// boundAgeing is the fresh action at the approved cutoff, when the table
// changed since the plan: apply's later clock never ages a window the
// approved plan did not call aged (the next plan does), nor makes a spec
// the default that the approved plan did not. A rule or spec changed since
// the plan skips it.
func boundAgeing(a, f Action) Bounded {
	ap, fp := a.PartitionAgeing, f.PartitionAgeing
	if ap.From != fp.From || ap.To != fp.To || ap.Column != fp.Column || ap.SourceSpecID != fp.SourceSpecID || (!fp.AddsSpec && ap.TargetSpecID != fp.TargetSpecID) {
		return Bounded{Skip: fmt.Sprintf("the ageing changed since the plan (%s %s of %s, spec %d -> %d, now %s %s of %s, spec %d -> %d); run icewright plan again",
			ap.From, ap.To, ap.Column, ap.SourceSpecID, ap.TargetSpecID, fp.From, fp.To, fp.Column, fp.SourceSpecID, fp.TargetSpecID)}
	}
	p := *fp
	p.Groups = slices.Clone(fp.Groups)
	p.CutoffMs = min(ap.CutoffMs, fp.CutoffMs)
	p.AfterMs = fp.AfterMs
	if p.CutoffMs != fp.CutoffMs {
		// The executor ages what ended by CutoffMs, so the fresh groups
		// of later windows are not run; they are not listed either.
		p.Groups = p.Groups[:0]
		p.InputFiles, p.InputBytes, p.Records = 0, 0, 0
		approved := map[string]bool{}
		for _, g := range ap.Groups {
			approved[g.Partition] = true
		}
		for _, g := range fp.Groups {
			if approved[g.Partition] {
				p.Groups = append(p.Groups, g)
				p.InputFiles += g.InputFiles
				p.InputBytes += g.InputBytes
				p.Records += g.Records
			}
		}
	}
	p.SetsDefault = ap.SetsDefault && fp.SetsDefault
	var notes []string
	fresh := map[string]bool{}
	for _, g := range p.Groups {
		fresh[g.Partition] = true
	}
	for _, g := range ap.Groups {
		if !fresh[g.Partition] {
			notes = append(notes, fmt.Sprintf("partition %s: no longer to age", g.Partition))
		}
	}
	if len(p.Groups) == 0 && !p.SetsDefault {
		return Bounded{Skip: "nothing the approved plan ages is left to age", NotApplied: notes}
	}
	act := f
	act.PartitionAgeing = &p
	return Bounded{Action: act, NotApplied: notes}
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
