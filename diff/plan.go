package diff

import (
	"time"

	"github.com/icewright/icewright/config"
)

// FormatVersion of the plan document (JSON, saved plan). Additive changes
// keep 1.x; a breaking change bumps the major.
//
// 2.0: a compaction group names its files (CompactGroup.Files), which apply
// rewrites; a 1.x plan has none, and is refused.
// 2.1 (additive; a 2.0 plan still applies): each action's estimate
// (Action.Estimate), each table's prices (TablePlan.Pricing), the plan's
// totals (Summary.Estimate, Cost, PricedTables, UnpricedTables) and why compaction's
// skipped groups wait (CompactAction.SkippedReason); docs/plan-format.md.
// 2.2 (additive; 2.0 and 2.1 plans still apply): what reading each table's
// references costs (TablePlan.References) and the run's read of other
// tables' references (Summary.OtherTablesReferences, OtherTablesRead).
const FormatVersion = "2.2"

// Plan is the whole plan: the JSON document of `plan -json`, `show -json`
// and the content of a saved plan file. The human view is rendered from it.
type Plan struct {
	FormatVersion    string       `json:"format_version"`
	IcewrightVersion string       `json:"icewright_version"`
	CreatedAt        time.Time    `json:"created_at"`
	ConfigDigest     string       `json:"config_digest"`
	Targets          []string     `json:"targets,omitempty"`
	Tables           []TablePlan  `json:"tables"`
	Errors           []TableError `json:"errors"`
	// Warnings are the configuration's lint findings (validate's warnings,
	// docs/design.md §3.6), each with its file:line; a table's own warnings, which
	// need the observed table, are in tables[].warnings.
	Warnings []Warning `json:"warnings"`
	// Refusals lists every table's refusals with its address, derived by
	// Summarize like Summary, so a bot reading the document need not walk
	// the tables to find what the safety rules stopped.
	Refusals []AddressedRefusal `json:"refusals"`
	Summary  Summary            `json:"summary"`
	// Checksum is "sha256:..." over the plan's safety-relevant content
	// (format, config digest, creation time, targets, tables); apply refuses
	// a saved plan whose content does not match it (hand-edited). Set by
	// apply.Plan, checked by planfile.Read.
	Checksum string `json:"checksum,omitempty"`
}

// TablePlan is one managed table: what was observed and what must happen.
type TablePlan struct {
	Address string `json:"address"`
	Policy  string `json:"policy,omitempty"`
	// PolicyDigest is config.Effective.PolicyDigest of the policy the plan
	// was made with: a saved plan is stale for this table when the
	// configuration now gives it another (docs/design.md §5.3, format 1.1).
	PolicyDigest string    `json:"policy_digest,omitempty"`
	Observed     Observed  `json:"observed"`
	Actions      []Action  `json:"actions"` // docs/design.md §5.1 order; empty = in policy
	Refusals     []Refusal `json:"refusals,omitempty"`
	Warnings     []Warning `json:"warnings,omitempty"`
	// Estimate is the sum of the table's actions' estimates (Estimated),
	// set by Summarize; absent when none has one (format 2.1, additive).
	Estimate *Usage `json:"estimate,omitempty"`
	// Pricing are the table's prices (its pricing block over its storage's
	// defaults, config.PricingPolicy.For), which Price turns its actions'
	// estimates into money with; nil when it has none (local storage): its
	// views show quantities only (format 2.1, additive).
	Pricing *config.Prices `json:"pricing,omitempty"`
	// References is what reading the table's references costs the run's
	// first deletion of another table (its metadata file, every snapshot's
	// manifest list, every distinct manifest), as observed; the summary
	// counts it once per run (OtherTablesReferences; format 2.2, additive).
	References *ReferenceReads `json:"references,omitempty"`
	// NextDue and DueRule are NextDue's answer for the table as observed,
	// set when the planner is asked (reconcile); not part of the document.
	NextDue time.Time `json:"-"`
	DueRule string    `json:"-"`
}

// Observed identifies the table state the plan was made against; a saved
// plan is checked against it before apply.
type Observed struct {
	TableUUID         string `json:"table_uuid"`
	MetadataLocation  string `json:"metadata_location"`
	CurrentSnapshotID *int64 `json:"current_snapshot_id"`
	DataFiles         int64  `json:"data_files"`
	DataBytes         int64  `json:"data_bytes"`
	Snapshots         int    `json:"snapshots"`
	// OldestSnapshotMs is the commit time of the table's oldest snapshot
	// (0: none), for the reconciler's oldest-snapshot-age metric (format
	// 1.x, additive).
	OldestSnapshotMs int64 `json:"oldest_snapshot_timestamp_ms,omitempty"`
}

// Refusal is an action that the safety rules stopped (a destructive one, or
// a compaction that would lose row lineage), or that icewright cannot do on
// the table (a sort order naming a column it cannot sort by). It makes the
// table an error (exit 1) because someone must look; the table's other
// actions still run.
type Refusal struct {
	Action string `json:"action"`
	Reason string `json:"reason"`
}

// AddressedRefusal is a Refusal with the table it belongs to.
type AddressedRefusal struct {
	Address string `json:"address"`
	Refusal
}

// Warning is a lint finding that needs the observed table (docs/design.md §3.6).
type Warning struct {
	// Code is the stable lint code (config.Lints: "IW107"), which
	// ignore_warnings names; Name says what it is about.
	Code    string `json:"code"`
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
	Origin  string `json:"origin,omitempty"` // file:line
	// Detail is the longer explanation of a configuration warning.
	Detail string `json:"detail,omitempty"`
}

// Codes of the plan-level warnings found while listing the catalogs, when
// something the configuration or the command line names matches no table
// (docs/plan-format.md). The configuration's lint warnings have their own.
const (
	WarnCatalogEmpty    = config.LintCatalogEmpty    // a catalog lists no table at all
	WarnSelectorNoMatch = config.LintSelectorNoMatch // a tables selector matches no table
	WarnTargetNoMatch   = config.LintTargetNoMatch   // a -target matches no managed table
	// WarnCatalogNameShared: a SQL catalog's database holds tables under
	// another catalog_name too.
	WarnCatalogNameShared = config.LintCatalogNameShare
)

// ListingWarning reports whether code is one of the warnings above, which
// only a plan carries (a configuration's lint warnings are printed when it
// is loaded).
func ListingWarning(code string) bool {
	switch code {
	case WarnCatalogEmpty, WarnSelectorNoMatch, WarnTargetNoMatch, WarnCatalogNameShared:
		return true
	}
	return false
}

// NewWarning is a warning with its code's name filled in.
func NewWarning(code, message, origin string) Warning {
	l, _ := config.LookupLint(code)
	return Warning{Code: code, Name: l.Name, Message: message, Origin: origin}
}

type TableError struct {
	Address string `json:"address"`
	Message string `json:"message"`
}

type Summary struct {
	Tables             int `json:"tables"`
	TablesChanged      int `json:"tables_changed"`
	TablesInPolicy     int `json:"tables_in_policy"`
	Actions            int `json:"actions"`
	DestructiveActions int `json:"destructive_actions"`
	Errors             int `json:"errors"`
	// Estimate is the sum of every action's estimate (Estimated; zero, and
	// left out, when none has one), and EstimatedActions how many actions
	// have one: fewer than Actions when some have none. Cost is its money
	// summed over the PricedTables (the tables with an estimate and
	// prices), and UnpricedTables counts those with an estimate and no
	// prices, whose quantities Estimate has and Cost lacks (format 2.1). A
	// value, not a pointer: a saved plan's summary is compared with the one
	// its tables give.
	Estimate         Usage `json:"estimate,omitzero"`
	EstimatedActions int   `json:"estimated_actions,omitzero"`
	Cost             Money `json:"cost,omitzero"`
	PricedTables     int   `json:"priced_tables,omitempty"`
	UnpricedTables   int   `json:"unpriced_tables,omitempty"`
	// OtherTablesReferences is the run's read of the other tables'
	// references (OtherTablesReferences): a cost of the run, not of one
	// action, counted once and included in Estimate (and in Cost, priced
	// at each table's prices, OtherTablesCost); OtherTablesRead is how
	// many tables it reads (format 2.2, additive).
	OtherTablesReferences Usage `json:"other_tables_references,omitzero"`
	OtherTablesCost       Money `json:"other_tables_cost,omitzero"`
	OtherTablesRead       int   `json:"other_tables_read,omitempty"`
}

type PropertiesChange struct {
	Set    map[string]string `json:"set"`
	Before map[string]string `json:"before"` // absent key = was not set
	Remove []string          `json:"remove,omitempty"`
	// Sensitive lists the keys whose Set and Before values are
	// config.SecretDigest digests, not values: secrets never enter a plan.
	Sensitive []string `json:"sensitive,omitempty"`
}

type SortOrderChange struct {
	Before []string    `json:"before"`
	After  []string    `json:"after"`
	Fields []SortField `json:"fields"` // the order to install
}

type CompactGroup struct {
	SpecID               int    `json:"spec_id"`
	Partition            string `json:"partition"`
	InputFiles           int    `json:"input_files"`
	InputBytes           int64  `json:"input_bytes"`
	EstimatedOutputFiles int    `json:"estimated_output_files"`
	// Engine names the engine that rewrites the group ("" for icewright'
	// own): its partition is one of the action's EngineCalls (format 1.x,
	// additive).
	Engine string `json:"engine,omitempty"`
	// StaleSortFiles counts the inputs taken because they record another
	// sort order than the rewrite writes, whatever their size
	// (CompactionSelection.Strategy; format 1.x, additive).
	StaleSortFiles int `json:"stale_sort_files,omitempty"`
	// Files are the group's data files as their manifests name them
	// (format 2.0): apply checks them against the table as it is then (each
	// still live, in this spec and partition, of InputBytes in all) and
	// rewrites exactly these, or skips the group and says why.
	Files []string `json:"files"`
}

type CompactAction struct {
	Strategy             string         `json:"strategy"`
	InputFiles           int            `json:"input_files"`
	InputBytes           int64          `json:"input_bytes"`
	Partitions           int            `json:"partitions"`
	EstimatedOutputFiles int            `json:"estimated_output_files"`
	TargetFileSize       int64          `json:"target_file_size"`
	Groups               []CompactGroup `json:"groups"`
	// SortOrder is the order a sort rewrite uses (canonical strings).
	SortOrder []string `json:"sort_order,omitempty"`
	// ZOrderColumns are the columns a zorder rewrite interleaves.
	ZOrderColumns []string `json:"zorder_columns,omitempty"`
	// Commits is how many snapshots the rewrite adds on main: one, or one
	// per group with partial_progress.
	Commits int `json:"commits"`
	// SkippedGroups and SkippedBytes are groups left for a later run by
	// compaction.max_bytes_per_run, max_cost or max_cpu_hours, and
	// SkippedReason says which and what the run keeps (format 2.1): the
	// groups with the largest saving per byte rewritten go first.
	SkippedGroups int    `json:"skipped_groups,omitempty"`
	SkippedBytes  int64  `json:"skipped_bytes,omitempty"`
	SkippedReason string `json:"skipped_reason,omitempty"`
	// Where is compaction.where as written when it restricted the
	// candidates to the partitions that may match it (format 1.x, additive).
	Where string `json:"where,omitempty"`
	// AssignRowIDs: some of the groups' files have no first_row_id (a
	// table upgraded to v3 with no commit since), and before rewriting them
	// the executor commits a rewrite of the table's manifests, whose v3
	// manifest list assigns their ids; Commits counts that commit too
	// (format 1.x, additive).
	AssignRowIDs bool `json:"assign_row_ids,omitempty"`
	// EngineCalls are the partitions delegated to compaction.engine, one
	// statement each (format 1.x, additive).
	EngineCalls []EngineCall `json:"engine_calls,omitempty"`
}

type ManifestsAction struct {
	ManifestsBefore         int   `json:"manifests_before"`
	EstimatedManifestsAfter int   `json:"estimated_manifests_after"`
	TargetSize              int64 `json:"target_size"`
}

type ExpireAction struct {
	SnapshotIDs  []int64 `json:"snapshot_ids"`
	MaxAge       string  `json:"max_age"` // as written, "2d"
	MaxAgeMs     int64   `json:"max_age_ms"`
	MinSnapshots int     `json:"min_snapshots"`
	// OldestTimestampMs is when the oldest listed snapshot was committed.
	// A timestamp, not an age, so that two plans of the same unchanged table
	// are the same document whatever second they ran (views derive the age
	// from the plan's created_at).
	OldestTimestampMs int64 `json:"oldest_snapshot_timestamp_ms"`
	// Kept counts existing snapshots older than max_age that stay anyway
	// (min_snapshots, ref heads, branch retention).
	Kept int `json:"kept"`
	// ProtectedByRef counts, per ref ("tag \"q3-close\""), old snapshots
	// kept only because that ref reaches them.
	ProtectedByRef map[string]int `json:"protected_by_ref,omitempty"`
	// RefsToRemove are refs other than main older than max_ref_age.
	RefsToRemove []string `json:"refs_to_remove,omitempty"`
	// SnapshotsAddedByPlan: compact/rewrite_manifests commits counted in.
	SnapshotsAddedByPlan int   `json:"snapshots_added_by_plan"`
	FilesToDelete        int64 `json:"files_to_delete"`
	BytesToDelete        int64 `json:"bytes_to_delete"`
	// EscapedFileURIs counts the files of FilesToDelete named by file: URIs
	// whose path changes when decoded (LiteralKey): each is deleted under
	// its literal name only while no file has its decoded name, and is
	// otherwise left and reported (docs/design.md §5.5 rule 8).
	EscapedFileURIs int64 `json:"escaped_file_uris,omitempty"`
}

type OrphansAction struct {
	Count           int      `json:"count"`
	Bytes           int64    `json:"bytes"`
	Paths           []string `json:"paths"`
	OlderThan       string   `json:"older_than"`
	OlderThanMs     int64    `json:"older_than_ms"`
	KeptByAgeGuard  int      `json:"kept_by_age_guard"`
	KeptBytes       int64    `json:"kept_bytes"`
	Excluded        int64    `json:"excluded"`
	NonIceberg      int      `json:"non_iceberg"`
	NonIcebergPaths []string `json:"non_iceberg_paths,omitempty"`
	// IncludeNonIceberg: non-Iceberg files are deleted too
	// (orphan_files.include_non_iceberg_files); otherwise only reported.
	IncludeNonIceberg bool    `json:"include_non_iceberg,omitempty"`
	Ratio             float64 `json:"ratio"`
	MaxRatio          float64 `json:"max_orphan_ratio"`
	Quarantine        string  `json:"quarantine,omitempty"`
	// PurgeRuns are the quarantine runs due for purging (additive in 1.x):
	// apply deletes the files of these runs and of no other.
	PurgeRuns []PurgeRun `json:"purge_runs,omitempty"`
	// Staging is what the sweep did not enter (additive in 1.x): other
	// engines' staging directories, kept whatever their age.
	Staging *StagingSkip `json:"staging,omitempty"`
	// Foreign is what other tables reference under the sweep (additive in
	// 1.x): kept, whatever its age.
	Foreign *ForeignKept `json:"foreign,omitempty"`
}
