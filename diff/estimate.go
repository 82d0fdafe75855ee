package diff

import (
	"strings"

	"github.com/icewright/icewright/config"
)

// The estimates of what each action costs and frees (Action.Estimate),
// from the metadata the plan read: no data file is opened. Each kind's
// estimate rule (Kind.estimate) counts what its executor does
// (providers/<kind>, providers/internal/objdel, objlist, reach); the
// formulas and their known limits are in docs/cost.md, which the apply
// results' actuals are compared with.

// The object-store facts the estimates count requests with. They are the
// stores' and the SDKs' (not settings of ours): the objdel stores batch
// deletes by these, and iceberg-go's S3 writer (gocloud.dev s3blob through
// the AWS SDK's transfermanager v0.4.1, with no part size set) uploads
// by these parts.
const (
	// S3DeleteBatch and AzureDeleteBatch are how many objects one batch
	// delete request removes at most (S3 DeleteObjects, an Azure blob
	// batch). GCS has none in its Go SDK: objdel deletes one object a
	// request there, as on local storage.
	S3DeleteBatch    = 1000
	AzureDeleteBatch = 256
	// ListPageSize is the objects one LIST page returns (ListObjectsV2's
	// default and maximum, which the orphan lister keeps).
	ListPageSize = 1000
	// MultipartThreshold and MultipartPartSize: an object of at least the
	// threshold is uploaded in parts of this size, with a request to start
	// the upload and one to complete it; a smaller one is one PUT.
	MultipartThreshold = 16 << 20
	MultipartPartSize  = 8 << 20
	// inputRowGroup is the row group assumed of the files a rewrite reads
	// (Iceberg's write.parquet.row-group-size-bytes default, which Spark
	// and the other writers use): a file is read with a GET for its footer
	// and one per column chunk of each row group.
	inputRowGroup = 128 << 20
)

// CompactionCPU is the CPU time (user + system) of icewright's compact
// action per strategy, as a time per input byte and per input file beside
// the action's own (CompactionCPUPerAction), and the bytes of values it
// writes per byte of values read (OutputRatio: bytes less each file's
// overhead, ParquetFileBytes; rewrittenBytes). The CPU rates are the
// action's own CPU time as apply counts it (the results' actual
// cpu_seconds of `icewright apply -json -parallelism=1`: the group check,
// the rewrite and the commit, not the plan), measured on 2026-12-07 on the
// shared 2-core build machine (Linux x86-64, Go 1.26.8, load 10-20: CPU
// time, not wall) with bench/compaction's policy (8 MiB target) over its
// tables (`compactbench setup`, 4 partitions) of 20 files of 25 rows to
// 800 files of 5,000 rows and 200 of 20,000, bench.events (400 files of
// 250 rows) and the demo's clicks and events (25 and 240 files of 20 and
// 10 rows), two to seven runs each; CPU-seconds = CompactionCPUPerAction +
// PerFile x files + PerByte x bytes fitted over all of them (least squares
// of the relative error). OutputRatio was measured with ParquetFileBytes,
// over `setup -commits 400 -rows 250`, `-commits 100 -rows 4000`,
// `-commits 25 -rows 20000` and the tables of the CPU rates (1,600 files
// of 4.2 KB to 100 of 129 KB, each strategy into 4 files of at most 128
// MiB): binpack 0.979-1.003, sort 1.023-1.041, zorder 1.044-1.084.
// docs/cost.md has the runs.
var CompactionCPU = map[string]struct {
	PerByte, PerFile float64 // CPU-seconds
	OutputRatio      float64 // bytes of values written per byte of values read
}{
	"binpack": {PerByte: 2.90e-8, PerFile: 1.07e-3, OutputRatio: 1.00},
	"sort":    {PerByte: 4.05e-8, PerFile: 0.68e-3, OutputRatio: 1.03},
	"zorder":  {PerByte: 6.04e-8, PerFile: 1.47e-3, OutputRatio: 1.08},
}

// CompactionCPUPerAction is the CPU time of a compaction's (or partition
// ageing's) action beside its files: planning the groups against the
// table, the commit and its check, whatever the files (fitted with
// CompactionCPU's rates; a table of 20 files of 25 rows took 41-51 ms).
const CompactionCPUPerAction = 0.030

// storageOf is the pricing storage a table is on ("s3", "gcs", "azure"),
// or "none" (local files): how it deletes.
func storageOf(st *TableState) string { return config.StorageOf(st.Location) }

// deleteRequests are the requests that delete n objects of st's storage:
// in batches on S3 and Azure (of the store's maximum, or the catalog's
// icewright.delete-batch-size when smaller, as objdel sends them), one by
// one on GCS and local storage.
func deleteRequests(st *TableState, n int64) Requests {
	if n <= 0 {
		return Requests{}
	}
	batch := map[string]int64{"s3": S3DeleteBatch, "azure": AzureDeleteBatch}[storageOf(st)]
	if batch == 0 {
		return Requests{Delete: n}
	}
	if st.DeleteBatch > 0 {
		batch = min(batch, int64(st.DeleteBatch))
	}
	return Requests{BatchDelete: ceilDiv(n, batch)}
}

// negRequests is -r, to take requests out of a sum.
func negRequests(r Requests) Requests {
	return Requests{List: -r.List, Get: -r.Get, Head: -r.Head, Put: -r.Put, Delete: -r.Delete, BatchDelete: -r.BatchDelete}
}

// putRequests are the PUTs that upload one object of size bytes.
func putRequests(size int64) int64 {
	if size < MultipartThreshold {
		return 1
	}
	return ceilDiv(size, MultipartPartSize) + 2
}

// listPages are the LIST pages that list n objects (at least one).
func listPages(n int64) int64 { return max(1, ceilDiv(n, ListPageSize)) }

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// The loads of the current metadata JSON a commit makes: iceberg-go's
// SQL catalog loads the table before it writes the new metadata
// (sql.Catalog.CommitTable), and the commits of the compaction engine
// (compact, partition ageing, dangling deletes) go through its
// commitCatalog, which loads it once more first to check the commit
// (providers/compaction/commit.go, CommitTable).
const (
	catalogLoads = 1
	checkedLoads = 2
)

// metadataLogEntry is the bytes a metadata-log entry takes in the JSON
// beside the path: {"metadata-file":"","timestamp-ms":1765000000000},
const metadataLogEntry = 50

// metadataCommit is what one commit of a new metadata file costs: the
// table's current metadata read loads times (its catalog's load, and the
// check's; at metadataRead's size: first says no commit of the plan ran
// before it) and the new one written: the current one as iceberg-go
// writes it (st.MetadataBytes),
// grown by added bytes and by the metadata-log entry of the file it
// replaces, unless the log is at write.metadata.previous-versions-max
// (100 by default, iceberg-go's), where the oldest entry goes. A REST
// catalog reads and writes it server-side; the estimate counts it as a
// SQL, Hive or Glue catalog's commit does.
func metadataCommit(st *TableState, first bool, loads, added int64) Usage {
	u := Usage{Requests: Requests{Get: loads, Put: 1}, FilesRead: 1, FilesWritten: 1}
	if st.MetadataBytes > 0 {
		u.BytesRead = loads * metadataRead(st, first)
		u.BytesWritten = st.MetadataBytes + added
		if int64(len(st.MetadataLog)) < parseInt64Or(st.Properties["write.metadata.previous-versions-max"], 100) {
			u.BytesWritten += metadataLogEntry + int64(len(st.MetadataLocation))
		}
	}
	return u
}

// metadataRead is the size of the metadata file a load reads: with first
// (no commit of the plan rewrote the table's file before), the current
// file as stored (TableState.MetadataFileBytes, which another writer may
// have indented or compressed); after one, the file iceberg-go wrote,
// MetadataBytes (which the estimates grow by the plan's commits where
// they know them). A state without the stored size takes MetadataBytes.
func metadataRead(st *TableState, first bool) int64 {
	if first && st.MetadataFileBytes > 0 {
		return st.MetadataFileBytes
	}
	return st.MetadataBytes
}

// snapshotLogEntry is the bytes a snapshot-log entry takes in the JSON:
// {"snapshot-id":1234567890123456789,"timestamp-ms":1765000000000},
const snapshotLogEntry = 64

// manifestWalk is what reading the current snapshot's manifests costs
// (its manifest list and every manifest, one GET each): a scan's
// planning.
func manifestWalk(st *TableState) Usage {
	n := int64(st.Manifests.Count)
	if st.CurrentSnapshotID == nil {
		return Usage{}
	}
	return Usage{Requests: Requests{Get: 1 + n}, FilesRead: 1 + n, BytesRead: st.Manifests.Bytes}
}

// snapshotCommit is what a commit that adds a snapshot writes beside its
// data: two manifests of manifests bytes in all (one of the added
// entries, one of the removed: rewriteManifests), the manifest list and
// the metadata file, which grows by a snapshot entry (the size of the
// current one's) and its snapshot-log entry. loads are the metadata reads
// of the commit path (catalogLoads, checkedLoads); first, as
// metadataCommit's.
func snapshotCommit(st *TableState, first bool, loads, manifests int64) Usage {
	u := metadataCommit(st, first, loads, st.SnapshotBytes+snapshotLogEntry)
	u.Requests.Put += 3
	u.FilesWritten += 3
	u.BytesWritten += manifests
	return u
}

// ManifestEntryBytesPerColumn is the bytes a data file's entry takes in a
// manifest of iceberg-go's writer (deflated Avro) per column of the
// schema: its path, partition and counts, and per column its size, value,
// null and NaN counts and bounds. Measured on 2026-12-07 as the
// difference between the two manifests of a compaction's commit (one
// entry per input file marked deleted, one per output file added) over
// their entries: 55.6 and 57.2 B an entry on bench.events and the demo's
// events (5 columns; 400 and 240 entries), 76 B on the demo's clicks (5
// columns, 25 entries), 94 B on bench/compaction's table (7 columns, 20
// and 100 entries). docs/cost.md has the runs.
const ManifestEntryBytesPerColumn = 13

// manifestBytes is the size of a manifest of entries data files: the
// table's current manifests' average less their average entries (its
// header: the Avro schema, the table schema and partition spec) and the
// entries at ManifestEntryBytesPerColumn.
func manifestBytes(st *TableState, entries int64) int64 {
	if st.Manifests.Count == 0 {
		return 0
	}
	per := ManifestEntryBytesPerColumn * columns(st)
	live := (st.Files.DataFiles + st.Files.DeleteFiles) / int64(st.Manifests.Count)
	return max(avgManifestBytes(st)-live*per, 0) + entries*per
}

// commitManifestBytes is the bytes of the manifests that commits commits
// of a rewrite of in files into out write: each commit a manifest of the
// files it adds and one of those it removes, marked deleted (iceberg-go's
// overwrite; a manifest that also held files the rewrite keeps carries
// them as existing entries, which are not counted).
func commitManifestBytes(st *TableState, commits int, in, out int64) int64 {
	if st.Manifests.Count == 0 {
		return 0
	}
	return 2*int64(max(commits, 1))*manifestBytes(st, 0) + (in+out)*ManifestEntryBytesPerColumn*columns(st)
}

// estimateMetadata is a metadata-only change (properties, sort order): one
// commit of a new metadata file.
func estimateMetadata(in *planInput) *Usage {
	u := metadataCommit(in.st, in.first, catalogLoads, 0)
	u.CPUSeconds = MetadataCPUPerByte * float64(u.BytesRead+u.BytesWritten)
	return &u
}

// MetadataCPUPerByte is the CPU time (user + system) of a metadata-only
// commit per byte of metadata JSON read and written (iceberg-go parses the
// current file and serializes the new one): the update_properties actions
// of `bash bench/accuracy.sh` on 2026-12-07 (the shared 2-core build
// machine, Linux x86-64, Go 1.26.8, load 3-4, -parallelism=1; actual
// cpu_seconds) took 6.1 ms, 6.1 ms and 10.7 ms for 184,211, 183,395 and
// 179,166 bytes (3.3e-8, 3.3e-8 and 6.0e-8 s a byte; their mean). The
// other kinds' rates (CompactionCPU, MaintenanceCPU) were measured on
// whole actions, their commits included.
const MetadataCPUPerByte = 4.2e-8

// columns is the number of columns a data file of the table has (its
// current schema's top-level columns; a nested column counts one).
func columns(st *TableState) int64 { return max(int64(len(st.Schema)), 1) }

// ParquetFileBytes is, per column of the current schema and per file,
// what a Parquet file of iceberg-go's writer holds besides its rows'
// encoded values: its footer (Footer: the schema, the Iceberg schema in
// its key-value metadata, each column chunk's metadata and statistics)
// and, with it, the dictionary and page headers each column chunk starts
// with (Overhead, the footer included): what merging many files into one
// sheds. Measured on 2026-12-07 on the files `compactbench setup` writes
// (7 columns; 1,600 files of 4.2 KB, 400 of 9.0 KB and of 28 KB, 100 of
// 129 KB) and `planbench setup` writes (bench.events, 5 columns, 400 files
// of 3.5 KB): the footers (the last 8 bytes' length) are 1,905-1,941 B
// and 1,527 B; the bytes a binpack of each table into 4 files shed per
// input file, (input - output) / (files in - files out), are 2,619, 2,655,
// 2,551 and 2,177 B on the first, 2,339 B on events. Fixed + PerColumn x
// columns through the two schemas' medians. docs/cost.md has the runs.
var ParquetFileBytes = struct {
	FooterFixed, FooterPerColumn     int64
	OverheadFixed, OverheadPerColumn int64
}{FooterFixed: 557, FooterPerColumn: 194, OverheadFixed: 1724, OverheadPerColumn: 123}

// footerBytes and fileOverhead are ParquetFileBytes' per-file footer and
// overhead for a table of cols columns.
func footerBytes(cols int64) int64 {
	return ParquetFileBytes.FooterFixed + ParquetFileBytes.FooterPerColumn*cols
}

func fileOverhead(cols int64) int64 {
	return ParquetFileBytes.OverheadFixed + ParquetFileBytes.OverheadPerColumn*cols
}

// MinValueBytes is the fewest bytes a rewrite's output is taken to hold
// per value (a row's column) when its inputs' bytes less their overhead
// leave fewer: files of a few rows (the demo's: 10 and 20 rows of 2.1 KB)
// are almost all overhead, and what is left of them says nothing of how
// their values compress together. Measured at the outputs (values per row
// and column, the chunks without the footer): 1.15 and 1.27 B on the
// demo's clicks and events, 0.96 B on bench.events, 3.6 B on
// bench/compaction's table. docs/cost.md has the runs.
const MinValueBytes = 1.0

// rewrittenBytes is what a rewrite of files files of bytes and rows rows
// (0: not known) into outFiles writes: the inputs' values (bytes less each
// file's overhead, at least MinValueBytes a value) times the strategy's
// ratio, and each output file's overhead.
func rewrittenBytes(ratio float64, files, bytes, rows, outFiles, cols int64) int64 {
	values := max(bytes-files*fileOverhead(cols), int64(MinValueBytes*float64(rows*cols)), 0)
	return int64(float64(values)*ratio) + outFiles*fileOverhead(cols)
}

// readFiles is what reading files Parquet files of bytes in all costs:
// per file, a GET to open it (the store's reader starts one), two for its
// footer (its length in the last 8 bytes, then the footer) and one per
// column chunk of each row group: the reads bench/accuracy.sh counted.
func readFiles(files, bytes, cols int64) Usage {
	if files <= 0 {
		return Usage{}
	}
	groups := max(1, ceilDiv(bytes/files, inputRowGroup))
	return Usage{Requests: Requests{Get: files * (3 + groups*cols)}, FilesRead: files, BytesRead: bytes}
}

// writeFiles is what writing files Parquet files of bytes in all costs.
func writeFiles(files, bytes int64) Usage {
	if files <= 0 {
		return Usage{}
	}
	return Usage{Requests: Requests{Put: files * putRequests(bytes/files)}, FilesWritten: files, BytesWritten: bytes}
}

// rewriteUsage is what rewriting files data files of bytes into outFiles
// costs (reading them with the deletes that apply, writing them) and
// saves, with strategy's CPU rate. Not the commit.
func rewriteUsage(st *TableState, strategy string, files, bytes, rows, outFiles, deleteFiles, deleteBytes int64) Usage {
	rate, ok := CompactionCPU[strategy]
	if !ok {
		rate = CompactionCPU["binpack"]
	}
	outBytes := rewrittenBytes(rate.OutputRatio, files, bytes, rows, outFiles, columns(st))
	u := readFiles(files, bytes, columns(st))
	u.Add(readFiles(deleteFiles, deleteBytes, 2))
	u.Add(writeFiles(outFiles, outBytes))
	u.CPUSeconds = rate.PerByte*float64(bytes) + rate.PerFile*float64(files)
	u.ScanOpensSaved = max(files-outFiles, 0)
	u.BytesFreed = max(bytes-outBytes, 0)
	return u
}

// OrphanRelistAbove is how many planned orphan paths make the removal
// list each S3 sweep root again (providers/internal/objlist) instead of
// opening each path (providers/orphans).
const OrphanRelistAbove = 1000

// compactGroupUsage is one group's rewrite, without the action's planning
// and commits: a group an engine rewrites (CompactGroup.Engine) is the
// engine's work, and only its saving is counted.
func compactGroupUsage(st *TableState, strategy string, g CompactGroup, p *PartitionStats) Usage {
	var delFiles, delBytes int64
	if p != nil {
		delFiles, delBytes = p.DeleteFiles, p.DeleteBytes
	}
	u := rewriteUsage(st, strategy, int64(g.InputFiles), g.InputBytes, groupRows(g, p), int64(g.EstimatedOutputFiles), delFiles, delBytes)
	if g.Engine != "" {
		return Usage{ScanOpensSaved: u.ScanOpensSaved, BytesFreed: u.BytesFreed}
	}
	u.Add(footerReads(st, g))
	return u
}

// footerReads are the reads of a group's footers before the rewrite reads
// the files (footersReadFirst): each footer opened on its own, an open,
// its length and the footer.
func footerReads(st *TableState, g CompactGroup) Usage {
	if !footersReadFirst(st, g.SpecID) {
		return Usage{}
	}
	files := int64(g.InputFiles)
	return Usage{Requests: Requests{Get: 3 * files}, BytesRead: files * (8 + footerBytes(columns(st)))}
}

// zorderSample is the read of a z-order group the executor makes first,
// to sample the whole group, when its rows as Arrow arrays
// (ZOrderInflation x its bytes) may not fit a third of the memory budget
// (providers/compaction: groupKeyer, zorderMaySpill): the group's files,
// their deletes and footers read once more (objects read already: no file
// more in files_read).
func zorderSample(st *TableState, strategy string, budget int64, g CompactGroup, p *PartitionStats) Usage {
	if strategy != "zorder" || g.Engine != "" || ZOrderInflation*g.InputBytes <= budget/3 {
		return Usage{}
	}
	u := readFiles(int64(g.InputFiles), g.InputBytes, columns(st))
	if p != nil {
		u.Add(readFiles(p.DeleteFiles, p.DeleteBytes, 2))
	}
	u.Add(footerReads(st, g))
	u.FilesRead = 0
	return u
}

// footersReadFirst says whether the engine reads the footer of each input
// file of a group of spec specID before rewriting it (splitByConstants,
// providers/compaction/constants.go: which identity-partition columns a
// file lacks, which uuid columns it stores as bare fixed[16]): when the
// spec has an identity field or the schema a uuid column. An equality
// delete on the group's files makes it read them too; the plan does not
// tell those from position deletes, and does not count that.
func footersReadFirst(st *TableState, specID int) bool {
	for _, c := range st.Schema {
		if strings.Contains(c.Type, "uuid") {
			return true
		}
	}
	for _, sp := range st.Specs {
		if sp.ID != specID {
			continue
		}
		for _, f := range sp.Fields {
			if strings.HasPrefix(f, "identity(") && f != "identity()" {
				return true
			}
		}
	}
	return false
}

// compactMemory is the executor's memory rule for the action: its
// budget, how many groups run at once, and each group's need. Without
// compaction.max_concurrent_groups the estimate assumes a CPU per group
// (the most that can run at once; the budget bounds it).
func compactMemory(pol *config.Effective, st *TableState, c *CompactAction) (budget int64, conc int, need func(CompactGroup, *PartitionStats) int64) {
	local := 0
	for _, g := range c.Groups {
		if g.Engine == "" {
			local++
		}
	}
	conc = pol.Compaction.MaxConcurrentGroups.Value
	if conc <= 0 {
		conc = max(local, 1)
	}
	budget = pol.Compaction.Memory.Value
	if budget <= 0 {
		budget = DefaultCompactionMemory(c.TargetFileSize, conc)
	}
	configured := parseInt64Or(st.Properties["write.parquet.row-group-size-bytes"], 0)
	rowGroup := WriterRowGroupBytes(configured, c.TargetFileSize, max(budget/int64(conc)/4, 1<<20))
	return budget, conc, func(g CompactGroup, p *PartitionStats) int64 {
		if c.Strategy == "binpack" || c.Strategy == "" {
			return GroupMemoryNeed(g.InputBytes, rowGroup, false, 0, 0)
		}
		return GroupMemoryNeed(g.InputBytes, rowGroup, true, ZOrderInflation*g.InputBytes, groupRows(g, p))
	}
}

// groupRows are the rows of a group's files: its partition's records
// (before deletes) in the share of the partition's bytes the group holds;
// 0 without the partition's stats.
func groupRows(g CompactGroup, p *PartitionStats) int64 {
	if p == nil || p.DataBytes <= 0 {
		return 0
	}
	return int64(float64(p.Records) * float64(g.InputBytes) / float64(p.DataBytes))
}

// partitionIndex finds a group's partition stats by spec and partition.
func partitionIndex(st *TableState) func(CompactGroup) *PartitionStats {
	type key struct {
		spec int
		part string
	}
	idx := make(map[key]int, len(st.Partitions))
	for i, p := range st.Partitions {
		idx[key{p.SpecID, p.Partition}] = i
	}
	return func(g CompactGroup) *PartitionStats {
		if i, ok := idx[key{g.SpecID, g.Partition}]; ok {
			return &st.Partitions[i]
		}
		return nil
	}
}

// compactFixed is what a compaction costs beside its groups: the
// executor's reads of the current manifests and its commits. Resolve plans
// the table's files (providers/compaction/approved.go: one walk); each
// commit then walks them three times more, each time the objects read
// already: iceberg-go's RewriteFiles lists the snapshot's data files
// (ReplaceDataFilesWithDataFiles) and scans the parent manifests for the
// files it removes (overwriteFiles), and the commit check
// (reach.CheckCommit) walks the current snapshot and the new one, whose
// manifest list and two new manifests it reads too. The manifest lists'
// bytes are not known to the plan, and not counted. Its CPU time is the
// action's own (CompactionCPUPerAction); in and out are the files the
// commits remove and add (their manifests' entries). first: the action's
// first commit is the plan's first (metadataCommit); the next ones read
// what the one before wrote.
func compactFixed(st *TableState, first bool, commits int, in, out int64) Usage {
	u := manifestWalk(st)
	u.CPUSeconds = CompactionCPUPerAction
	walk := manifestWalk(st)
	for i := range commits {
		u.Add(snapshotCommit(st, first && i == 0, checkedLoads, 0))
		u.Requests.Get += 3*walk.Requests.Get + 3
		u.BytesRead += 3 * walk.BytesRead
		u.FilesRead += 3
	}
	if commits > 0 {
		m := commitManifestBytes(st, commits, in, out)
		u.BytesWritten += m
		u.BytesRead += m // the commit check's read of the new ones
	}
	return u
}

// avgManifestBytes is the current snapshot's average manifest size.
func avgManifestBytes(st *TableState) int64 {
	if st.Manifests.Count == 0 {
		return 0
	}
	return st.Manifests.Bytes / int64(st.Manifests.Count)
}

func estimateCompact(in *planInput, c *CompactAction) *Usage {
	var inFiles, outFiles int64
	for _, g := range c.Groups {
		if g.Engine == "" {
			inFiles += int64(g.InputFiles)
			outFiles += int64(g.EstimatedOutputFiles)
		}
	}
	u := compactFixed(in.st, in.first, c.Commits, inFiles, outFiles)
	budget, conc, need := compactMemory(in.pol, in.st, c)
	partition := partitionIndex(in.st)
	var needs []int64
	for _, g := range c.Groups {
		p := partition(g)
		u.Add(compactGroupUsage(in.st, c.Strategy, g, p))
		u.Add(zorderSample(in.st, c.Strategy, budget, g, p))
		if g.Engine == "" {
			needs = append(needs, need(g, p))
		}
	}
	u.PeakMemoryBytes = MemoryTogether(needs, conc, budget)
	return &u
}

func estimateAgeing(in *planInput, a *PartitionAgeing) *Usage {
	u := manifestWalk(in.st)
	u.CPUSeconds = CompactionCPUPerAction
	target := in.pol.TargetFileSize.Value
	var inFiles, outFiles int64
	for _, g := range a.Groups {
		out := max(1, ceilDiv(g.InputBytes, max(target, 1)))
		if g.InputFiles == 0 {
			out = 0
		}
		inFiles += int64(g.InputFiles)
		outFiles += out
		u.Add(rewriteUsage(in.st, "binpack", int64(g.InputFiles), g.InputBytes, 0, out, 0, 0))
	}
	u.Add(snapshotCommit(in.st, in.first, checkedLoads, commitManifestBytes(in.st, 1, inFiles, outFiles)))
	return &u
}

// manifestListEntry is the bytes a manifest's entry adds to a manifest
// list: the demo's successive lists (icewright demo, 2026-12-07: each
// append one manifest more, 25 and 60 of them) grow by 40-42 bytes each.
const manifestListEntry = 41

// listBytes is the size of a manifest list of entries manifests, from
// the current list's (ManifestStats.ListBytes; 0 when not known).
func listBytes(st *TableState, entries int64) int64 {
	if st.Manifests.ListBytes <= 0 {
		return 0
	}
	return max(st.Manifests.ListBytes+(entries-int64(st.Manifests.Count))*manifestListEntry, 0)
}

// estimateManifests is what apply's rewrite (providers/manifests.Rewrite)
// costs on the manifests it finds: those the plan's commits before it
// leave (manifestsBeforeRewrite), not those of the observation. It loads
// the table (the metadata file, and writes a new one), reads the current
// manifest list three times (its own count, iceberg-go's
// RewriteManifests, the commit check) and each manifest twice (the
// rewrite, the check), the staged list three times (kind.StagedFiles, the
// check, the results' count after the commit) and each new manifest once
// (the check); it writes the new manifests (the live entries: the
// manifests' bytes but those only of removed entries) and their list.
func estimateManifests(in *planInput, m *ManifestsAction) *Usage {
	st := in.st
	k, bytes, live := int64(st.Manifests.Count), st.Manifests.Bytes, st.Manifests.Bytes
	if files := manifestsBeforeRewrite(st, in.compact, in.addedOnMain); len(files) > 0 {
		k, bytes, live = int64(len(files)), totalLength(files), 0
		for _, f := range files {
			if !f.Tombstones {
				live += f.Length
			}
		}
	}
	after := int64(m.EstimatedManifestsAfter)
	u := metadataCommit(st, in.first, catalogLoads, 0)
	if st.CurrentSnapshotID != nil {
		u.Requests.Get += 6 + 2*k + after
		u.FilesRead += 2 + k + after
		u.BytesRead += 3*listBytes(st, k) + 3*listBytes(st, after) + 2*bytes + live
	}
	u.Requests.Put += after + 1 // the manifests and the manifest list
	u.FilesWritten += after + 1
	u.BytesWritten += live + listBytes(st, after)
	u.ScanOpensSaved = max(k-after, 0)
	// The manifests of removed entries it drops; merging others sheds
	// only their headers, not counted.
	u.BytesFreed = bytes - live
	// Decoding each list and manifest read, at the expiry's rate per read;
	// the metadata file parsed and written, at a metadata commit's.
	u.CPUSeconds = MaintenanceCPU.PerRead*float64(u.Requests.Get-catalogLoads) + MetadataCPUPerByte*float64(u.BytesWritten-live-listBytes(st, after)+metadataRead(st, in.first))
	return &u
}

func estimateDangling(in *planInput, d *DanglingDeletes) *Usage {
	u := manifestWalk(in.st)
	avg := avgManifestBytes(in.st)
	u.Add(snapshotCommit(in.st, in.first, checkedLoads, 2*avg))
	rewritten := int64(d.ManifestsRewritten)
	u.Requests.Put += rewritten
	u.FilesWritten += rewritten
	u.BytesWritten += rewritten * avg
	u.BytesFreed = d.DeleteBytes
	u.ScanOpensSaved = int64(d.DeleteFiles) + int64(d.ManifestsDropped)
	return &u
}

// snapshotsWalk is reading every snapshot's manifest list and the current
// manifests: how expiry and the orphan sweep's referenced set find what
// the table reaches (a manifest only older snapshots list is not counted).
// The estimates take it where the plan's walk recorded no reads
// (ManifestReads).
func snapshotsWalk(st *TableState) Usage {
	u := manifestWalk(st)
	n := int64(len(st.Snapshots))
	if st.CurrentSnapshotID != nil {
		n-- // manifestWalk read the current one's
	}
	u.Requests.Get += 1 + max(n, 0) // the metadata file, the other lists
	u.FilesRead += 1 + max(n, 0)
	return u
}

// readsUsage is reading r: a GET per manifest list and per manifest.
func readsUsage(r ManifestReads) Usage {
	return Usage{Requests: Requests{Get: r.Lists + r.Manifests}, FilesRead: r.Lists + r.Manifests, BytesRead: r.ListBytes + r.ManifestBytes}
}

// MaintenanceCPU is the CPU time (user + system) of apply's expiry and
// orphan sweep: per manifest list or manifest read (iceberg-go's reader:
// decoding is most of it), per file listed (the sweep's listing, its sort
// and merge with the referenced set) and per file deleted. Measured from
// `bash bench/accuracy.sh` on 2026-12-07 (the shared 2-core build machine,
// Linux x86-64, Go 1.26.8, load 4-7, -parallelism=1 so each action's CPU
// time is its own; actual cpu_seconds):
//
//	case     action  reads  listed  deleted  CPU-s
//	events   expiry  253    -       50       0.156, 0.16
//	events   orphans 306    ~460    20       0.174, 0.19
//	orphans  orphans 80     22,041  2,000    0.342, 0.47
//
// PerRead from expiry (0.16 s / 253 reads, its 50 deletes a small part);
// PerListed and PerDeleted from the orphans table less its reads
// (0.34-0.47 s less 0.05 s over 22,041 files listed and 2,000 deleted,
// split as the local walk (a stat per file) and a delete each cost: the
// two cannot be told apart on this table, so PerDeleted is set to
// PerListed). The run-to-run spread of this machine is up to 1.7x
// (docs/benchmarks.md), inside the ±50% target only roughly.
var MaintenanceCPU = struct {
	PerRead, PerListed, PerDeleted float64 // CPU-seconds
}{PerRead: 6.2e-4, PerListed: 1.5e-5, PerDeleted: 1.5e-5}

// expireUsage is what apply's expiry (providers/expiry.Expire) costs: its
// commit, the re-read of the table the commit made (checkCommitted: the
// metadata file), and releasedFiles' two walks with iceberg-go's reader:
// the expired snapshots' lists and
// the manifests they list (a list's size, the bytes it frees, is its
// opened file's: no request); then every kept snapshot's list and the
// manifests they list, the plan's own commits' new ones included (a list
// and two manifests each, snapshotCommit). Without the plan's reads
// (r nil), every list and the current manifests (snapshotsWalk).
//
// first: no commit of the plan runs before it (metadataCommit).
func expireUsage(st *TableState, first bool, e *ExpireAction, r *ExpiryReads, commits int) Usage {
	// The metadata file it loads has grown by the plan's commits before it
	// (a snapshot, its snapshot-log and metadata-log entries each, as
	// snapshotCommit counts them); the new one loses the expired
	// snapshots' entries (each taken at the current one's size) and their
	// snapshot-log entries.
	entry := st.SnapshotBytes + snapshotLogEntry
	grown := int64(commits) * (entry + metadataLogEntry + int64(len(st.MetadataLocation)))
	u := metadataCommit(st, first, catalogLoads, grown-int64(len(e.SnapshotIDs))*entry)
	if st.MetadataBytes > 0 {
		u.BytesRead += catalogLoads * grown
	}
	u.Requests.Get++              // the re-read after the commit
	u.FilesRead++                 // the new metadata file
	u.BytesRead += u.BytesWritten // of that new file
	if r == nil {
		u.Add(snapshotsWalk(st))
	} else {
		u.Add(readsUsage(r.Expired))
		u.Add(readsUsage(*keptReads(st, r, commits)))
		u.FilesRead -= r.Expired.Manifests + r.Kept.Manifests - r.Manifests // each once
		u.CPUSeconds = MaintenanceCPU.PerRead*float64(r.Expired.Lists+r.Expired.Manifests+r.Kept.Lists+r.Kept.Manifests) +
			MaintenanceCPU.PerDeleted*float64(e.FilesToDelete)
	}
	u.Requests.Add(deleteRequests(st, e.FilesToDelete))
	u.FilesDeleted = e.FilesToDelete
	u.BytesFreed = e.BytesToDelete
	return u
}

// keptReads is what the snapshots an expiry keeps reach, with the plan's
// commits before it: a manifest list and two manifests each (of the
// table's average sizes), as snapshotCommit writes them.
func keptReads(st *TableState, r *ExpiryReads, commits int) *ManifestReads {
	k := r.Kept
	if commits > 0 {
		lists := r.Expired.Lists + r.Kept.Lists
		if lists > 0 {
			k.ListBytes += int64(commits) * (r.Expired.ListBytes + r.Kept.ListBytes) / lists
		}
		if st.Manifests.Count > 0 {
			k.ManifestBytes += int64(2*commits) * st.Manifests.Bytes / int64(st.Manifests.Count)
		}
		k.Lists += int64(commits)
		k.Manifests += int64(2 * commits)
	}
	return &k
}

func estimateExpire(in *planInput, e *ExpireAction) *Usage {
	u := expireUsage(in.st, in.first, e, nil, 0)
	return &u
}

func estimateOrphans(in *planInput, o *OrphansAction) *Usage {
	var r *ManifestReads
	if in.st.Orphans != nil {
		r = in.st.Orphans.Reads
	}
	u := estimateOrphansWith(in.st, o, r, metadataRead(in.st, in.first))
	return &u
}

// estimateOrphansWith is what apply's sweep (providers/orphans.Remove)
// costs when the table's snapshots reach r (nil: not recorded; then
// snapshotsWalk) and its metadata file is metadataBytes long: the planned paths checked (on S3 from OrphanRelistAbove
// a re-listing of the roots; else a stat each, which on an object store
// opens the file, a GET, and on local storage is not a request), the
// re-check's scan (a listing of the roots, as many LIST requests as the
// plan's listing sent, and its referenced set: the table loaded and
// walked with iceberg-go's reader), the removal's referenced set (the
// table loaded and walked again), the deletions. Each object read counts
// once in files read (Usage).
func estimateOrphansWith(st *TableState, o *OrphansAction, r *ManifestReads, metadataBytes int64) Usage {
	var listed, lists int64
	if st.Orphans != nil {
		listed = st.Orphans.ListedFiles
		lists = st.Orphans.ListRequests
	}
	if lists == 0 {
		lists = listPages(listed)
	}
	n := int64(o.Count)
	var u Usage
	if n > 0 {
		switch storage := storageOf(st); {
		case storage == "s3" && n >= OrphanRelistAbove:
			u.Requests.List += lists // objlist re-lists S3 roots only
		case storage != "none":
			u.Requests.Get += n
			u.FilesRead += n
		}
		u.Requests.List += lists
		if storageOf(st) != "none" && st.Orphans != nil {
			// The re-check's look for quarantine runs (scanQuarantine):
			// the directory's stat through the store's file-system view,
			// a HEAD and a LIST, and each run's manifest. On local storage
			// a stat, no request.
			u.Requests.Head++
			u.Requests.List++
			u.Requests.Get += int64(len(st.Orphans.Quarantine))
			u.FilesRead += int64(len(st.Orphans.Quarantine))
		}
		if r == nil {
			u.Add(snapshotsWalk(st))
			u.Add(snapshotsWalk(st))
		} else {
			w := readsUsage(*r)
			u.Add(w)
			u.Add(w)
			u.FilesRead -= w.FilesRead // each object once
			u.Requests.Get += 2        // the metadata file, loaded twice
			u.FilesRead++
			u.BytesRead += 2 * metadataBytes
			u.CPUSeconds = MaintenanceCPU.PerRead*float64(2*(r.Lists+r.Manifests)) + MaintenanceCPU.PerListed*float64(listed)
		}
		if o.Quarantine != "" {
			// Each file copied into the run and its original deleted; the
			// run's manifest written. Freed when the run is purged.
			u.Requests.Put += n + 1
			u.FilesWritten += n + 1
			u.Requests.Add(deleteRequests(st, n))
		} else {
			u.Requests.Add(deleteRequests(st, n))
			u.FilesDeleted += n
			u.BytesFreed += o.Bytes
			u.CPUSeconds += MaintenanceCPU.PerDeleted * float64(n)
		}
	}
	for _, r := range o.PurgeRuns {
		// The run's manifest read, its files and the manifest deleted.
		u.Requests.Get++
		u.FilesRead++
		u.Requests.Add(deleteRequests(st, r.Files+1))
		u.FilesDeleted += r.Files
		u.BytesFreed += r.Bytes
	}
	return u
}
