package diff

import (
	"fmt"

	"github.com/icewright/icewright/config"
)

// PartitionValue is one field of a partition tuple in the form an engine
// needs to bound its work to that partition (a predicate it can write
// exactly). Providers fill it from the tuple as the manifests hold it.
type PartitionValue struct {
	Field     string // the partition field's name
	Column    string // its source column (top level; a nested one is dotted)
	Transform string // "identity", "year", "month", "day", "hour", "bucket[16]", "truncate[4]", "void"
	Type      string // the source column's Iceberg type: "string", "long", "date", "timestamptz", "decimal(9, 2)"
	Null      bool
	// Value is the transform's result as Iceberg's human string form:
	// "eu", "2026-11-01", "2026-11", "2026-11-01-10".
	Value string
	// Ordinal is the result of a time transform (years, months, days or
	// hours since 1970-01-01) and, for identity, a date's days or a
	// timestamp's microseconds since the epoch: the exact value, from which
	// an engine writes its literals.
	Ordinal int64
}

// Delegation is the work one partition of a compaction is, as an engine
// is asked to plan it.
type Delegation struct {
	// Catalog is the icewright catalog's label; the engine maps it to its
	// own name for that catalog (an engine block's catalog).
	Catalog   string
	Namespace []string
	Table     string
	Strategy  string // binpack | sort | zorder
	// SortOrder is the order a sort rewrite uses (after replace_sort_order).
	SortOrder     []SortField
	ZOrderColumns []string
	// Schema is the table's top-level columns (TableState.Schema), so an
	// engine can refuse a key column whose type it cannot order by; nil
	// when not observed.
	Schema []Column
	// Partition is the partition's tuple; nil for an unpartitioned spec.
	Partition []PartitionValue
	// SpecID is the partition's spec, DefaultSpecID the table's current
	// one, and OtherSpecs whether live data files of other specs exist.
	SpecID, DefaultSpecID int
	OtherSpecs            bool
	// DeleteFiles counts the partition's live delete files.
	DeleteFiles int64
	Selection   CompactionSelection
}

// Engine is a compaction engine other than icewright's own, as the plan sees
// it: Plan is pure (no I/O), so that PlanTable stays a function of its
// inputs. It returns the exact statement the engine will run for one
// partition, or why the engine cannot be bounded to exactly that
// partition (a refusal in the plan).
type Engine interface {
	Name() string
	Plan(Delegation) (EnginePlan, string)
}

// EnginePlan is an engine's plan of one delegated partition: the
// statement, and for apply's check the engine's name of the table and its
// predicate for the partition's rows (both in the engine's language).
type EnginePlan struct {
	Statement string
	Target    string
	Filter    string // "" when the partition is the whole table
}

// Statuses of a PartitionOutcome, apply's words for an action's.
const (
	PartitionDone    = "done"
	PartitionSkipped = "skipped"
	PartitionFailed  = "failed"
)

// PartitionOutcome is what became of one partition an action delegated to
// an engine (apply -json: tables[].actions[].partitions[]): a report type, like
// Doctor, so the views render it without providers.
type PartitionOutcome struct {
	// Partition is the partition as the plan names it ("" for an
	// unpartitioned table).
	Partition string `json:"partition"`
	Engine    string `json:"engine"`
	// Status is done, skipped (nothing left to rewrite, or not run after
	// an earlier partition failed) or failed.
	Status string `json:"status"`
	// Snapshot is the engine's commit, checked (done) or not (a failed
	// check names it in Error); 0 when it committed nothing.
	Snapshot int64 `json:"snapshot_id,omitempty"`
	// Rows are the partition's rows, the same before and after (done).
	Rows int64 `json:"rows,omitempty"`
	// Detail is the engine's own account of the call (done) or why it was
	// skipped.
	Detail string `json:"detail,omitempty"`
	Error  string `json:"error,omitempty"`
}

// EngineCall is one partition of a compaction delegated to an engine: what
// the plan shows and apply runs.
type EngineCall struct {
	Engine     string `json:"engine"`
	SpecID     int    `json:"spec_id"`
	Partition  string `json:"partition"`
	InputFiles int    `json:"input_files"`
	InputBytes int64  `json:"input_bytes"`
	// Statement is the engine's statement, exactly as apply sends it.
	Statement string `json:"statement"`
	// Target and Filter are the engine's name of the table and its
	// predicate for the partition's rows ("" for a whole table), with
	// which apply fingerprints the rows before and after.
	Target string `json:"target"`
	Filter string `json:"filter,omitempty"`
	// Bound says in words why the partition is delegated and what bounds
	// the engine's work.
	Bound string `json:"bound"`
}

// delegates reports whether a partition whose planned input is bytes goes
// to the policy's engine.
func delegates(pol *config.Effective, bytes int64) bool {
	c := pol.Compaction
	return c.Engine.Value != "" && c.Engine.Value != config.LocalEngine && bytes > c.EngineAbove.Value
}

// delegate asks st.Engine to plan one partition's groups. It returns the
// call, or a refusal.
func delegate(pol *config.Effective, st *TableState, act *CompactAction, p PartitionStats, groups []CompactGroup, sortOrder []SortField) (EngineCall, *Refusal) {
	c := pol.Compaction
	call := EngineCall{Engine: c.Engine.Value, SpecID: p.SpecID, Partition: p.Partition}
	for _, g := range groups {
		call.InputFiles += g.InputFiles
		call.InputBytes += g.InputBytes
	}
	where := p.Partition
	if where == "" {
		where = "(unpartitioned)"
	}
	if st.Engine == nil || st.Engine.Name() != c.Engine.Value {
		return call, &Refusal{Action: string(Compact), Reason: fmt.Sprintf("partition %s (%s, %s) goes to engine %q (compaction.engine at %s), which this icewright session cannot reach: it is not compacted",
			where, config.CountOf(call.InputFiles, "file", "files"), config.FormatSize(call.InputBytes), c.Engine.Value, fileLine(c.Engine.Origin))}
	}
	other := false
	for _, q := range st.Partitions {
		if q.SpecID != p.SpecID && q.DataFiles > 0 {
			other = true
			break
		}
	}
	ep, refusal := st.Engine.Plan(Delegation{
		Catalog: pol.Catalog, Namespace: pol.Namespace, Table: pol.Table,
		Strategy: act.Strategy, SortOrder: sortOrder, ZOrderColumns: act.ZOrderColumns, Schema: st.Schema,
		Partition: p.Values, SpecID: p.SpecID, DefaultSpecID: st.DefaultSpecID, OtherSpecs: other,
		DeleteFiles: p.DeleteFiles, Selection: SelectionFor(pol),
	})
	if refusal != "" {
		return call, &Refusal{Action: string(Compact), Reason: fmt.Sprintf("partition %s (%s, %s) goes to engine %q, which cannot be bounded to exactly this partition: %s; it is not compacted (compact it with engine = \"local\", or raise engine_above)",
			where, config.CountOf(call.InputFiles, "file", "files"), config.FormatSize(call.InputBytes), c.Engine.Value, refusal)}
	}
	call.Statement, call.Target, call.Filter = ep.Statement, ep.Target, ep.Filter
	call.Bound = fmt.Sprintf("above compaction.engine_above (%s): %s rewrites only this partition's files (where) that the policy's size rules select (options), in one commit",
		config.FormatSize(c.EngineAbove.Value), c.Engine.Value)
	return call, nil
}

// RowFingerprint is a count and an order-free digest of a set of rows, as
// an engine computes them: a rewrite keeps both.
type RowFingerprint struct {
	Rows   int64
	Digest string
}
