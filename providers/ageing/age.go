package ageing

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/providers/compaction"
	"github.com/icewright/icewright/providers/internal/store"
	"github.com/icewright/icewright/providers/kind"
)

// Kind is age_partitions.
type Kind struct{}

var _ kind.Kind = Kind{}

// Types is age_partitions.
func (Kind) Types() []diff.ActionType { return []diff.ActionType{diff.AgePartitions} }

// Observe is, when the policy declares partition_ageing, what ageing would
// do to the table at the session's clock (st.PartitionAgeing), or why it
// cannot (st.AgeingRefusal).
func (Kind) Observe(ctx context.Context, env *kind.Env, tbl *table.Table, st *diff.TableState) error {
	if !env.Policy.PartitionAgeing.Declared {
		return nil
	}
	var err error
	if st.PartitionAgeing, st.AgeingRefusal, err = observe(ctx, tbl, env.Policy.PartitionAgeing, env.Now()); err != nil {
		return fmt.Errorf("partition ageing: %w", err)
	}
	return nil
}

// Execute ages the partitions as the approved action says.
func (Kind) Execute(ctx context.Context, env *kind.Env, req kind.Request) (*table.Table, store.Result, error) {
	cat, props, err := env.CatalogAndStorage(ctx)
	if err != nil {
		return nil, store.Result{}, err
	}
	return Age(ctx, req.Table, cat, props, req.Actions[0].PartitionAgeing)
}

// ageingRule is a partition_ageing rule as compaction reads it.
func ageingRule(from, to string, after time.Duration, setDefault bool) (compaction.AgeingRule, error) {
	f, err := iceberg.ParseTransform(from)
	if err != nil {
		return compaction.AgeingRule{}, fmt.Errorf("partition_ageing from: %w", err)
	}
	t, err := iceberg.ParseTransform(to)
	if err != nil {
		return compaction.AgeingRule{}, fmt.Errorf("partition_ageing to: %w", err)
	}
	return compaction.AgeingRule{From: f, To: t, After: after, Default: setDefault}, nil
}

// observe is the plan's view of what partition ageing would do to
// tbl at now, or why it cannot (the refusal).
func observe(ctx context.Context, tbl *table.Table, ag config.AgeingPolicy, now time.Time) (*diff.PartitionAgeing, string, error) {
	rule, err := ageingRule(ag.From.Value, ag.To.Value, ag.After.Value, ag.Default.Value)
	if err != nil {
		return nil, "", err
	}
	a, err := compaction.PlanAgeing(ctx, tbl, rule, now)
	if err != nil {
		return nil, "", err
	}
	if a.Refusal != "" {
		return nil, a.Refusal, nil
	}
	return ageingState(a, ag.From.Value, ag.To.Value, ag.After.Value), "", nil
}

func ageingState(a *compaction.Ageing, from, to string, after time.Duration) *diff.PartitionAgeing {
	out := &diff.PartitionAgeing{
		After: config.FormatDuration(after), AfterMs: after.Milliseconds(), From: from, To: to,
		Column: a.Column, Field: a.Field, CutoffMs: a.Cutoff.UnixMilli(),
		SourceSpecID: a.SourceSpecID, TargetSpecID: a.Spec.ID(), AddsSpec: a.NewSpec, SetsDefault: a.SetsDefault,
		Groups: []diff.AgeingGroup{},
	}
	for _, g := range a.Groups {
		dg := diff.AgeingGroup{Partition: g.Name, Sources: g.Sources, InputFiles: len(g.Tasks), InputBytes: g.Bytes(), Records: g.Records}
		out.Groups = append(out.Groups, dg)
		out.InputFiles += dg.InputFiles
		out.InputBytes += dg.InputBytes
		out.Records += dg.Records
	}
	return out
}

// Age ages tbl's partitions as the approved action says: by its
// rule and its cutoff, not apply's clock, so apply rewrites no window the
// plan did not call aged (files written since into those windows go too).
// The coarser spec and the rewrite are one commit through cat
// (compaction.RunAgeing), never replayed: a table changed meanwhile fails
// it and apply plans again. Files written for a commit that definitely
// failed are removed.
func Age(ctx context.Context, tbl *table.Table, cat table.CatalogIO, props map[string]string, p *diff.PartitionAgeing) (*table.Table, store.Result, error) {
	res, stop, err := kind.RewriteStart(tbl)
	if stop || err != nil {
		return tbl, res, err
	}
	after := time.Duration(p.AfterMs) * time.Millisecond
	rule, err := ageingRule(p.From, p.To, after, p.SetsDefault)
	if err != nil {
		return tbl, res, fmt.Errorf("%w: %w", store.ErrRefused, err)
	}
	res.FilesBefore, res.BytesBefore = kind.SummaryTotals(ctx, tbl)
	rtbl, rec, err := kind.Recording(ctx, tbl, cat)
	if err != nil {
		return tbl, res, err
	}
	now := time.UnixMilli(p.CutoffMs).Add(after)
	a, run, err := compaction.RunAgeing(ctx, rtbl, rule, now, compaction.Options{
		SnapshotProps: iceberg.Properties{"icewright.action": string(diff.AgePartitions)},
		Catalog:       cat,
	})
	if err != nil {
		return tbl, res, fmt.Errorf("age partitions: %w", kind.FailedCommit(ctx, cat, tbl, rec, props, &res, err))
	}
	if len(a.Groups) == 0 && !a.SetsDefault {
		res.NoOp, res.Note = true, "no partition to age"
		res.FilesAfter, res.BytesAfter = res.FilesBefore, res.BytesBefore
		return tbl, res, nil
	}
	next := run.Table
	res.Committed = true
	res.MetadataLocation = next.MetadataLocation()
	res.Snapshots = run.Snapshots
	res.FilesAfter, res.BytesAfter = kind.SummaryTotals(ctx, next)
	for _, g := range run.Groups {
		res.RowsBefore += g.InputRows
		res.RowsAfter += g.OutputRows
	}
	spec := fmt.Sprintf("spec %d", a.Spec.ID())
	switch {
	case a.NewSpec && a.SetsDefault:
		spec += " (added, made the default)"
	case a.NewSpec:
		spec += " (added, not the default)"
	case a.SetsDefault:
		spec += " (made the default)"
	}
	if len(a.Groups) == 0 {
		res.Note = spec + ": no partition old enough yet"
		return next, res, nil
	}
	res.Note = fmt.Sprintf("%d %s partitions aged into %d %s partitions of %s", sourceCount(a), p.From, len(a.Groups), p.To, spec)
	return next, res, nil
}

func sourceCount(a *compaction.Ageing) int {
	n := 0
	for _, g := range a.Groups {
		n += len(g.Sources)
	}
	return n
}
