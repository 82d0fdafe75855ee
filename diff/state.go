package diff

// TableState is what providers observed of one table. Plain data: no
// iceberg-go types, so diff stays pure and testable with literals.
type TableState struct {
	Address           string            `json:"address"`
	UUID              string            `json:"table_uuid"`
	MetadataLocation  string            `json:"metadata_location"`
	Location          string            `json:"location"`
	FormatVersion     int               `json:"format_version"`
	CurrentSnapshotID *int64            `json:"current_snapshot_id"`
	LastUpdatedMs     int64             `json:"last_updated_ms"`
	Properties        map[string]string `json:"properties"`
	// DeleteBatch is the catalog's icewright.delete-batch-size, how many
	// objects one batch delete holds (0: the store's own maximum); the
	// estimates count batches by it, as objdel sends them.
	DeleteBatch int `json:"delete_batch,omitempty"`
	// MetadataBytes is the size of the table's current metadata JSON as
	// iceberg-go writes it (the loaded metadata serialized again: no read),
	// and SnapshotBytes that of its current snapshot's entry in it: what a
	// commit reads and writes (the estimates' commit term).
	MetadataBytes int64 `json:"metadata_bytes,omitempty"`
	SnapshotBytes int64 `json:"snapshot_bytes,omitempty"`
	// MetadataFileBytes is the size of the current metadata file as
	// stored: the bytes the observation's load of the table read (its
	// meter counted them; no request of its own). Another writer's file
	// may differ from iceberg-go's (indented, compressed), and the plan's
	// first commit, or an expiry or sweep that nothing in the plan ran a
	// commit before, reads this one (currentMetadataBytes). 0 when the
	// load read no file the meter sees (a REST catalog's load, GCS and
	// Azure storage) or the state predates it: then MetadataBytes.
	MetadataFileBytes int64 `json:"metadata_file_bytes,omitempty"`

	DefaultSortOrderID int             `json:"default_sort_order_id"`
	SortOrder          []SortField     `json:"sort_order"` // the default sort order; empty = unsorted
	DefaultSpecID      int             `json:"default_spec_id"`
	Specs              []PartitionSpec `json:"specs"`
	// Schema is the top-level columns of the current schema. The plan
	// checks sort and zorder columns against it; nil means it was not
	// observed (a state built by hand), and then they are not checked.
	Schema []Column `json:"schema"`

	Snapshots   []Snapshot         `json:"snapshots"` // in metadata order
	Refs        []Ref              `json:"refs"`      // including main
	MetadataLog []MetadataLogEntry `json:"metadata_log"`

	// CommitProblem, when set, is why no commit to this table can succeed
	// (providers decides it, e.g. a metadata file name the catalog cannot
	// continue): every action that commits is refused with it.
	CommitProblem string `json:"commit_problem,omitempty"`

	// CompactProblem, when set, is why a rewrite of this table's files
	// would change values (providers decides it, e.g. an equality delete on
	// a column that a data file lacks): a planned compaction is refused
	// with it.
	CompactProblem string `json:"compact_problem,omitempty"`

	// UnwritableSpecs maps the id of each partition spec whose manifests
	// the writer cannot write (providers decides it: iceberg-go v0.7.0 and
	// two decimal partition fields) to why: files of such a spec are not
	// compacted and its manifests not rewritten, each a refusal in the plan,
	// since the commit would fail after the rewrite.
	UnwritableSpecs map[int]string `json:"unwritable_specs,omitempty"`

	// EscapedFileURI is the first live file the observation met that is
	// named by a file: URI whose path changes when decoded (see
	// PartitionStats.EscapedFileURIs), for the refusal's sentence; "" when
	// there is none.
	EscapedFileURI string `json:"escaped_file_uri,omitempty"`

	// ForeignFile is the first live file the observation met on another
	// storage than the table location's (see PartitionStats.ForeignFiles),
	// for the refusal's sentence; "" when there is none.
	ForeignFile string `json:"foreign_file,omitempty"`

	// DanglingDeletes are the delete files of the current snapshot that
	// apply to no live data file; providers look only when the policy has a
	// dangling_deletes block (nil otherwise).
	DanglingDeletes *DanglingDeletes `json:"dangling_deletes,omitempty"`

	// PartitionAgeing is what partition ageing would rewrite, and
	// AgeingRefusal why it cannot (an ambiguous coarser spec); providers
	// look only when the policy has a partition_ageing block.
	PartitionAgeing *PartitionAgeing `json:"partition_ageing,omitempty"`
	AgeingRefusal   string           `json:"ageing_refusal,omitempty"`

	// Files of the current snapshot, aggregated per (spec, partition).
	Partitions []PartitionStats `json:"partitions"`
	Files      FileStats        `json:"files"`
	Manifests  ManifestStats    `json:"manifests"`

	// Orphans is set only when the policy has orphan_files.
	Orphans *OrphanScan `json:"orphans,omitempty"`

	// Engine is the policy's compaction.engine when it is not icewright'
	// own (providers open it from the engine block): the plan asks it for
	// each delegated partition's statement.
	Engine Engine `json:"-"`

	// Expiry is filled by providers after diff selected snapshots to expire:
	// files reachable now and not after the plan's commits.
	// (See providers/expiry: Estimate and Index; diff leaves the counts to the provider.)
}

type Column struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"` // iceberg's spelling: "long", "struct<...>", "decimal(9, 2)"
	// SortTransforms names the transforms by which icewright's sort engine
	// orders rows by this column ("identity", "bucket", "truncate", "year",
	// "month", "day", "hour", "void"); empty: it cannot sort by it.
	// Providers ask the engine (providers/compaction.SortTransforms), so
	// the plan refuses what a rewrite could not do.
	SortTransforms []string `json:"sort_transforms,omitempty"`
}

// SortField mirrors an Iceberg sort field in the vocabulary of the config
// (Transform "identity", "bucket[16]", "truncate[4]", "day", ...).
type SortField struct {
	Transform  string `json:"transform"`
	Column     string `json:"column"`
	Descending bool   `json:"descending"`
	NullsFirst bool   `json:"nulls_first"`
}

type PartitionSpec struct {
	ID     int      `json:"id"`
	Fields []string `json:"fields"` // "day(ts)", "identity(region)"
}

type Snapshot struct {
	ID             int64             `json:"id"`
	ParentID       *int64            `json:"parent_id,omitempty"`
	SequenceNumber int64             `json:"sequence_number"`
	TimestampMs    int64             `json:"timestamp_ms"`
	Operation      string            `json:"operation"`
	ManifestList   string            `json:"manifest_list"`
	Summary        map[string]string `json:"summary,omitempty"`
}

type Ref struct {
	Name               string `json:"name"`
	Type               string `json:"type"` // "branch" | "tag"
	SnapshotID         int64  `json:"snapshot_id"`
	MinSnapshotsToKeep *int   `json:"min_snapshots_to_keep,omitempty"`
	MaxSnapshotAgeMs   *int64 `json:"max_snapshot_age_ms,omitempty"`
	MaxRefAgeMs        *int64 `json:"max_ref_age_ms,omitempty"`
}

type MetadataLogEntry struct {
	File        string `json:"file"`
	TimestampMs int64  `json:"timestamp_ms"`
}

// PartitionStats aggregates the live files of one partition of one spec.
// CandidateSizes holds, in manifest order, the sizes of the data files that
// the compaction selection rules picked (size outside [min,max] or too many
// deletes) so diff can bin-pack exactly as iceberg-go's compaction.Config.
// It is 8 bytes per candidate, not an object per file.
type PartitionStats struct {
	SpecID         int     `json:"spec_id"`
	Partition      string  `json:"partition"` // rendered: "region=eu/day=2026-11-01", "" unpartitioned
	DataFiles      int64   `json:"data_files"`
	DataBytes      int64   `json:"data_bytes"`
	Records        int64   `json:"records"`
	SmallFiles     int64   `json:"small_files"` // below min_file_size
	SmallBytes     int64   `json:"small_bytes"` // their bytes
	DeleteFiles    int64   `json:"delete_files"`
	DeleteBytes    int64   `json:"delete_bytes"`
	CandidateSizes []int64 `json:"-"`
	// CandidatePaths are the candidates' paths, as their manifests name
	// them, in the order of CandidateSizes: the plan records each group's
	// files (CompactGroup.Files) and apply rewrites exactly those. Empty
	// when the observer did not keep them (the groups then name no files).
	CandidatePaths []string `json:"-"`
	// CandidateManifests are, in the same order, the index in
	// ManifestStats.Files of the manifest that lists each candidate (-1:
	// not known): which manifests the plan's compaction empties
	// (manifestsAfterCompaction). Optional, like Files.
	CandidateManifests []int `json:"-"`
	CandidateBytes     int64 `json:"candidate_bytes"`
	// StaleSortFiles counts the candidates that record another sort order
	// than a sort or zorder rewrite writes (CompactionSelection.Strategy):
	// such a partition is one group of all its candidates, whatever
	// min_input_files.
	StaleSortFiles int64 `json:"stale_sort_files,omitempty"`
	// NoRowIDCandidates counts the candidates of a format v3 table that
	// have no first_row_id (not even inherited): a rewrite cannot carry
	// their rows' lineage, so the partition is not compacted (a refusal).
	NoRowIDCandidates int64 `json:"no_row_id_candidates,omitempty"`
	// EscapedFileURIs counts the live files a rewrite of the partition
	// would read (its data and delete files, and the equality deletes of
	// an unpartitioned spec, which apply to every partition) that are named
	// by a file: URI whose path changes when decoded (LiteralKey): iceberg-go
	// would open another name than the one the engines that wrote them use,
	// so the partition is not compacted (a refusal).
	EscapedFileURIs int64 `json:"escaped_file_uris,omitempty"`
	// ForeignFiles counts the live files a rewrite of the partition would
	// read (as EscapedFileURIs counts them) that are on another storage
	// than the table location's (another scheme, bucket or container):
	// iceberg-go reads a table's files through one IO, which cannot open
	// them, so the partition is not compacted (a refusal).
	ForeignFiles int64 `json:"foreign_files,omitempty"`
	// Values is the partition's tuple for an engine's predicate
	// (Delegation.Partition); providers fill it, the plan reads it only
	// for a partition it delegates.
	Values []PartitionValue `json:"-"`
}

// FileStats summarises the current snapshot's files for inspect.
type FileStats struct {
	DataFiles       int64 `json:"data_files"`
	DataBytes       int64 `json:"data_bytes"`
	Records         int64 `json:"records"`
	DeleteFiles     int64 `json:"delete_files"` // position + equality + DVs
	PositionDeletes int64 `json:"position_delete_files"`
	EqualityDeletes int64 `json:"equality_delete_files"`
	DeletionVectors int64 `json:"deletion_vectors"`
	DeleteBytes     int64 `json:"delete_bytes"`
	MinSize         int64 `json:"min_size"`
	MedianSize      int64 `json:"median_size"` // from a log-bucket histogram
	MaxSize         int64 `json:"max_size"`
	SmallFiles      int64 `json:"small_files"`
	SmallBytes      int64 `json:"small_bytes"`
}

type ManifestStats struct {
	Count       int   `json:"count"` // manifests of the current snapshot
	DataCount   int   `json:"data_manifests"`
	DeleteCount int   `json:"delete_manifests"`
	Bytes       int64 `json:"bytes"`
	// ListBytes is the size of the current snapshot's manifest list (the
	// plan's walk opened it; 0: not known).
	ListBytes int64 `json:"list_bytes,omitempty"`
	// Files lists the current snapshot's manifests in manifest-list order,
	// so diff can predict iceberg-go's RewriteManifests exactly (and see
	// when it would change nothing). Optional: without it the plan
	// estimates from Bytes.
	Files []ManifestInfo `json:"-"`
}

// ManifestInfo is one manifest of the current snapshot.
type ManifestInfo struct {
	SpecID int   `json:"spec_id"`
	Data   bool  `json:"data"` // a data manifest; false: a delete manifest
	Length int64 `json:"length"`
	// LiveFiles is the files it lists as added or existing (the manifest
	// list's counts; no read), -1 or 0 when not known.
	LiveFiles int64 `json:"live_files,omitempty"`
	// Tombstones: it lists only removed entries (the manifest a
	// compaction's commit writes of the files it replaced, as the plan
	// predicts it): a manifest rewrite drops it.
	Tombstones bool `json:"-"`
}

// OrphanScan is the result of comparing the storage listing (taken first)
// with the referenced set (built after). Providers do the streaming merge;
// diff applies the policy (age guard, ratio, gc.enabled) to it.
type OrphanScan struct {
	Roots       []string `json:"roots"`        // normalised sweep prefixes
	ListedFiles int64    `json:"listed_files"` // files in scope
	Referenced  int64    `json:"referenced"`   // distinct referenced files
	// Candidates are listed, unreferenced, not excluded Iceberg files.
	Candidates []FileInfo `json:"candidates"`
	// NonIceberg are unreferenced files that are not Iceberg's (.crc, _SUCCESS).
	NonIceberg []FileInfo `json:"non_iceberg"`
	Excluded   int64      `json:"excluded"` // matched exclude globs or built-in exclusions
	// MissingReferenced are referenced files absent from the listing (first few).
	MissingReferenced      []string         `json:"missing_referenced,omitempty"`
	MissingReferencedCount int64            `json:"missing_referenced_count"`
	Categories             map[string]int64 `json:"categories"`              // referenced count per category
	NestedTables           []string         `json:"nested_tables,omitempty"` // other tables inside the sweep
	PrefixMismatches       []string         `json:"prefix_mismatches,omitempty"`
	Symlinks               []string         `json:"symlinks,omitempty"` // not followed, never deleted
	// LiteralNamed counts listed files kept because they have the literal
	// name of a reference that is a file: URI whose path changes when
	// decoded (LiteralKey): iceberg-go reads the reference as the decoded
	// name, the engines that wrote it as this one, so the file is the
	// table's under one reading and never an orphan. LiteralNamedExample is
	// the first, as listed.
	LiteralNamed        int64  `json:"literal_named,omitempty"`
	LiteralNamedExample string `json:"literal_named_example,omitempty"`
	Refusal             string `json:"refusal,omitempty"` // provider-side reason to refuse
	// Quarantine lists the table's quarantine runs (under
	// <location>/.icewright-quarantine/), read from their manifests. Diff puts
	// the runs due for purging into the plan; apply purges no other.
	Quarantine []QuarantineRun `json:"quarantine,omitempty"`
	// Staging is what the listing did not enter: other engines' staging
	// directories (docs/orphans.md); nil when there were none.
	Staging *StagingSkip `json:"staging,omitempty"`
	// Foreign is the unreferenced files the listing found that other
	// tables reference (docs/design.md §5.5 rule 6): never candidates; nil
	// when there were none.
	Foreign *ForeignKept `json:"foreign,omitempty"`
	// Reads is what the scan's reference walk read of the table's
	// metadata (every snapshot's manifest list, every distinct manifest),
	// and ListRequests the LIST requests its listing of the roots sent:
	// apply's re-check and removal read and list the same (the estimate,
	// docs/cost.md). Nil and 0 when not recorded.
	Reads        *ManifestReads `json:"reads,omitempty"`
	ListRequests int64          `json:"list_requests,omitempty"`
}

// ManifestReads is what a walk of a table's snapshots reads of its
// metadata: the manifest lists and the distinct manifests, and their
// bytes (ListBytes is 0 where the walk had no size for the lists).
type ManifestReads struct {
	Lists         int64 `json:"lists"`
	ListBytes     int64 `json:"list_bytes"`
	Manifests     int64 `json:"manifests"`
	ManifestBytes int64 `json:"manifest_bytes"`
}

// ForeignKept is the files under a sweep that the table does not reference
// and other tables do (a file added to another table with add_files, a
// table's files another took in): kept, whatever their age.
type ForeignKept struct {
	Files    int64    `json:"files"`
	Bytes    int64    `json:"bytes"`
	Tables   []string `json:"tables"`   // the tables that reference them, sorted
	Examples []string `json:"examples"` // the first files by path (at most 5)
}

// StagingSkip is what an orphan sweep left alone because it lies in other
// engines' staging directories (a directory below a sweep root whose name
// starts with "_" or "." and is no partition directory: Hadoop's
// _temporary/, Hive's .hive-staging_*/). Their files are counted, never
// compared with the table's references, never deleted.
type StagingSkip struct {
	Dirs     int64    `json:"dirs"`     // outermost such directories
	Files    int64    `json:"files"`    // regular files found below them
	Bytes    int64    `json:"bytes"`    // their sizes
	Examples []string `json:"examples"` // the first directories by name (at most 5)
}

// QuarantineRun is one quarantine run as its manifest describes it. The
// quarantined files themselves are not listed: the manifest has the counts.
type QuarantineRun struct {
	RunID        string `json:"run_id"`
	Files        int64  `json:"files"` // entries of the manifest: at most this many files are deleted
	Bytes        int64  `json:"bytes"`
	CreatedAtMs  int64  `json:"created_at_ms"`
	PurgeAfterMs int64  `json:"purge_after_ms"` // 0: no time recorded, icewright never purges it
	// ManifestDigest is "sha256:<hex>" of the manifest's bytes: apply
	// purges a planned run only while its manifest is exactly what was
	// planned.
	ManifestDigest string `json:"manifest_digest"`
	// Problem says why the run can never be purged (its manifest cannot be
	// read, belongs to another table, or names files outside the run).
	Problem string `json:"problem,omitempty"`
	// Referenced are original paths of the run that the table references
	// (found among the referenced files missing from the listing): the run
	// holds live data and must be restored, never purged.
	Referenced []string `json:"referenced,omitempty"`
}

type FileInfo struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	MtimeMs int64  `json:"mtime_ms"`
}
