package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// valueKind says how an attribute's HCL value becomes a Go value.
type valueKind int

const (
	kindSize     valueKind = iota // "512MiB" or a whole number of bytes → int64
	kindDuration                  // "5d" → time.Duration
	kindInt                       // whole number → int
	kindFloat                     // number → float64
	kindBool                      // bool
	kindString                    // string
	kindList                      // list of strings
	kindMap                       // map of strings
	kindSort                      // list of sort terms → []SortField
)

// fieldDesc describes one policy attribute. Decoding, merging, defaults and
// explain all walk this one table, so adding an attribute is one line here
// plus the field in types.go.
type fieldDesc struct {
	block string // nested block name, "" for a top-level attribute
	name  string
	kind  valueKind
	get   func(*PolicyBody) any // pointer to the Setting
	// check validates a decoded value: an error, or a lint warning.
	check func(v any) *fieldProblem
	// doc is what docs/configuration.md says the attribute does; the type,
	// default and Iceberg property there come from kind, fillDefaults and
	// ownedProperties.
	doc string
}

type fieldProblem struct {
	severity hcl.DiagnosticSeverity
	summary  string
	detail   string
	code     string // a warning's lint code (lint.go)
}

func (f fieldDesc) path() string {
	if f.block == "" {
		return f.name
	}
	return f.block + "." + f.name
}

// Iceberg's recommended range for data files: smaller ones make too many
// files, larger ones make too little parallelism (docs/design.md §3.6).
const (
	minLintTargetSize = 64 << 20
	maxLintTargetSize = 2 << 30
	trinoRetention    = 7 * 24 * time.Hour
	minOlderThan      = 24 * time.Hour
)

// policyFields is the table of policy attributes, built once: decoding
// walks it for every block, and a configuration can have hundreds of
// thousands of table blocks. Callers must not modify it.
func policyFields() []fieldDesc { return policyFieldTable() }

var policyFieldTable = sync.OnceValue(buildPolicyFields)

func buildPolicyFields() []fieldDesc {
	return []fieldDesc{
		{"", "target_file_size", kindSize, func(p *PolicyBody) any { return &p.TargetFileSize }, checkTargetSize,
			"The size compaction writes data files at, and the size Iceberg writers aim for. Also sets the table property."},
		{"", "sort_order", kindSort, func(p *PolicyBody) any { return &p.SortOrder }, nil,
			"The table's sort order, as terms such as `\"event_ts DESC NULLS LAST\"`, `\"bucket(16, id)\"` or `\"day(ts)\"`; icewright replaces the table's order when it differs, and compaction with `strategy = \"sort\"` sorts by it."},
		{"", "remove_properties", kindList, func(p *PolicyBody) any { return &p.RemoveProperties }, nil,
			"Table properties to remove. icewright never removes a property only because no block names it; it removes exactly these keys."},

		{"compaction", "strategy", kindString, func(p *PolicyBody) any { return &p.Compaction.Strategy }, checkEnum("compaction strategy", "binpack", "sort", "zorder"),
			"How compaction rewrites files: `\"binpack\"` (combine small files), `\"sort\"` (rewrite in the sort order) or `\"zorder\"` (interleave `zorder_columns`)."},
		{"compaction", "zorder_columns", kindList, func(p *PolicyBody) any { return &p.Compaction.ZOrderColumns }, nil,
			"The columns a `\"zorder\"` compaction interleaves; at least two."},
		{"compaction", "min_input_files", kindInt, func(p *PolicyBody) any { return &p.Compaction.MinInputFiles }, checkMinInt(1),
			"A partition is compacted only when it has at least this many files to rewrite."},
		{"compaction", "min_file_size", kindSize, func(p *PolicyBody) any { return &p.Compaction.MinFileSize }, nil,
			"Data files smaller than this are rewritten."},
		{"compaction", "max_file_size", kindSize, func(p *PolicyBody) any { return &p.Compaction.MaxFileSize }, checkPositiveSize,
			"Data files larger than this are rewritten (split); must be above `target_file_size`."},
		{"compaction", "delete_file_threshold", kindInt, func(p *PolicyBody) any { return &p.Compaction.DeleteFileThreshold }, checkMinInt(1),
			"A data file with at least this many delete files (position, equality or deletion vectors) applying to it is rewritten, whatever its size."},
		{"compaction", "partial_progress", kindBool, func(p *PolicyBody) any { return &p.Compaction.PartialProgress }, nil,
			"Commit each file group as its own snapshot, so a failure keeps the groups already done; otherwise the whole compaction is one commit."},
		{"compaction", "max_concurrent_groups", kindInt, func(p *PolicyBody) any { return &p.Compaction.MaxConcurrentGroups }, checkMinInt(0),
			"File groups (partitions) rewritten at the same time at most, as `memory` allows (`0`: one per CPU)."},
		{"compaction", "memory", kindSize, func(p *PolicyBody) any { return &p.Compaction.Memory }, nil,
			"The memory the groups rewritten at the same time share: a group starts when its estimated need fits beside the running ones' (or alone), and a sort spills past it (`0`: twice `target_file_size` plus 16 MiB per concurrent group)."},
		{"compaction", "max_bytes_per_run", kindSize, func(p *PolicyBody) any { return &p.Compaction.MaxBytesPerRun }, nil,
			"Stop selecting file groups once this many bytes are planned in one run (`0`: no limit); the rest waits for the next run. With any budget set, the groups with the largest saving per byte rewritten go first (docs/cost.md)."},
		{"compaction", "max_cost", kindFloat, func(p *PolicyBody) any { return &p.Compaction.MaxCost }, checkNonNegative,
			"The most a run's estimate may cost, in US dollars at the table's prices (`pricing`; docs/cost.md): groups are taken, the largest saving per byte rewritten first, while the run stays within it; the rest waits for the next run, as the plan says (`0`: no limit). A table without prices (local storage) cannot honour it: its compaction is refused in the plan."},
		{"compaction", "max_cpu_hours", kindFloat, func(p *PolicyBody) any { return &p.Compaction.MaxCPUHours }, checkNonNegative,
			"The most CPU-hours a run's estimate may take (docs/cost.md), honoured as `max_cost` is (`0`: no limit)."},
		{"compaction", "where", kindString, func(p *PolicyBody) any { return &p.Compaction.Where }, nil,
			"A SQL filter on the table's columns (such as `\"event_ts >= current_date - interval '7' day\"`) limiting compaction to the partitions whose rows can match; one relative to the clock is evaluated again at apply."},
		{"compaction", "engine", kindString, func(p *PolicyBody) any { return &p.Compaction.Engine }, nil,
			"The engine that rewrites the partitions whose planned input is above `engine_above`: `\"local\"` (icewright itself) or the name of an `engine` block such as `\"spark\"` (docs/engines.md). The plan shows each delegated partition's statement."},
		{"compaction", "engine_above", kindSize, func(p *PolicyBody) any { return &p.Compaction.EngineAbove }, nil,
			"With an `engine` other than `\"local\"`: partitions whose planned input bytes are above this go to the engine, the others are rewritten by icewright (`0`: every partition goes to the engine)."},

		{"snapshot_retention", "max_age", kindDuration, func(p *PolicyBody) any { return &p.SnapshotRetention.MaxAge }, checkMaxAge,
			"Snapshots older than this are expired (the current snapshot and those that tags and branches hold are kept)."},
		{"snapshot_retention", "min_snapshots", kindInt, func(p *PolicyBody) any { return &p.SnapshotRetention.MinSnapshots }, checkMinInt(1),
			"The number of most recent snapshots of each branch kept whatever their age."},
		{"snapshot_retention", "max_ref_age", kindDuration, func(p *PolicyBody) any { return &p.SnapshotRetention.MaxRefAge }, checkMaxRefAge,
			"Tags and branches (other than `main`) older than this are removed, and their snapshots expire with them (a destructive step the plan flags by name). Unset: refs live forever; `\"0s\"` is an error."},

		{"orphan_files", "older_than", kindDuration, func(p *PolicyBody) any { return &p.OrphanFiles.OlderThan }, checkOlderThan,
			"Only files at least this old may be removed as orphans: younger ones may belong to a write still in flight. At least `\"24h\"`."},
		{"orphan_files", "max_orphan_ratio", kindFloat, func(p *PolicyBody) any { return &p.OrphanFiles.MaxOrphanRatio }, checkRatio,
			"Refuse to remove anything when more than this share of the table's files looks unreferenced: that means the listing or the references are wrong, not that the table is dirty."},
		{"orphan_files", "min_files_for_ratio", kindInt, func(p *PolicyBody) any { return &p.OrphanFiles.MinFilesForRatio }, checkMinInt(0),
			"`max_orphan_ratio` applies only when the table has at least this many files; below it a few strays make a large ratio."},
		{"orphan_files", "exclude", kindList, func(p *PolicyBody) any { return &p.OrphanFiles.Exclude }, nil,
			"Globs of paths (relative to the table location) never removed and never counted as orphans."},
		{"orphan_files", "include_non_iceberg_files", kindBool, func(p *PolicyBody) any { return &p.OrphanFiles.IncludeNonIcebergFiles }, nil,
			"Also remove files that are not Iceberg data, delete, manifest or metadata files (by default they are reported only)."},
		{"orphan_files", "quarantine", kindDuration, func(p *PolicyBody) any { return &p.OrphanFiles.Quarantine }, nil,
			"Move orphans under `<location>/.icewright-quarantine/<run>/` and purge them this long after, instead of deleting them (`icewright restore` puts them back). `\"0s\"`: delete at once."},
		{"orphan_files", "equal_schemes", kindMap, func(p *PolicyBody) any { return &p.OrphanFiles.EqualSchemes }, nil,
			"URI schemes that name the same storage, mapped to one spelling before listed files are compared with references (`s3a` and `s3n` are always `s3`)."},
		{"orphan_files", "equal_authorities", kindMap, func(p *PolicyBody) any { return &p.OrphanFiles.EqualAuthorities }, nil,
			"Bucket or host names that name the same storage, mapped to one spelling before the comparison."},
		{"orphan_files", "prefix_mismatch", kindString, func(p *PolicyBody) any { return &p.OrphanFiles.PrefixMismatch }, checkEnum("prefix_mismatch", "error", "ignore", "delete"),
			"When a listed file matches a referenced one only after ignoring scheme or authority: `\"error\"` refuses the orphan removal, `\"ignore\"` keeps those files and goes on; `\"delete\"` is accepted but refused like `\"error\"`: icewright does not guess on a reviewer's behalf."},
		{"orphan_files", "allow_storage_roots", kindList, func(p *PolicyBody) any { return &p.OrphanFiles.AllowStorageRoots }, checkStorageRoots,
			"Whole buckets, containers or file systems (`\"s3://bucket\"`, `\"file:///\"`) a table may sit at the root of; without it a sweep that would list a whole storage root is refused."},

		{"orphan_files", "every", kindDuration, func(p *PolicyBody) any { return &p.OrphanFiles.Every }, checkEvery,
			"How often `icewright reconcile` lists the storage of a table that did not change, to find orphans (they appear without a commit: a failed write). A table that changed is swept when it is observed. At least `\"1h\"`."},

		{"manifests", "max_count", kindInt, func(p *PolicyBody) any { return &p.Manifests.MaxCount }, checkMinInt(1),
			"Rewrite the manifests when the current snapshot has more than this many."},
		{"manifests", "target_size", kindSize, func(p *PolicyBody) any { return &p.Manifests.TargetSize }, checkPositiveSize,
			"The size manifests are rewritten to."},

		{"partition_ageing", "after", kindDuration, func(p *PolicyBody) any { return &p.PartitionAgeing.After }, nil,
			"A coarser partition (a month) is aged once its whole window ended at least this long ago: every finer partition (day) in it moves together, so no month is split between the two specs."},
		{"partition_ageing", "from", kindString, func(p *PolicyBody) any { return &p.PartitionAgeing.From }, checkEnum("partition_ageing from", AgeingGrains[:3]...),
			"The time transform of the table's default spec whose partitions are aged: `\"hour\"`, `\"day\"` or `\"month\"`; the spec must have exactly one field of it."},
		{"partition_ageing", "to", kindString, func(p *PolicyBody) any { return &p.PartitionAgeing.To }, checkEnum("partition_ageing to", AgeingGrains[1:]...),
			"The coarser time transform aged partitions are rewritten into: `\"day\"`, `\"month\"` or `\"year\"`, coarser than `from`."},
		{"partition_ageing", "default", kindBool, func(p *PolicyBody) any { return &p.PartitionAgeing.Default }, nil,
			"Also make the coarser spec the table's default spec, in the same commit (or alone, while nothing is old enough yet), so writers write it; the files still in the finer spec are aged as their windows end. `false`: the finer spec stays the default and writers keep writing it."},

		{"pricing", "storage", kindString, func(p *PolicyBody) any { return &p.Pricing.Storage }, checkEnum("pricing storage", storageNames()...),
			"The storage class whose default prices fill the prices this block does not set: `\"s3\"` (S3 Standard), `\"gcs\"` (Cloud Storage Standard), `\"azure\"` (Blob Storage Hot) or `\"none\"` (no defaults). Unset: from the table location's scheme (`s3`, `s3a`, `s3n`; `gs`; `abfs`, `abfss`, `wasb`, `wasbs`; anything else, such as local files, has none). docs/cost.md lists the defaults and the dates they were read."},
		{"pricing", "storage_gb_month", kindFloat, func(p *PolicyBody) any { return &p.Pricing.StorageGBMonth }, checkPrice,
			"US dollars per GB (10^9 bytes) stored for a month: what bytes freed save."},
		{"pricing", "put_per_1000", kindFloat, func(p *PolicyBody) any { return &p.Pricing.PutPer1000 }, checkPrice,
			"US dollars per 1,000 PUT and LIST requests (class A; a multipart part is one PUT)."},
		{"pricing", "get_per_1000", kindFloat, func(p *PolicyBody) any { return &p.Pricing.GetPer1000 }, checkPrice,
			"US dollars per 1,000 GET and HEAD requests (class B): what a run reads, and what a reader saves per object a scan no longer opens."},
		{"pricing", "cpu_hour", kindFloat, func(p *PolicyBody) any { return &p.Pricing.CPUHour }, checkPrice,
			"US dollars per CPU-hour of the process that runs the maintenance."},
		{"pricing", "scans_per_month", kindFloat, func(p *PolicyBody) any { return &p.Pricing.ScansPerMonth }, checkPrice,
			"How many full scans of the table its readers make in a month: the reader's saving per month is the objects a scan no longer opens times this, at `get_per_1000`."},
	}
}

// blockState returns the Declared flag and DeclRange of a nested block.
func blockState(p *PolicyBody, block string) (*bool, *hcl.Range) {
	switch block {
	case "compaction":
		return &p.Compaction.Declared, &p.Compaction.DeclRange
	case "snapshot_retention":
		return &p.SnapshotRetention.Declared, &p.SnapshotRetention.DeclRange
	case "orphan_files":
		return &p.OrphanFiles.Declared, &p.OrphanFiles.DeclRange
	case "manifests":
		return &p.Manifests.Declared, &p.Manifests.DeclRange
	case "dangling_deletes":
		return &p.DanglingDeletes.Declared, &p.DanglingDeletes.DeclRange
	case "partition_ageing":
		return &p.PartitionAgeing.Declared, &p.PartitionAgeing.DeclRange
	case "pricing":
		return &p.Pricing.Declared, &p.Pricing.DeclRange
	}
	panic("config: unknown nested block " + block) // programming error: nestedBlocks and this switch disagree
}

func checkTargetSize(v any) *fieldProblem {
	n := v.(int64)
	if n <= 0 {
		return &fieldProblem{hcl.DiagError, "Invalid target file size", "target_file_size must be more than zero bytes.", ""}
	}
	if n < minLintTargetSize || n > maxLintTargetSize {
		return &fieldProblem{hcl.DiagWarning, "Target file size outside 64MiB–2GiB",
			fmt.Sprintf("target_file_size is %s. Files much smaller than 64MiB make queries open too many files; files above 2GiB limit parallelism. Iceberg's default is 512MiB.", FormatSize(n)), LintTargetSize}
	}
	return nil
}

func checkPositiveSize(v any) *fieldProblem {
	if v.(int64) <= 0 {
		return &fieldProblem{hcl.DiagError, "Invalid size", "This size must be more than zero bytes.", ""}
	}
	return nil
}

func checkNonNegative(v any) *fieldProblem {
	if f := v.(float64); f < 0 {
		return &fieldProblem{hcl.DiagError, "Value out of range", fmt.Sprintf("The value cannot be negative; got %g (0: no limit).", f), ""}
	}
	return nil
}

// minOrphanEvery is the least orphan_files.every: a sweep lists the whole
// table's storage.
const minOrphanEvery = time.Hour

func checkEvery(v any) *fieldProblem {
	if d := v.(time.Duration); d < minOrphanEvery {
		return &fieldProblem{hcl.DiagError, "Orphan sweep interval too short",
			fmt.Sprintf("orphan_files.every is %s; it must be at least %s: each sweep lists the whole table's storage.", FormatDuration(d), FormatDuration(minOrphanEvery)), ""}
	}
	return nil
}

func checkMaxAge(v any) *fieldProblem {
	d := v.(time.Duration)
	if d < trinoRetention {
		return &fieldProblem{hcl.DiagWarning, "Snapshot retention below Trino's 7-day floor",
			fmt.Sprintf("max_age is %s. Trino refuses expire_snapshots below 7d by default (expire_snapshots.min-retention), and readers or time-travel queries older than %s will fail once icewright expires their snapshots.", FormatDuration(d), FormatDuration(d)), LintTrinoRetention}
	}
	return nil
}

// checkMaxRefAge: a ref's age is never zero, so "0s" would remove every
// tag and branch but main at once; icewright once explained the unset value
// as `"0s" # default`, and a copy of that must not delete every tag.
func checkMaxRefAge(v any) *fieldProblem {
	if v.(time.Duration) <= 0 {
		return &fieldProblem{hcl.DiagError, "Invalid max_ref_age",
			"max_ref_age is the age past which a tag or branch is removed; every ref is older than zero, so \"0s\" would remove them all. To keep refs forever, leave max_ref_age unset.", ""}
	}
	return nil
}

func checkOlderThan(v any) *fieldProblem {
	d := v.(time.Duration)
	if d < minOlderThan {
		return &fieldProblem{hcl.DiagError, "Orphan-file age guard below 24 hours",
			fmt.Sprintf("older_than is %s. Files younger than a day may belong to a write that has not committed yet; deleting them corrupts the table. Use \"24h\" or more (\"3d\" is usual).", FormatDuration(d)), ""}
	}
	return nil
}

func checkRatio(v any) *fieldProblem {
	r := v.(float64)
	if !(r > 0 && r <= 1) {
		return &fieldProblem{hcl.DiagError, "Invalid max_orphan_ratio",
			fmt.Sprintf("max_orphan_ratio is %s; it is a share of the table's files and must be above 0 and at most 1.", strconv.FormatFloat(r, 'g', -1, 64)), ""}
	}
	return nil
}

func checkMinInt(min int) func(any) *fieldProblem {
	return func(v any) *fieldProblem {
		if n := v.(int); n < min {
			return &fieldProblem{hcl.DiagError, "Value out of range", fmt.Sprintf("The value must be at least %d, got %d.", min, n), ""}
		}
		return nil
	}
}

func checkEnum(what string, allowed ...string) func(any) *fieldProblem {
	return func(v any) *fieldProblem {
		s := v.(string)
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		detail := fmt.Sprintf("%q is not a valid %s; use one of %s.", s, what, quoteList(allowed))
		if sug := nameSuggestion(s, allowed); sug != "" {
			detail += fmt.Sprintf(" Did you mean %q?", sug)
		}
		return &fieldProblem{hcl.DiagError, "Invalid " + what, detail, ""}
	}
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// settingPtr is implemented by *Setting[T]; it lets the field table merge and
// explain settings without knowing T.
type settingPtr interface {
	fillFrom(other any)
	meta() (set bool, origin hcl.Range, block string)
	value() any
	copySetting() settingPtr
}

func (s *Setting[T]) fillFrom(other any) {
	o := other.(*Setting[T])
	if !s.Set && o.Set {
		*s = *o
	}
}

func (s *Setting[T]) meta() (bool, hcl.Range, string) { return s.Set, s.Origin, s.Block }

// copySetting is a copy of the setting on its own, for compactBody.
func (s *Setting[T]) copySetting() settingPtr {
	c := *s
	return &c
}
func (s *Setting[T]) value() any { return s.Value }

// renderValue writes a value the way it would be written in HCL, so explain
// output can be pasted back into a configuration.
func renderValue(kind valueKind, v any) string {
	switch kind {
	case kindSize:
		if n := v.(int64); n == 0 {
			return "0" // "unlimited" for max_bytes_per_run; a quoted "0" reads oddly
		}
		return strconv.Quote(FormatSizeExact(v.(int64)))
	case kindDuration:
		return strconv.Quote(FormatDuration(v.(time.Duration)))
	case kindInt:
		return strconv.Itoa(v.(int))
	case kindFloat:
		return strconv.FormatFloat(v.(float64), 'g', -1, 64)
	case kindBool:
		return strconv.FormatBool(v.(bool))
	case kindString:
		return strconv.Quote(v.(string))
	case kindList:
		return renderList(v.([]string))
	case kindSort:
		fs := v.([]SortField)
		terms := make([]string, len(fs))
		for i, f := range fs {
			terms[i] = f.String()
		}
		return renderList(terms)
	case kindMap:
		m := v.(map[string]string)
		if len(m) == 0 {
			return "{}"
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + " = " + strconv.Quote(m[k])
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return fmt.Sprint(v)
}

func renderList(items []string) string {
	return "[" + quoteList(items) + "]"
}

// checkStorageRoots: orphan_files.allow_storage_roots names whole buckets,
// containers or file systems ("s3://bucket", "file:///"); anything else
// would never match a sweep root and give a false sense of having opted in.
func checkStorageRoots(v any) *fieldProblem {
	for _, r := range v.([]string) {
		scheme, rest, ok := strings.Cut(r, "://")
		rest = strings.TrimSuffix(rest, "/")
		if !ok || scheme == "" || strings.Contains(rest, "/") || (scheme == "file") != (rest == "") {
			return &fieldProblem{hcl.DiagError, "Invalid storage root",
				fmt.Sprintf("%q is not the root of a bucket, container or file system. allow_storage_roots takes locations such as \"s3://bucket\" or \"file:///\": a sweep root there lists everything stored in it.", r), ""}
		}
	}
	return nil
}
