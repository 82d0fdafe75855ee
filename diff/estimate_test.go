package diff

import (
	"fmt"
	"math"
	"testing"

	"github.com/icewright/icewright/config"
)

// compactState is an S3 table of one partition with ten 1 MiB candidates,
// three columns and two manifests of 10,000 bytes.
func compactState() *TableState {
	st := linear(1 * day)
	st.Location = "s3://lake/wh/db/t"
	st.Schema = []Column{{ID: 1, Name: "a", Type: "long"}, {ID: 2, Name: "b", Type: "string"}, {ID: 3, Name: "c", Type: "double"}}
	st.Manifests = ManifestStats{Count: 2, DataCount: 2, Bytes: 20000}
	st.MetadataLocation = "s3://lake/wh/db/t/metadata/00001-a.metadata.json"
	st.MetadataBytes, st.SnapshotBytes = 50000, 800
	sizes := make([]int64, 10)
	for i := range sizes {
		sizes[i] = 1 << 20
	}
	st.Partitions = []PartitionStats{{SpecID: 0, Partition: "day=1", DataFiles: 10, DataBytes: 10 << 20, Records: 100000, CandidateSizes: sizes}}
	st.Files = FileStats{DataFiles: 10, DataBytes: 10 << 20, Records: 100000}
	return st
}

func compactPolicy() *config.Effective {
	pol := fullPolicy()
	pol.TargetFileSize = set(int64(64<<20), 3)
	pol.Compaction.MinFileSize = def(int64(48 << 20))
	pol.Compaction.MaxFileSize = def(int64(115 << 20))
	pol.SnapshotRetention.Declared = false
	pol.OrphanFiles.Declared = false
	pol.Manifests.Declared = false
	return pol
}

// The compaction's estimate counts what the executor does: the current
// manifests read by Resolve and three times more by the commit (iceberg-go's
// RewriteFiles twice, the commit check once, with the new manifest list and
// manifests), each input file opened with a GET for its footer and one
// per column chunk, the output written (the inputs' values and one file's
// overhead), the commit (the metadata file read twice and written, grown
// by a snapshot, and two manifests: the removed entries' and the added),
// the CPU from the measured rates (the action's own and per file and
// byte), and the memory by the executor's own rule.
func TestEstimateCompact(t *testing.T) {
	st := compactState()
	tp := PlanTable(compactPolicy(), st, testNow)
	a := findAction(t, tp, Compact)
	u := a.Estimate
	if u == nil {
		t.Fatal("no estimate")
	}
	rate := CompactionCPU["binpack"]
	overhead := ParquetFileBytes.OverheadFixed + 3*ParquetFileBytes.OverheadPerColumn
	out := int64(float64(10<<20-10*overhead)*rate.OutputRatio) + overhead
	grown := st.SnapshotBytes + snapshotLogEntry + metadataLogEntry + int64(len(st.MetadataLocation))
	// The commit's two manifests: each the current ones' header (10,000
	// bytes less their 5 entries), one with the 10 inputs, one the output.
	entry := int64(ManifestEntryBytesPerColumn * 3)
	manifests := 2*(10000-5*entry) + 11*entry
	want := Usage{
		// manifest list + 2 manifests; 10 files x (open, footer length,
		// footer, 3 chunks); the commit: the metadata file twice, the
		// manifests three times, the new list and its 2 manifests.
		Requests: Requests{Get: 3 + 10*6 + 2 + 3*3 + 3, Put: 1 + 3 + 1},
		// 10 MiB and the manifests; the commit's reads.
		BytesRead: 10<<20 + 20000 + 2*st.MetadataBytes + 3*20000 + manifests,
		// the output, its commit's two manifests and metadata file.
		BytesWritten:   out + manifests + st.MetadataBytes + grown,
		FilesRead:      3 + 10 + 1 + 3,
		FilesWritten:   1 + 1 + 3,
		BytesFreed:     10<<20 - out,
		ScanOpensSaved: 9,
		CPUSeconds:     CompactionCPUPerAction + rate.PerByte*float64(10<<20) + rate.PerFile*10,
	}
	rowGroup := WriterRowGroupBytes(0, 64<<20, DefaultCompactionMemory(64<<20, 1)/4)
	want.PeakMemoryBytes = GroupMemoryNeed(10<<20, rowGroup, false, 0, 0)
	if math.Abs(u.CPUSeconds-want.CPUSeconds) > 1e-9 {
		t.Errorf("cpu %v, want %v", u.CPUSeconds, want.CPUSeconds)
	}
	u.CPUSeconds = want.CPUSeconds
	if *u != want {
		t.Errorf("estimate\n %+v\nwant\n %+v", *u, want)
	}

	// On an identity-partitioned spec the engine reads each footer first
	// (splitByConstants): an open and two reads more per file.
	ident := compactState()
	ident.Specs = []PartitionSpec{{ID: 0, Fields: []string{"identity(b)"}}}
	g := CompactGroup{SpecID: 0, Partition: "day=1", InputFiles: 10, InputBytes: 10 << 20, EstimatedOutputFiles: 1}
	plain, withFooters := compactGroupUsage(st, "binpack", g, nil), compactGroupUsage(ident, "binpack", g, nil)
	footer := ParquetFileBytes.FooterFixed + 3*ParquetFileBytes.FooterPerColumn
	if d := withFooters.Requests.Get - plain.Requests.Get; d != 30 {
		t.Errorf("identity spec: %d GETs more, want 30", d)
	}
	if d := withFooters.BytesRead - plain.BytesRead; d != 10*(8+footer) {
		t.Errorf("identity spec: %d bytes more read, want %d", d, 10*(8+footer))
	}
}

// A metadata-only commit reads the metadata file once (the catalog's
// load) and writes it again, grown by its metadata-log entry unless the
// log is full; without the size (a state built by hand) only its
// requests count.
func TestEstimateMetadataCommit(t *testing.T) {
	st := compactState()
	u := metadataCommit(st, true, catalogLoads, 0)
	if u.BytesRead != 50000 || u.BytesWritten != 50000+metadataLogEntry+int64(len(st.MetadataLocation)) || u.Requests.Get != 1 || u.Requests.Put != 1 {
		t.Errorf("metadata commit %+v", u)
	}
	st.Properties = map[string]string{"write.metadata.previous-versions-max": "0"}
	if u := metadataCommit(st, true, catalogLoads, 0); u.BytesWritten != 50000 {
		t.Errorf("full metadata log: %d bytes written, want 50000", u.BytesWritten)
	}
	st.MetadataBytes = 0
	if u := metadataCommit(st, true, checkedLoads, 0); u.BytesRead != 0 || u.BytesWritten != 0 || u.Requests.Get != 2 {
		t.Errorf("no size known: %+v", u)
	}
}

// The plan's first commit reads the current metadata file as stored (the
// observation's load counted it); a later one reads what iceberg-go wrote.
// A state without the stored size reads iceberg-go's size throughout.
func TestEstimateMetadataReadAsStored(t *testing.T) {
	st := compactState()
	st.MetadataFileBytes = 64000 // indented by another writer
	if u := metadataCommit(st, true, checkedLoads, 0); u.BytesRead != 2*64000 || u.BytesWritten != 50000+metadataLogEntry+int64(len(st.MetadataLocation)) {
		t.Errorf("first commit: read %d written %d, want read %d and iceberg-go's size written", u.BytesRead, u.BytesWritten, 2*64000)
	}
	if u := metadataCommit(st, false, checkedLoads, 0); u.BytesRead != 2*50000 {
		t.Errorf("later commit: read %d, want %d", u.BytesRead, 2*50000)
	}
	// A compaction of two commits: the first reads the stored file, the
	// second what the first wrote.
	one, two := compactFixed(st, true, 2, 0, 0), compactFixed(st, false, 2, 0, 0)
	if d := one.BytesRead - two.BytesRead; d != checkedLoads*(64000-50000) {
		t.Errorf("two commits, the first the plan's: %d bytes more read, want %d", d, checkedLoads*(64000-50000))
	}
	st.MetadataFileBytes = 0
	if u := metadataCommit(st, true, catalogLoads, 0); u.BytesRead != 50000 {
		t.Errorf("no stored size: read %d, want %d", u.BytesRead, 50000)
	}
}

// In a plan, only the first action's commit reads the stored file: the
// properties update here, not the compaction after it; a compaction alone
// reads it.
func TestPlanReadsStoredMetadataFirst(t *testing.T) {
	st := compactState()
	st.MetadataFileBytes = 64000
	pol := compactPolicy()
	alone := findAction(t, PlanTable(pol, st, testNow), Compact).Estimate
	pol.DerivedProperties = map[string]config.Setting[string]{"write.parquet.compression-codec": set("zstd", 3)}
	tp := PlanTable(pol, st, testNow)
	props, after := findAction(t, tp, UpdateProperties).Estimate, findAction(t, tp, Compact).Estimate
	if props.BytesRead != 64000 {
		t.Errorf("update_properties read %d, want the stored file's 64000", props.BytesRead)
	}
	if d := alone.BytesRead - after.BytesRead; d != checkedLoads*(64000-50000) {
		t.Errorf("compaction alone reads %d bytes more than after the properties commit, want %d", d, checkedLoads*(64000-50000))
	}
}

// A group an engine rewrites is the engine's work: only its saving counts.
func TestEstimateDelegatedGroupCountsSavingOnly(t *testing.T) {
	st := compactState()
	g := CompactGroup{SpecID: 0, Partition: "day=1", InputFiles: 10, InputBytes: 10 << 20, EstimatedOutputFiles: 1, Engine: "spark"}
	u := compactGroupUsage(st, "binpack", g, &st.Partitions[0])
	if u.Requests.Total() != 0 || u.BytesRead != 0 || u.CPUSeconds != 0 || u.ScanOpensSaved != 9 {
		t.Errorf("delegated group usage %+v", u)
	}
}

// A large output is uploaded in parts (with the upload's start and
// completion); a small one is one PUT.
func TestPutAndDeleteRequests(t *testing.T) {
	for size, want := range map[int64]int64{0: 1, 1 << 20: 1, MultipartThreshold - 1: 1, MultipartThreshold: 4, 512 << 20: 66} {
		if got := putRequests(size); got != want {
			t.Errorf("putRequests(%d) = %d, want %d", size, got, want)
		}
	}
	for _, tc := range []struct {
		location string
		batch    int // the catalog's icewright.delete-batch-size
		n        int64
		want     Requests
	}{
		{"s3://b/t", 0, 2500, Requests{BatchDelete: 3}},
		{"gs://b/t", 0, 2500, Requests{Delete: 2500}},
		{"abfss://c@a.dfs.core.windows.net/t", 0, 2500, Requests{BatchDelete: 10}},
		{"file:///w/t", 0, 2500, Requests{Delete: 2500}},
		{"s3://b/t", 0, 0, Requests{}},
		// The catalog's batch size, as objdel sends the batches: smaller
		// than the store's maximum, it counts; larger, the store's does.
		{"s3://b/t", 10, 25, Requests{BatchDelete: 3}},
		{"s3://b/t", 5000, 2500, Requests{BatchDelete: 3}},
		{"gs://b/t", 10, 25, Requests{Delete: 25}},
	} {
		st := &TableState{Location: tc.location, DeleteBatch: tc.batch}
		if got := deleteRequests(st, tc.n); got != tc.want {
			t.Errorf("deleteRequests(%s, batch %d, %d) = %+v, want %+v", tc.location, tc.batch, tc.n, got, tc.want)
		}
	}
}

// Expiry's deletions are counted once providers said what it frees.
func TestEstimateExpiryFreed(t *testing.T) {
	pol := fullPolicy()
	pol.Compaction.Declared, pol.OrphanFiles.Declared, pol.Manifests.Declared = false, false, false
	st := linear(10*day, 9*day, 1*day)
	st.Location = "s3://lake/wh/db/t"
	tp := PlanTable(pol, st, testNow)
	a := findAction(t, tp, ExpireSnapshots)
	if a.Estimate == nil || a.Estimate.FilesDeleted != 0 || a.Estimate.Requests.BatchDelete != 0 {
		t.Fatalf("estimate before the figures: %+v", a.Estimate)
	}
	before := a.Estimate.Requests
	if err := tp.EstimateExpiry(st, func([]int64, []CompactGroup) (ExpiryFreed, error) {
		return ExpiryFreed{Files: 2500, Bytes: 7 << 30}, nil
	}); err != nil {
		t.Fatal(err)
	}
	u := findAction(t, tp, ExpireSnapshots).Estimate
	want := before
	want.BatchDelete = 3
	if u.FilesDeleted != 2500 || u.BytesFreed != 7<<30 || u.Requests != want {
		t.Errorf("estimate after the figures: %+v", u)
	}
	// Asked again (a second estimate), the deletions are not counted twice.
	_ = tp.EstimateExpiry(st, func([]int64, []CompactGroup) (ExpiryFreed, error) {
		return ExpiryFreed{Files: 1000, Bytes: 1}, nil
	})
	if u := findAction(t, tp, ExpireSnapshots).Estimate; u.Requests.BatchDelete != 1 || u.FilesDeleted != 1000 {
		t.Errorf("estimate after new figures: %+v", u)
	}
}

// Orphans deleted free their bytes at once; quarantined ones are copied
// and freed only when their run is purged, which a purge run counts.
func TestEstimateOrphans(t *testing.T) {
	st := linear(1 * day)
	st.Location = "s3://lake/wh/db/t"
	st.Orphans = &OrphanScan{ListedFiles: 2500}
	o := &OrphansAction{Count: 3, Bytes: 300, Paths: []string{"s3://lake/wh/db/t/data/a", "s3://lake/wh/db/t/data/b", "s3://lake/wh/db/t/data/c"}}
	in := &planInput{pol: fullPolicy(), st: st}
	u := estimateOrphans(in, o)
	walk := snapshotsWalk(st)
	// Below OrphanRelistAbove each planned path is opened (a GET on S3);
	// the re-check lists the roots once.
	// The quarantine directory's stat is a HEAD and a LIST.
	if u.FilesDeleted != 3 || u.BytesFreed != 300 || u.Requests.BatchDelete != 1 || u.Requests.Head != 1 || u.Requests.List != 3+1 || u.Requests.Get != 2*walk.Requests.Get+3 {
		t.Errorf("delete estimate %+v", u)
	}
	// With the scan's reads and listing recorded: the re-check's and the
	// removal's walks read each list and manifest, each object counted once
	// in files read; the listing costs what the plan's did.
	st.Orphans.Reads = &ManifestReads{Lists: 20, ListBytes: 2000, Manifests: 30, ManifestBytes: 30000}
	st.Orphans.ListRequests = 7
	u = estimateOrphans(in, o)
	if u.Requests.Get != 2*50+2+3 || u.FilesRead != 50+1+3 || u.BytesRead != 2*32000 || u.Requests.List != 7+1 || u.CPUSeconds <= 0 {
		t.Errorf("estimate with the scan's reads %+v", u)
	}
	// Local storage: a stat per path is no request.
	st.Location = "file:///wh/db/t"
	if u = estimateOrphans(in, o); u.Requests.Get != 2*50+2 || u.Requests.Delete != 3 || u.Requests.Head != 0 || u.Requests.List != 7 {
		t.Errorf("local estimate %+v", u)
	}
	st.Location = "s3://lake/wh/db/t"
	st.Orphans.Reads, st.Orphans.ListRequests = nil, 0
	o.Quarantine = "7d"
	o.PurgeRuns = []PurgeRun{{RunID: "r1", Files: 10, Bytes: 1000}}
	u = estimateOrphans(in, o)
	if u.FilesDeleted != 10 || u.BytesFreed != 1000 || u.Requests.Put != 4 || u.Requests.BatchDelete != 2 {
		t.Errorf("quarantine estimate %+v", u)
	}
}

// Every planned action of a full policy carries an estimate.
func TestPlanEstimatesEveryAction(t *testing.T) {
	st := compactState()
	st.Snapshots = linear(10*day, 9*day, 1*day).Snapshots
	st.CurrentSnapshotID, st.Refs = ptr(int64(3)), []Ref{branch("main", 3)}
	pol := compactPolicy()
	pol.SnapshotRetention.Declared = true
	pol.Manifests.Declared = true
	pol.Manifests.MaxCount = set(1, 31)
	tp := PlanTable(pol, st, testNow)
	if len(tp.Actions) < 3 {
		t.Fatalf("actions %v", actionTypes(tp))
	}
	for _, a := range tp.Actions {
		if a.Estimate == nil {
			t.Errorf("%s has no estimate", a.Type)
		}
	}
}

// update_properties and replace_sort_order land in one commit: it is
// counted once.
func TestEstimateMetadataBatchCountsOneCommit(t *testing.T) {
	pol := emptyPolicy()
	pol.DerivedProperties = map[string]config.Setting[string]{"write.parquet.compression-codec": set("zstd", 40)}
	pol.SortOrder = set([]config.SortField{{Column: "a", Transform: "identity", NullsFirst: true}}, 4)
	st := compactState()
	st.Schema[0].SortTransforms = []string{"identity"}
	tp := PlanTable(pol, st, testNow)
	if got := actionTypes(tp); len(got) != 2 || got[0] != UpdateProperties || got[1] != ReplaceSortOrder {
		t.Fatalf("actions %v", got)
	}
	if u, _ := tp.Total(); u.Requests != (Requests{Get: 1, Put: 1}) {
		t.Errorf("one metadata commit, got %+v", u.Requests)
	}
}

// A z-order group whose rows may not fit a third of the memory budget is
// read twice (sampled first, as the executor's groupKeyer does); one that
// fits, once.
func TestEstimateZOrderSampleRead(t *testing.T) {
	st := compactState()
	g := CompactGroup{SpecID: 0, Partition: "day=1", InputFiles: 10, InputBytes: 10 << 20, EstimatedOutputFiles: 1}
	once := compactGroupUsage(st, "zorder", g, nil)
	if u := zorderSample(st, "zorder", 3*ZOrderInflation*(10<<20), g, nil); u != (Usage{}) {
		t.Errorf("a group that fits is sampled: %+v", u)
	}
	u := zorderSample(st, "zorder", 3*ZOrderInflation*(10<<20)-3, g, nil)
	if u.BytesRead != once.BytesRead || u.Requests.Get != once.Requests.Get || u.FilesRead != 0 {
		t.Errorf("sample read %+v, want the group's read again (%d bytes, %d GETs) and no file more", u, once.BytesRead, once.Requests.Get)
	}
	if u := zorderSample(st, "sort", 1, g, nil); u != (Usage{}) {
		t.Errorf("a sort group is sampled: %+v", u)
	}
}

// With the plan's reads, expiry is estimated as releasedFiles reads: the
// expired side and the kept side, each object once in
// files read; an orphan sweep after it walks what is kept.
func TestEstimateExpiryReads(t *testing.T) {
	st := linear(30*day, 20*day, 10*day, 1*day)
	st.Location = "file:///wh/db/t"
	st.Orphans = &OrphanScan{ListedFiles: 100, ListRequests: 5, Reads: &ManifestReads{Lists: 99, Manifests: 99}}
	tp := TablePlan{Actions: []Action{
		{Type: ExpireSnapshots, Expire: &ExpireAction{SnapshotIDs: []int64{1, 2}}, Estimate: &Usage{}},
		{Type: RemoveOrphanFiles, Orphans: &OrphansAction{Count: 3, Bytes: 30}, Estimate: &Usage{}},
	}}
	reads := &ExpiryReads{
		Expired:   ManifestReads{Lists: 2, ListBytes: 200, Manifests: 3, ManifestBytes: 3000},
		Kept:      ManifestReads{Lists: 2, ListBytes: 200, Manifests: 4, ManifestBytes: 4000},
		Manifests: 5,
	}
	if err := tp.EstimateExpiry(st, func([]int64, []CompactGroup) (ExpiryFreed, error) {
		return ExpiryFreed{Files: 4, Bytes: 400, Reads: reads}, nil
	}); err != nil {
		t.Fatal(err)
	}
	u := findAction(t, tp, ExpireSnapshots).Estimate
	// The commit's load and the re-read, 4 lists, 3 + 4 manifest reads;
	// the lists' sizes come with their reads (no HEAD).
	if u.Requests.Get != 2+4+7 || u.Requests.Head != 0 || u.FilesRead != 2+4+5 || u.BytesRead != 7400 || u.Requests.Delete != 4 || u.CPUSeconds <= 0 {
		t.Errorf("expiry estimate with reads %+v", u)
	}
	ou := findAction(t, tp, RemoveOrphanFiles).Estimate
	if ou.Requests.Get != 2*(2+4)+2 || ou.FilesRead != 2+4+1 || ou.BytesRead != 2*4200 || ou.Requests.List != 5 {
		t.Errorf("sweep after the expiry %+v", ou)
	}
}

// A rewrite's output holds the inputs' values and each output file's
// overhead; inputs so small that their bytes less their overhead leave
// less than MinValueBytes a value (the demo's files of 10 and 20 rows)
// are taken at that floor.
func TestRewrittenBytesValueFloor(t *testing.T) {
	const cols = 5
	overhead := fileOverhead(cols)
	// 400 files of 40 KB and 1,000 rows each: their values, less overhead.
	big := rewrittenBytes(1.0, 400, 400*40000, 400*1000, 4, cols)
	if want := 400*(40000-overhead) + 4*overhead; big != want {
		t.Errorf("large files: %d, want %d", big, want)
	}
	// 25 files of 2,236 B and 20 rows: all overhead but for the floor.
	small := rewrittenBytes(1.03, 25, 25*2236, 500, 1, cols)
	if want := int64(1.03*MinValueBytes*500*cols) + overhead; small != want {
		t.Errorf("small files: %d, want %d", small, want)
	}
	// Without the rows (partition ageing), no floor.
	if got := rewrittenBytes(1.0, 25, 25*2236, 0, 1, cols); got != overhead {
		t.Errorf("small files, rows not known: %d, want %d", got, overhead)
	}
}

// The manifests a rewrite's commit writes: per commit one of the added
// and one of the removed entries, each the current manifests' header (their
// average less their entries) and its entries.
func TestCommitManifestBytes(t *testing.T) {
	st := compactState() // 2 manifests of 10,000 B, 10 data files, 3 columns
	entry := int64(ManifestEntryBytesPerColumn * 3)
	header := 10000 - 5*entry
	if got, want := commitManifestBytes(st, 1, 240, 4), 2*header+244*entry; got != want {
		t.Errorf("one commit: %d, want %d", got, want)
	}
	if got, want := commitManifestBytes(st, 2, 240, 4), 4*header+244*entry; got != want {
		t.Errorf("two commits: %d, want %d", got, want)
	}
	st.Manifests = ManifestStats{}
	if got := commitManifestBytes(st, 1, 240, 4); got != 0 {
		t.Errorf("no manifests known: %d", got)
	}
}

// rewrite_manifests after the plan's compaction is estimated on the
// manifests that compaction's commit leaves, not on those before it:
// here 25 manifests of one file each, every file compacted, leave the
// commit's manifest of its output and its manifest of the removed
// entries. The rewrite reads the metadata file, the current list three
// times and the staged one three times, each manifest it finds twice and
// the new one once.
func TestEstimateManifestsAfterCompaction(t *testing.T) {
	const n = 25
	st := linear(1 * day)
	st.MetadataBytes = 22000
	var files []ManifestInfo
	var paths []string
	var at []int
	var sizes []int64
	for i := range n {
		files = append(files, ManifestInfo{SpecID: 0, Data: true, Length: 4700, LiveFiles: 1})
		paths = append(paths, fmt.Sprintf("f%d.parquet", i))
		at = append(at, i)
		sizes = append(sizes, 2000)
	}
	st.Manifests = ManifestStats{Count: n, DataCount: n, Bytes: n * 4700, ListBytes: 3200, Files: files}
	st.Partitions = []PartitionStats{{DataFiles: n, DataBytes: n * 2000, CandidateSizes: sizes, CandidateBytes: n * 2000,
		CandidatePaths: paths, CandidateManifests: at}}
	pol := compactPolicy()
	pol.Manifests.Declared = true
	pol.Manifests.MaxCount = set(10, 31)

	tp := PlanTable(pol, st, testNow)
	c := findAction(t, tp, Compact).Compact
	if left := manifestsAfterCompaction(st, c); len(left) != 2 {
		t.Fatalf("the compaction leaves %d manifests, want 2: %+v", len(left), left)
	}
	m := findAction(t, tp, RewriteManifests)
	if m.Manifests.EstimatedManifestsAfter != 1 {
		t.Errorf("after the rewrite: %d manifests, want 1", m.Manifests.EstimatedManifestsAfter)
	}
	u := m.Estimate
	if u.Requests.Get != 1+6+2*2+1 || u.FilesRead != 1+2+2+1 || u.Requests.Put != 1+1+1 || u.ScanOpensSaved != 1 {
		t.Errorf("after the compaction: %d GETs, %d files read, %d PUTs, %d opens saved; want 12, 6, 3, 1", u.Requests.Get, u.FilesRead, u.Requests.Put, u.ScanOpensSaved)
	}
	// The output's manifest read twice and once rewritten, the removed
	// entries' manifest (of 25 entries, as the compaction's commit
	// writes it: manifestBytes) read twice and dropped; the lists at the current one's size less the entries
	// they lack.
	tomb := manifestBytes(st, n)
	wantRead := 22000 + 3*(3200-23*manifestListEntry) + 3*(3200-24*manifestListEntry) + 2*(4700+tomb) + 4700
	if u.BytesRead != int64(wantRead) || u.BytesFreed != int64(tomb) {
		t.Errorf("bytes read %d, freed %d; want %d, %d", u.BytesRead, u.BytesFreed, wantRead, tomb)
	}

	// Without the compaction, the 25 manifests are what it finds.
	pol.Compaction.Declared = false
	alone := findAction(t, PlanTable(pol, st, testNow), RewriteManifests).Estimate
	if alone.Requests.Get != 1+6+2*n+1 || alone.ScanOpensSaved != n-1 {
		t.Errorf("without a compaction: %d GETs, %d opens saved; want %d, %d", alone.Requests.Get, alone.ScanOpensSaved, 1+6+2*n+1, n-1)
	}
}
