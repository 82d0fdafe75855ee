package config

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Setting is one policy value and where it was set. Set is false when no
// block in the inheritance chain set it and Value holds the default.
type Setting[T any] struct {
	Value  T
	Set    bool
	Origin hcl.Range // the attribute that set it (zero when defaulted)
	// Block names the block that set it, for explain: `policy "base"`,
	// `table "lake.a.b"`.
	Block string
	// Sensitive: the value is a secret (a secret-named property, or one
	// holding a sensitive variable's value); outputs show Masked and the
	// saved plan only its SecretDigest.
	Sensitive bool
}

// Config is the whole configuration of one directory: every *.icewright.hcl
// file, merged.
type Config struct {
	Dir       string               // absolute configuration directory (path.root)
	Files     map[string]*hcl.File // by file name, for hcl's diagnostic writer
	Settings  Settings
	Variables map[string]*Variable
	Catalogs  []*Catalog // in declaration order
	Engines   []*Engine  // in declaration order
	Policies  map[string]*Policy
	Tables    []*TableBlock  // `table "addr"` blocks
	Selectors []*TablesBlock // `tables "pattern"` blocks
	Digest    string         // "sha256:..." over the file contents and resolved variable values
	// UnsetEnv names the variables env() read unset, sorted, when
	// LoadOptions.UnsetEnvUnknown made them unknown (validate).
	UnsetEnv []string
	// Secrets are the secret values the configuration holds, for masking
	// every output (filled even when Load reports errors).
	Secrets Secrets

	// tableIndex finds a table block by address (Load fills it; a Config
	// built by hand falls back to scanning Tables).
	tableIndex map[string]*TableBlock
}

// Settings is the `icewright` block.
type Settings struct {
	RequiredVersion string
	Parallelism     int // 0 when unset
	// IgnoreWarnings are lint codes (lint.go) never reported.
	IgnoreWarnings []string
	DeclRange      hcl.Range
}

type Variable struct {
	Name      string
	Type      string // "string", "number", "bool", "list(string)", "map(string)", "any"
	Value     any    // resolved Go value (string, float64/int64, bool, []string, map[string]string)
	Sensitive bool
	// Description is the variable's description attribute (added by config).
	Description string
	DeclRange   hcl.Range
}

// Catalog is a `catalog "name"` block. URI and Warehouse are already resolved
// against the configuration directory (sqlite:PATH, relative warehouse paths).
type Catalog struct {
	Name       string
	Type       string // sql | rest | glue | hive | hadoop
	URI        string
	Warehouse  string
	Properties map[string]string
	DeclRange  hcl.Range
}

// LocalEngine is the engine name of icewright's in-process rewrite, the
// default of compaction.engine; it needs no block.
const LocalEngine = "local"

// Engine is an `engine "NAME"` block: a compute engine compaction groups
// may be delegated to (docs/engines.md).
type Engine struct {
	Name string // the block label: "spark"
	// Remote is the endpoint as written (for spark a Spark Connect URL,
	// sc://host:port/;token=...); its engine package parses it
	// (providers/engine). A password or a parameter named like a secret in
	// it (token=...) is a secret: Load adds it to Secrets.
	Remote string
	// RemoteRange is where Remote's value is written, for diagnostics; it
	// is unset (no Filename) when the remote has no value to check (no
	// attribute, or one whose evaluation failed with its own error).
	RemoteRange hcl.Range
	// Catalog is the engine's name for the icewright catalog a table is in;
	// "" means the icewright catalog's label.
	Catalog   string
	DeclRange hcl.Range
}

// Engine finds a declared engine by name (nil when none).
func (c *Config) Engine(name string) *Engine {
	for _, e := range c.Engines {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// SortField is one term of a sort order, e.g. "bucket(16, user_id) desc nulls last".
type SortField struct {
	Transform  string // "identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void"
	Column     string
	Descending bool
	NullsFirst bool // Iceberg default: true for asc, false for desc
	Range      hcl.Range
}

// PolicyBody holds every attribute a policy, table or tables block may set.
// In a declared block only the attributes written there are Set; in an
// Effective policy the inheritance chain has been merged and defaults filled.
type PolicyBody struct {
	TargetFileSize   Setting[int64]
	SortOrder        Setting[[]SortField]
	Properties       map[string]Setting[string] // per key, so a child overrides single keys
	RemoveProperties Setting[[]string]

	Compaction        CompactionPolicy
	SnapshotRetention RetentionPolicy
	OrphanFiles       OrphanPolicy
	Manifests         ManifestPolicy
	DanglingDeletes   DanglingDeletesPolicy
	PartitionAgeing   AgeingPolicy
	Pricing           PricingPolicy
}

type CompactionPolicy struct {
	Declared            bool // a compaction block exists in the chain
	DeclRange           hcl.Range
	Strategy            Setting[string] // binpack | sort | zorder
	ZOrderColumns       Setting[[]string]
	MinInputFiles       Setting[int]
	MinFileSize         Setting[int64] // default 75% of target
	MaxFileSize         Setting[int64] // default 180% of target
	DeleteFileThreshold Setting[int]
	PartialProgress     Setting[bool]
	MaxConcurrentGroups Setting[int]   // 0: one per CPU
	Memory              Setting[int64] // 0: the engine's default (per concurrent group)
	MaxBytesPerRun      Setting[int64]
	// MaxCost (US dollars, at the table's prices) and MaxCPUHours bound a
	// run's estimate as MaxBytesPerRun bounds its bytes (0: no limit).
	MaxCost     Setting[float64]
	MaxCPUHours Setting[float64]
	Where       Setting[string]
	// Engine names the engine block that rewrites the groups above
	// EngineAbove; "local" (the default) is icewright's own rewrite.
	Engine      Setting[string]
	EngineAbove Setting[int64]
}

type RetentionPolicy struct {
	Declared     bool
	DeclRange    hcl.Range
	MaxAge       Setting[time.Duration]
	MinSnapshots Setting[int]
	MaxRefAge    Setting[time.Duration] // zero: refs other than main never expire by age
}

type OrphanPolicy struct {
	Declared               bool
	DeclRange              hcl.Range
	OlderThan              Setting[time.Duration] // >= 24h
	MaxOrphanRatio         Setting[float64]
	MinFilesForRatio       Setting[int] // below this many files the ratio is not enforced
	Exclude                Setting[[]string]
	IncludeNonIcebergFiles Setting[bool]
	Quarantine             Setting[time.Duration] // zero: delete
	EqualSchemes           Setting[map[string]string]
	EqualAuthorities       Setting[map[string]string]
	PrefixMismatch         Setting[string] // "error" (default) | "ignore" | "delete"
	// AllowStorageRoots names the bucket, container or file-system roots
	// that a sweep may list whole (refused otherwise).
	AllowStorageRoots Setting[[]string]
	// Every is how often reconcile lists a table's storage again when the
	// table did not change (orphans appear without a commit).
	Every Setting[time.Duration]
}

type ManifestPolicy struct {
	Declared   bool
	DeclRange  hcl.Range
	MaxCount   Setting[int]
	TargetSize Setting[int64]
}

// DanglingDeletesPolicy is the `dangling_deletes` block: declared, it turns
// remove_dangling_deletes on. It has no attributes: which delete files are
// dangling is the scan's rule, not a setting.
type DanglingDeletesPolicy struct {
	Declared  bool
	DeclRange hcl.Range
}

// AgeingPolicy is the `partition_ageing` block: declared, it turns
// age_partitions on. Partitions of the table's default spec whose From
// window lies in a To window that ended at least After ago are rewritten
// into a spec where that field is To (docs/design.md §5).
type AgeingPolicy struct {
	Declared  bool
	DeclRange hcl.Range
	After     Setting[time.Duration]
	From      Setting[string] // hour | day | month
	To        Setting[string] // day | month | year
	// Default also makes the coarser spec the table's default spec.
	Default Setting[bool]
}

// AgeingGrains are the time transforms partition ageing moves between,
// finest first.
var AgeingGrains = []string{"hour", "day", "month", "year"}

// Policy is a declared `policy "name"` block.
type Policy struct {
	Name       string
	Extends    string // "" when none
	ExtendsRng hcl.Range
	Body       PolicyBody
	DeclRange  hcl.Range
}

// TableBlock is `table "catalog.ns.table"`.
type TableBlock struct {
	Address   string
	Policy    string // referenced policy name, "" when none
	PolicyRng hcl.Range
	// body holds the inline overrides as written: only what the block sets
	// (compact.go), since a configuration can have hundreds of thousands
	// of table blocks. Body returns them as a PolicyBody.
	body      compactBody
	DeclRange hcl.Range
}

// Body is the block's inline overrides: only the attributes and nested
// blocks written in it are set. Each call returns a fresh PolicyBody.
func (t *TableBlock) Body() PolicyBody { return t.body.expand() }

// BodyInto sets *pb to Body(), in a body the caller reuses across blocks (a
// PolicyBody is 4.6 KB, and there can be 250,000 table blocks).
func (t *TableBlock) BodyInto(pb *PolicyBody) { t.body.expandInto(pb) }

// TablesBlock is `tables "pattern"`, a selector with * and ** globs.
type TablesBlock struct {
	Pattern   string
	Exclude   []string
	Policy    string
	PolicyRng hcl.Range
	Body      PolicyBody
	DeclRange hcl.Range
}

// Effective is the merged policy one table gets.
type Effective struct {
	Address    string // catalog.ns...table
	Catalog    string
	Namespace  []string
	Table      string
	PolicyName string // "" when the block sets everything inline
	MatchedBy  string // `table "lake.a.b"` or `tables "lake.a.*"`
	MatchRange hcl.Range
	PolicyBody
	// DerivedProperties are the table properties this policy owns (docs/design.md §3.4):
	// target_file_size, retention and `properties`, with the origin of each.
	DerivedProperties map[string]Setting[string]
}
