package diff

import "github.com/icewright/icewright/config"

import "time"

// The reports below are what providers produce for the commands that are not
// a plan (inspect, restore) and the views render. They are plain data, kept
// here beside the observed state so that the views never import providers.

// Inspection is the health report of one table (`icewright inspect`).
type Inspection struct {
	Address           string            `json:"address"`
	Managed           bool              `json:"managed"` // a block of the configuration matches it
	UUID              string            `json:"table_uuid"`
	Location          string            `json:"location"`
	MetadataLocation  string            `json:"metadata_location"`
	FormatVersion     int               `json:"format_version"`
	CurrentSnapshotID *int64            `json:"current_snapshot_id"`
	Properties        map[string]string `json:"properties"`
	SortOrder         []string          `json:"sort_order"`
	Specs             []PartitionSpec   `json:"specs"`
	DefaultSpecID     int               `json:"default_spec_id"`
	// SortOrders are every sort order of the metadata; SortOrder is the
	// default's fields.
	SortOrders []InspectSortOrder `json:"sort_orders"`
	Schema     InspectSchema      `json:"schema"`

	// TargetFileSize is the size small files are measured against: the
	// policy's, else the table's write.target-file-size-bytes, else
	// config.DefaultTargetFileSize.
	TargetFileSize int64     `json:"target_file_size"`
	SmallFileLimit int64     `json:"small_file_limit"` // below this a file is small
	Files          FileStats `json:"files"`
	// SizeHistogram counts the current snapshot's data files per power of
	// two of their size; PartitionHistograms the same per partition, only
	// when asked for (inspect -partitions).
	SizeHistogram       []SizeBucket         `json:"size_histogram"`
	PartitionHistograms []PartitionHistogram `json:"partition_histograms,omitempty"`
	SmallFileShare      float64              `json:"small_file_share"` // small / data files
	Partitions          InspectPartitions    `json:"partitions"`
	Manifests           ManifestStats        `json:"manifests"`
	Snapshots           InspectSnapshots     `json:"snapshots"`
	Refs                []Ref                `json:"refs"`
	// OldSnapshotFiles/Bytes are held only by snapshots that are not the
	// head of a branch or tag: what expiring all history would free.
	OldSnapshotFiles int64           `json:"old_snapshot_files"`
	OldSnapshotBytes int64           `json:"old_snapshot_bytes"`
	Orphans          *InspectOrphans `json:"orphans,omitempty"`
	OrphanError      string          `json:"orphan_error,omitempty"`
	// Waste is what the table pays for today and no reader needs
	// (docs/cost.md, "Waste").
	Waste InspectWaste `json:"waste"`
	// Pricing are the table's prices (as TablePlan.Pricing), which Waste's
	// money comes from; nil when it has none (local storage).
	Pricing         *config.Prices `json:"pricing,omitempty"`
	Recommendations []string       `json:"recommendations"`
}

// InspectWaste is what a table stores or makes readers open for nothing:
// files held only by snapshots past retention, old orphan files, and the
// opens a full scan spends on small files. Usage is the same figures as a
// saving (BytesFreed, ScanOpensSaved), so that money comes from the one
// function that prices a plan's savings.
type InspectWaste struct {
	// ExpirableSnapshots are the snapshots past retention today (the
	// policy's snapshot_retention, else the table's history.expire.*
	// properties, else Iceberg's defaults), and ExpirableFiles/Bytes the
	// files only they hold: what an expiry now would delete.
	ExpirableSnapshots int   `json:"expirable_snapshots"`
	ExpirableFiles     int64 `json:"expirable_files"`
	ExpirableBytes     int64 `json:"expirable_bytes"`
	// OrphanFiles/Bytes are the unreferenced files older than orphans'
	// older_than (Orphans.Old); absent when the orphans were not counted
	// (OrphanError).
	OrphanFiles *int   `json:"orphan_files,omitempty"`
	OrphanBytes *int64 `json:"orphan_bytes,omitempty"`
	// SmallFiles/Bytes are the live data files below the small-file limit,
	// and ExtraScanOpens how many more files a full scan opens than if
	// each partition's small files were packed into files of the target
	// size.
	SmallFiles     int64 `json:"small_files"`
	SmallBytes     int64 `json:"small_bytes"`
	ExtraScanOpens int64 `json:"extra_scan_opens"`
	// USDPerMonth is the storage and the scans' requests the waste costs
	// a month, with the table's prices; absent without prices.
	USDPerMonth *float64 `json:"usd_per_month,omitempty"`
}

// Usage is the waste as the saving of removing it: bytes freed (expirable
// and old orphan files) and the scan opens small files cost.
func (w InspectWaste) Usage() Usage {
	u := Usage{BytesFreed: w.ExpirableBytes, ScanOpensSaved: w.ExtraScanOpens}
	if w.OrphanBytes != nil {
		u.BytesFreed += *w.OrphanBytes
	}
	return u
}

// InspectSchema is the current schema, flattened: a nested field follows
// its parent with Depth one more, and Path names it from the top
// ("payload.tags.element").
type InspectSchema struct {
	ID     int            `json:"schema_id"`
	Fields []SchemaColumn `json:"fields"`
}

type SchemaColumn struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Path     string `json:"path"`
	Type     string `json:"type"` // "long", "struct", "list", "map", "decimal(9,2)"
	Required bool   `json:"required"`
	Depth    int    `json:"depth"`
}

type InspectSortOrder struct {
	ID      int      `json:"order_id"`
	Fields  []string `json:"fields"` // as sort_order writes them
	Default bool     `json:"default"`
}

// SizeBucket counts data files of size in [MinBytes, MaxBytes).
type SizeBucket struct {
	MinBytes int64 `json:"min_bytes"`
	MaxBytes int64 `json:"max_bytes"`
	Files    int64 `json:"files"`
}

type PartitionHistogram struct {
	SpecID    int          `json:"spec_id"`
	Partition string       `json:"partition"`
	Buckets   []SizeBucket `json:"buckets"`
}

// InspectPartitions summarises partitions; Top are those with most files.
type InspectPartitions struct {
	Count int              `json:"count"`
	Top   []PartitionStats `json:"top"`
}

// InspectSnapshots summarises the snapshot history.
type InspectSnapshots struct {
	Count             int   `json:"count"`
	OldestTimestampMs int64 `json:"oldest_timestamp_ms"`
	OldestAgeMs       int64 `json:"oldest_age_ms"`
	NewestAgeMs       int64 `json:"newest_age_ms"`
}

// InspectOrphans is the orphan estimate: unreferenced files in the table's
// storage, and those older than the policy's older_than (3 days when the
// table has no orphan policy).
type InspectOrphans struct {
	OlderThan         string   `json:"older_than"`
	Unreferenced      int      `json:"unreferenced"`
	UnreferencedBytes int64    `json:"unreferenced_bytes"`
	Old               int      `json:"old"`
	OldBytes          int64    `json:"old_bytes"`
	NonIceberg        int      `json:"non_iceberg"`
	Excluded          int64    `json:"excluded"`
	Missing           int64    `json:"missing_referenced"`
	NestedTables      []string `json:"nested_tables,omitempty"`
	Symlinks          int      `json:"symlinks"`
	Refusal           string   `json:"refusal,omitempty"`
	// StuckRuns are the quarantine runs apply never purges (see
	// QuarantineRun.StuckReason); the plan warns about each.
	StuckRuns []InspectStuckRun `json:"stuck_quarantine_runs,omitempty"`
	// QuarantineRuns are every run under the table's quarantine, stuck or
	// not (orphan_files { quarantine = ... }).
	QuarantineRuns []InspectQuarantineRun `json:"quarantine_runs"`
}

type InspectQuarantineRun struct {
	RunID        string `json:"run_id"`
	Files        int64  `json:"files"`
	Bytes        int64  `json:"bytes"`
	CreatedAtMs  int64  `json:"created_at_ms"`
	PurgeAfterMs int64  `json:"purge_after_ms"` // 0: never purged by icewright
	Stuck        string `json:"stuck,omitempty"`
}

// InspectStuckRun is a quarantine run that needs a person, and why.
type InspectStuckRun struct {
	RunID  string `json:"run_id"`
	Reason string `json:"reason"`
}

// QuarantinedFile is one moved orphan.
type QuarantinedFile struct {
	Original    string    `json:"original"`    // path as listed, where restore puts it back
	Quarantined string    `json:"quarantined"` // where it is now
	Size        int64     `json:"size"`
	Mtime       time.Time `json:"mtime"`
	// Moved is false for a file the manifest announced but the move did
	// not complete (it is still at Original).
	Moved bool `json:"moved"`
}

// RestoreResult is what a restore put back.
type RestoreResult struct {
	RunID    string
	Restored []QuarantinedFile
	// Refused are files not put back, with why (an existing file at the
	// original path is never overwritten; a path that could not be looked
	// at is never taken for absent).
	Refused []string
	// NotHeld are files the manifest lists that this run never held: not
	// moved by it, and not at their original path either (another run or
	// a person moved them). Nothing is done about them.
	NotHeld []string
	Bytes   int64
	// ManifestKept says why the run's manifest was not removed (empty when
	// it was): it stays until every file it lists is verified back in
	// place, so that the run can always be restored again.
	ManifestKept string
}

// DemoLakehouse describes the lakehouse `icewright demo` built.
type DemoLakehouse struct {
	Dir        string      `json:"dir"`
	ConfigFile string      `json:"config_file"`
	CatalogDB  string      `json:"catalog_db"`
	Warehouse  string      `json:"warehouse"`
	Catalog    string      `json:"catalog"`
	Tables     []DemoTable `json:"tables"`
}

// DemoTable is one table of the demo and the debt it carries.
type DemoTable struct {
	Address string `json:"address"`
	Debt    string `json:"debt"`
}
