package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icewright/icewright/config"
	"github.com/icewright/icewright/diff"
	"github.com/icewright/icewright/internal/lakehouse"
	"github.com/icewright/icewright/internal/testenv"
	"github.com/icewright/icewright/providers/testkit"
)

// The seeds TestCompactionRandom runs: CI runs the first few; a longer run
// is `-random.seeds=200`, and a failure prints the `-random.seed=N` that
// repeats it alone.
var (
	randomSeed  = flag.Uint64("random.seed", 0, "TestCompactionRandom: run only this seed")
	randomSeeds = flag.Int("random.seeds", 10, "TestCompactionRandom: run seeds 1..N")
)

// TestCompactionRandom builds random partitioned tables and compacts them
// under random policies, checking each apply against a model of the live
// file set and of the rows.
//
// A table: day partitions, each append writing rows of every day into one
// manifest (as Spark does), optionally merged manifests (EXISTING
// entries beside ADDED ones with inherited sequence numbers), position
// deletes (v2) or deletion vectors (v3) and equality deletes in some
// partitions only, a partition evolution, and snapshot ids of either sign
// (renumbered in a copy of the table once its history is written:
// iceberg-go only writes positive ones), and in some tables a page row
// limit of a few rows (the compaction's pages end at it). A policy: binpack, sort or zorder, a random min_input_files, maybe
// a where and a manifest rewrite.
//
// The model: after each apply the live data and delete files are the old
// ones minus the compacted groups' inputs (every data file of each planned
// group's partition: all files here are far below the target size) and
// minus retired deletes (only deletes that applied to inputs alone may go;
// deletion vectors and position deletes of inputs must go), plus outputs
// in the groups' partitions; or exactly the old ones when compaction was
// refused or not planned. The rows read by iceberg-go and by DuckDB equal
// the rows before, and their count is the model's.
func TestCompactionRandom(t *testing.T) {
	duck := optionalDuckDB(t)
	seeds := []uint64{}
	if *randomSeed != 0 {
		seeds = append(seeds, *randomSeed)
	} else {
		for s := range *randomSeeds {
			seeds = append(seeds, uint64(s+1))
		}
	}
	tally := randomTally{seen: map[string]int{}}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Errorf("reproduce: go test ./internal/e2e -run 'TestCompactionRandom' -random.seed=%d -v", seed)
				}
			}()
			compactionTrial(t, seed, duck, &tally)
		})
	}
	t.Logf("%d rounds: %d compacted, %d refused, %d with a negative head; tables and policies with: %v", tally.rounds, tally.compacted, tally.refused, tally.negativeHead, tally.seen)
	// The default seeds must reach every dimension the test claims.
	if !t.Failed() && *randomSeed == 0 && len(seeds) >= 10 {
		for _, f := range randomFeatures {
			if tally.seen[f] == 0 {
				t.Errorf("no trial of seeds 1..%d has %s: the generator lost a dimension", len(seeds), f)
			}
		}
	}
	// Rounds that compact nothing prove nothing: at least a third of
	// those on a positive head must compact.
	if !t.Failed() && len(seeds) > 1 && tally.compacted*3 < tally.rounds-tally.negativeHead {
		t.Fatalf("only %d of %d rounds compacted anything", tally.compacted, tally.rounds)
	}
}

type randomTally struct {
	rounds, compacted, refused, negativeHead int
	seen                                     map[string]int // randomFeatures
}

// randomFeatures are the dimensions of the generated tables and policies.
var randomFeatures = []string{
	"a manifest holding several partitions", "EXISTING entries", "position deletes", "deletion vectors",
	"equality deletes", "two partition specs", "a negative ancestor id", "a negative head id",
	"binpack", "sort", "zorder", "where", "a manifest rewrite", "a page row limit",
}

// note records the features of a table about to be compacted.
func (tally *randomTally) note(files map[string]randomFile) {
	parts := map[string]map[string]bool{}
	specs := map[int]bool{}
	for _, f := range files {
		if parts[f.manifest] == nil {
			parts[f.manifest] = map[string]bool{}
		}
		parts[f.manifest][f.part] = true
		specs[f.specID] = true
		if f.existing {
			tally.seen["EXISTING entries"]++
		}
		switch {
		case f.ref != "":
			tally.seen["deletion vectors"]++
		case f.content == iceberg.EntryContentPosDeletes:
			tally.seen["position deletes"]++
		case f.content == iceberg.EntryContentEqDeletes:
			tally.seen["equality deletes"]++
		}
	}
	for _, ps := range parts {
		if len(ps) > 1 {
			tally.seen["a manifest holding several partitions"]++
		}
	}
	if len(specs) > 1 {
		tally.seen["two partition specs"]++
	}
}

// optionalDuckDB is the DuckDB reader when it is installed: without it the
// test still runs with iceberg-go's reader (it fails in CI, where
// ICEWRIGHT_REQUIRE_SERVICES=1 requires DuckDB).
func optionalDuckDB(t *testing.T) *testenv.DuckDB {
	var duck *testenv.DuckDB
	t.Run("duckdb", func(t *testing.T) {
		d := testenv.DuckDBReader(t)
		duck = &d
	})
	if duck == nil {
		t.Log("DuckDB reader not installed: rows are read by iceberg-go only")
	}
	return duck
}

// randomTable is a table the trial writes and the model of its rows.
type randomTable struct {
	l       *testkit.Lakehouse
	tbl     *table.Table
	days    int            // rows of id fall on day id % days from testkit.Day0
	live    map[int64]bool // the live row ids
	next    int64
	evolved bool
	// sinceSpec is the first id written under the current spec. Deletes
	// pick ids from it on: a delete file carries the current spec's
	// partition and applies only to files of that spec (iceberg-go writes
	// position deletes for older specs' files that apply to nothing).
	sinceSpec int64
	log       []string // what was done, for the failure message
}

func compactionTrial(t *testing.T, seed uint64, duck *testenv.DuckDB, tally *randomTally) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ctx := context.Background()
	rt := &randomTable{l: testkit.NewLakehouse(t, t.TempDir(), catalogName), days: 3 + rng.IntN(3), live: map[int64]bool{}}
	defer func() {
		if t.Failed() {
			t.Logf("history:\n  %s", strings.Join(rt.log, "\n  "))
		}
	}()
	version := 2 + rng.IntN(2)
	props := map[string]string{}
	if rng.IntN(2) == 0 {
		// Appends merge manifests: EXISTING entries beside ADDED ones.
		props[table.ManifestMergeEnabledKey] = "true"
		props["commit.manifest.min-count-to-merge"] = "2"
	}
	// Data pages of a few rows in some tables: the compaction's column
	// writer ends pages at the limit. Drawn apart from rng, so a seed's
	// history is what it was without it.
	if pr := rand.New(rand.NewPCG(seed, 33)); pr.IntN(2) == 0 {
		props[table.ParquetPageRowLimitKey] = strconv.Itoa(3 + pr.IntN(40))
		tally.seen["a page row limit"]++
	}
	// Written as src.t, outside the policies' namespace, then copied.
	rt.tbl = rt.l.CreateTable(t, "src.t", testkit.TableOptions{Partitioned: true, Properties: props, FormatVersion: version})
	rt.logf("v%d table, %d days, properties %v", version, rt.days, props)
	rt.appendRows(t, rng)
	for range 3 + rng.IntN(5) {
		switch op := rng.IntN(10); {
		case op < 5:
			rt.appendRows(t, rng)
		case op < 7:
			rt.deletePositions(t, rng)
		case op < 9:
			rt.deleteEquality(t, rng)
		case !rt.evolved:
			rt.evolve(t, rng)
		default:
			rt.appendRows(t, rng)
		}
		if got := testkit.ScanRows(t, rt.tbl); got != int64(len(rt.live)) {
			t.Fatalf("setup: iceberg-go reads %d rows, the model has %d", got, len(rt.live))
		}
	}
	// Snapshot ids of either sign: none, an ancestor's or the head's
	// (and some others') renumbered negative.
	ids := testkit.SnapshotIDs(rt.tbl)
	head := rt.tbl.CurrentSnapshot().SnapshotID
	respell := map[int64]int64{}
	switch sign := rng.IntN(3); {
	case sign == 1 && len(ids) > 1:
		for _, id := range ids {
			if id != head && rng.IntN(2) == 0 {
				respell[id] = -id
			}
		}
	case sign == 2:
		respell[head] = -head
		for _, id := range ids {
			if rng.IntN(3) == 0 {
				respell[id] = -id
			}
		}
	}
	// The table the policies manage is a copy (lakehouse.CopyTable), its
	// snapshots renumbered.
	rt.tbl = rt.l.CopyAs(t, rt.tbl, "ns.t", lakehouse.SnapshotIDs(respell))
	if len(respell) > 0 {
		rt.logf("snapshot ids renumbered negative: %d of %d, head %d", len(respell), len(ids), rt.tbl.CurrentSnapshot().SnapshotID)
	}
	negativeHead := rt.tbl.CurrentSnapshot().SnapshotID <= 0
	for _, id := range testkit.SnapshotIDs(rt.tbl) {
		switch {
		case id <= 0 && id == rt.tbl.CurrentSnapshot().SnapshotID:
			tally.seen["a negative head id"]++
		case id <= 0:
			tally.seen["a negative ancestor id"]++
		}
	}
	tally.note(liveFiles(t, rt.tbl))
	// The plan's fast manifest decoder reads this table as iceberg-go does
	// (issue 44: every field the walk uses, entry by entry).
	testkit.SameOnBothDecoders(t, rt.tbl)
	for round := range 1 + rng.IntN(2) {
		tally.rounds++
		if negativeHead {
			tally.negativeHead++
		}
		pol := randomPolicy(rng, rt.days)
		for _, f := range pol.features {
			tally.seen[f]++
		}
		rt.logf("round %d policy:%s", round, pol.hcl)
		compacted, refused := rt.applyAndCheck(ctx, t, pol, duck)
		if compacted {
			tally.compacted++
		}
		if refused {
			tally.refused++
		}
		if t.Failed() {
			return
		}
	}
}

func (rt *randomTable) logf(format string, args ...any) {
	rt.log = append(rt.log, fmt.Sprintf(format, args...))
}

// appendRows commits one append of rows on every day: one manifest holds
// every partition's new file.
func (rt *randomTable) appendRows(t *testing.T, rng *rand.Rand) {
	t.Helper()
	n := 10 + rng.IntN(60)
	tbl, err := lakehouse.AppendEvents(context.Background(), rt.tbl, rt.next, n, testkit.Day0, rt.days, nil)
	if err != nil {
		t.Fatal(err)
	}
	rt.tbl = tbl
	for id := rt.next; id < rt.next+int64(n); id++ {
		rt.live[id] = true
	}
	rt.logf("append ids %d..%d (snapshot %d)", rt.next, rt.next+int64(n)-1, tbl.CurrentSnapshot().SnapshotID)
	rt.next += int64(n)
}

// pickIDs picks up to 6 live ids on a random proper subset of the days, so
// that deletes land in some partitions only.
func (rt *randomTable) pickIDs(rng *rand.Rand) []int64 {
	days := map[int64]bool{}
	for range 1 + rng.IntN(rt.days-1) {
		days[int64(rng.IntN(rt.days))] = true
	}
	var pool []int64
	for id := range rt.live {
		if id >= rt.sinceSpec && days[id%int64(rt.days)] {
			pool = append(pool, id)
		}
	}
	slices.Sort(pool)
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	return pool[:min(len(pool), 1+rng.IntN(6))]
}

// deletePositions deletes rows with merge-on-read: position delete files
// on v2, deletion vectors on v3.
func (rt *randomTable) deletePositions(t *testing.T, rng *rand.Rand) {
	t.Helper()
	ids := rt.pickIDs(rng)
	if len(ids) == 0 {
		return
	}
	rt.tbl = testkit.DeletePositions(t, rt.tbl, iceberg.IsIn(iceberg.Reference("event_id"), ids...))
	for _, id := range ids {
		delete(rt.live, id)
	}
	rt.logf("position delete of ids %v (snapshot %d)", ids, rt.tbl.CurrentSnapshot().SnapshotID)
}

// deleteEquality commits an equality delete on event_id. On a partitioned
// table the delete rows carry the partition source columns too (their
// partition is the deleted rows'), so each row is the deleted row itself
// with the other columns projected away.
func (rt *randomTable) deleteEquality(t *testing.T, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	ids := rt.pickIDs(rng)
	if len(ids) == 0 {
		return
	}
	sc := rt.tbl.Schema()
	names := []string{"event_id"}
	spec := rt.tbl.Spec()
	for _, f := range spec.Fields() {
		name, _ := sc.FindColumnName(f.SourceID())
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	sel, err := sc.Select(true, names...)
	if err != nil {
		t.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(sel, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	cols := make([][]arrow.Array, len(names))
	for _, id := range ids {
		at, err := lakehouse.EventRecords(sc, id, 1, testkit.Day0, rt.days)
		if err != nil {
			t.Fatal(err)
		}
		for i := range asc.Fields() {
			idx := at.Schema().FieldIndices(asc.Field(i).Name)[0]
			c := at.Column(idx).Data().Chunk(0)
			c.Retain()
			cols[i] = append(cols[i], c)
		}
		at.Release()
	}
	arrs := make([]arrow.Array, len(cols))
	for i, parts := range cols {
		if arrs[i], err = array.Concatenate(parts, memory.DefaultAllocator); err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			p.Release()
		}
	}
	rec := array.NewRecordBatch(asc, arrs, int64(len(ids)))
	defer rec.Release()
	for _, a := range arrs {
		a.Release()
	}
	key, _ := sc.FindFieldByName("event_id")
	txn := rt.tbl.NewTransaction()
	if err := txn.CommitEqualityDeletes(ctx, []int{key.ID}, func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) }, nil); err != nil {
		t.Fatalf("equality delete: %v", err)
	}
	if rt.tbl, err = txn.Commit(ctx); err != nil {
		t.Fatalf("equality delete: %v", err)
	}
	for _, id := range ids {
		delete(rt.live, id)
	}
	rt.logf("equality delete of ids %v (snapshot %d)", ids, rt.tbl.CurrentSnapshot().SnapshotID)
}

// evolve adds a partition field: later appends write under the new spec,
// earlier files keep theirs.
func (rt *randomTable) evolve(t *testing.T, rng *rand.Rand) {
	t.Helper()
	txn := rt.tbl.NewTransaction()
	u := txn.UpdateSpec(true)
	what := "identity(kind)"
	if rng.IntN(2) == 0 {
		u = u.AddField("kind", iceberg.IdentityTransform{}, "kind")
	} else {
		what = "bucket(4, user_id)"
		u = u.AddField("user_id", iceberg.BucketTransform{NumBuckets: 4}, "user_bucket")
	}
	if err := u.Commit(); err != nil {
		t.Fatalf("evolve spec: %v", err)
	}
	var err error
	if rt.tbl, err = txn.Commit(context.Background()); err != nil {
		t.Fatalf("evolve spec: %v", err)
	}
	rt.evolved = true
	rt.sinceSpec = rt.next
	spec := rt.tbl.Spec()
	rt.logf("partition spec evolved: + %s (spec %d)", what, spec.ID())
}

// randomPolicy is one policy block and what the model needs of it.
type randomPolicyChoice struct {
	hcl           string
	features      []string // of randomFeatures
	minInputFiles int
	whereDay      int // > 0: compaction.where keeps days >= Day0 + whereDay
}

func randomPolicy(rng *rand.Rand, days int) randomPolicyChoice {
	var pc randomPolicyChoice
	var b strings.Builder
	b.WriteString("\n  target_file_size = \"64MiB\"\n")
	strategy := []string{"binpack", "sort", "zorder"}[rng.IntN(3)]
	pc.features = append(pc.features, strategy)
	if strategy == "sort" {
		b.WriteString([]string{
			"  sort_order = [\"user_id\"]\n",
			"  sort_order = [\"event_id DESC\"]\n",
			"  sort_order = [\"kind\", \"event_ts\"]\n",
		}[rng.IntN(3)])
	}
	pc.minInputFiles = 1 + rng.IntN(3)
	fmt.Fprintf(&b, "  compaction {\n    strategy        = %q\n    min_input_files = %d\n", strategy, pc.minInputFiles)
	if strategy == "zorder" {
		b.WriteString("    zorder_columns  = [\"user_id\", \"event_id\"]\n")
	}
	if rng.IntN(3) == 0 {
		pc.whereDay = 1 + rng.IntN(days-1)
		pc.features = append(pc.features, "where")
		fmt.Fprintf(&b, "    where           = \"event_ts >= '%s'\"\n", testkit.Day0.AddDate(0, 0, pc.whereDay).Format(time.RFC3339))
	}
	b.WriteString("  }\n")
	if rng.IntN(3) == 0 {
		b.WriteString("  manifests {\n    max_count = 1\n  }\n")
		pc.features = append(pc.features, "a manifest rewrite")
	}
	pc.hcl = b.String()
	return pc
}

// randomFile is one live file of a snapshot, as the model sees it.
type randomFile struct {
	path    string
	content iceberg.ManifestEntryContent
	specID  int
	part    string // the spec's partition path, as the plan names groups
	day     int32  // the day partition value (days since 1970)
	records int64
	ref     string // a deletion vector's data file
	// Where the model's generator checks its coverage: the manifest
	// holding the entry, and whether it is EXISTING.
	manifest string
	existing bool
}

// liveFiles lists the live data and delete files of tbl's current
// snapshot by key (a deletion vector: its Puffin file and data file).
func liveFiles(t *testing.T, tbl *table.Table) map[string]randomFile {
	t.Helper()
	out := map[string]randomFile{}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return out
	}
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mans, err := snap.Manifests(fsys)
	if err != nil {
		t.Fatalf("manifests: %v", err)
	}
	for _, m := range mans {
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			t.Fatalf("entries of %s: %v", m.FilePath(), err)
		}
		for _, e := range entries {
			df := e.DataFile()
			f := randomFile{path: df.FilePath(), content: df.ContentType(), specID: int(df.SpecID()), records: df.Count(),
				manifest: m.FilePath(), existing: e.Status() == iceberg.EntryStatusEXISTING}
			if spec := tbl.Metadata().PartitionSpecByID(f.specID); spec != nil && !spec.IsUnpartitioned() {
				var rec partitionTuple
				for _, pf := range spec.Fields() {
					rec = append(rec, df.Partition()[pf.FieldID])
				}
				f.part = spec.PartitionToPath(rec, tbl.Schema())
			}
			switch d := df.Partition()[lakehouse.DayFieldID].(type) {
			case int32:
				f.day = d
			case iceberg.Date:
				f.day = int32(d)
			}
			key := f.path
			if ref := df.ReferencedDataFile(); ref != nil && table.IsDeletionVector(df) {
				f.ref = *ref
				key += "\x00" + *ref
			}
			if _, dup := out[key]; dup {
				t.Errorf("%s is live twice in snapshot %d", key, snap.SnapshotID)
			}
			out[key] = f
		}
	}
	return out
}

type partitionTuple []any

func (p partitionTuple) Size() int            { return len(p) }
func (p partitionTuple) Get(pos int) any      { return p[pos] }
func (p partitionTuple) Set(pos int, val any) { p[pos] = val }

// deleteTargets maps each live delete file (by liveFiles key) to the data
// files it deletes from: a position delete file's file_path values, a
// deletion vector's data file, and for an equality delete the data files
// iceberg-go's scan planning applies it to (same partition, older
// sequence number).
func deleteTargets(t *testing.T, tbl *table.Table, files map[string]randomFile) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for key, f := range files {
		switch {
		case f.ref != "":
			out[key] = []string{f.ref}
		case f.content == iceberg.EntryContentPosDeletes:
			out[key] = positionDeleteTargets(t, f.path)
		case f.content == iceberg.EntryContentEqDeletes:
			out[key] = []string{}
		}
	}
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatalf("plan files: %v", err)
	}
	for _, task := range tasks {
		for _, d := range task.EqualityDeleteFiles {
			out[d.FilePath()] = append(out[d.FilePath()], task.File.FilePath())
		}
	}
	return out
}

// positionDeleteTargets reads the distinct file_path values of a Parquet
// position delete file.
func positionDeleteTargets(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(strings.TrimPrefix(path, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatalf("position deletes %s: %v", path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	at, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("position deletes %s: %v", path, err)
	}
	defer at.Release()
	seen := map[string]bool{}
	var out []string
	for _, c := range at.Column(at.Schema().FieldIndices("file_path")[0]).Data().Chunks() {
		s := c.(*array.String)
		for i := range s.Len() {
			if p := s.Value(i); !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// applyAndCheck plans and applies pol on the table and checks the result
// against the model. It reports whether compaction committed and whether
// the plan refused it.
func (rt *randomTable) applyAndCheck(ctx context.Context, t *testing.T, pol randomPolicyChoice, duck *testenv.DuckDB) (compacted, refused bool) {
	t.Helper()
	addr := catalogName + ".ns.t"
	dir := t.TempDir()
	src := rt.l.HCL() + "policy \"r\" {" + pol.hcl + "}\ntables \"" + catalogName + ".ns.*\" {\n  policy = policy.r\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.icewright.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(dir, config.LoadOptions{Env: os.Environ()})
	if diags.HasErrors() {
		t.Fatalf("config:\n%s\n%s", src, diags.Error())
	}

	before := rt.l.Reload(t, "ns.t")
	oldFiles := liveFiles(t, before)
	targets := deleteTargets(t, before, oldFiles)
	goBefore, err := goFingerprint(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	if goBefore.Rows != int64(len(rt.live)) {
		t.Fatalf("setup: iceberg-go reads %d rows, the model has %d", goBefore.Rows, len(rt.live))
	}
	var duckBefore fingerprint
	if duck != nil {
		if duckBefore, err = duckFingerprint(ctx, *duck, before); err != nil {
			t.Fatal(err)
		}
		// The two readers hash values as they print them, so only their
		// row counts compare with each other.
		if duckBefore.Rows != goBefore.Rows {
			t.Fatalf("setup: DuckDB reads %d rows, iceberg-go %d", duckBefore.Rows, goBefore.Rows)
		}
	}

	now := time.Now()
	p, res := planApply(ctx, t, cfg, func() time.Time { return now }, nil)
	if len(p.Errors) > 0 {
		t.Fatalf("plan errors: %+v", p.Errors)
	}
	tp := findTable(t, p, addr)
	for _, r := range tp.Refusals {
		rt.logf("  refused %s: %s", r.Action, r.Reason)
		if r.Action == string(diff.Compact) {
			refused = true
		}
	}
	for _, tr := range res.Tables {
		for _, a := range tr.Actions {
			if a.Error != "" {
				t.Errorf("apply: %s failed: %s", a.Type, a.Error)
			}
		}
	}
	after := rt.l.Reload(t, "ns.t")
	newFiles := liveFiles(t, after)
	act := actionOf(tp, diff.Compact)
	rt.logf("  planned %v; snapshot %d -> %d", actionTypes(tp), before.CurrentSnapshot().SnapshotID, after.CurrentSnapshot().SnapshotID)

	// The model's inputs: every data file of each group's partition.
	inputs := map[string]bool{}
	groupParts := map[string]bool{}
	if act != nil {
		for _, g := range act.Compact.Groups {
			k := strconv.Itoa(g.SpecID) + "/" + g.Partition
			groupParts[k] = true
			n := 0
			for _, f := range oldFiles {
				if f.content == iceberg.EntryContentData && f.specID == g.SpecID && f.part == g.Partition {
					inputs[f.path] = true
					n++
					if pol.whereDay > 0 && f.day < int32(testkit.Day0.Unix()/86400)+int32(pol.whereDay) {
						t.Errorf("group %s holds %s of day %d, which the where excludes", k, f.path, f.day)
					}
				}
			}
			if n != g.InputFiles {
				t.Errorf("group %s: the plan counts %d input files, the partition has %d", k, g.InputFiles, n)
			}
			// The plan names the files apply rewrites (format 2.0).
			for _, path := range g.Files {
				if f, ok := oldFiles[path]; !ok || f.content != iceberg.EntryContentData || f.specID != g.SpecID || f.part != g.Partition {
					t.Errorf("group %s names %s, which is not a data file of its partition", k, path)
				}
			}
			if len(g.Files) != n {
				t.Errorf("group %s names %d files, the partition has %d", k, len(g.Files), n)
			}
			// A partition with files written under another sort order
			// than a sort or z-order rewrite's is one group whatever
			// min_input_files (stale sort, issue 29): only then, and
			// only under those strategies, may a group be smaller.
			stale := g.StaleSortFiles > 0 && act.Compact.Strategy != "binpack" && act.Compact.Strategy != ""
			if g.StaleSortFiles > n {
				t.Errorf("group %s: %d stale sort files of %d input files", k, g.StaleSortFiles, n)
			}
			if n < pol.minInputFiles && !stale {
				t.Errorf("group %s: %d input files, under min_input_files = %d, and none taken for its sort order", k, n, pol.minInputFiles)
			}
		}
	}
	for key, f := range oldFiles {
		_, kept := newFiles[key]
		switch {
		case f.content == iceberg.EntryContentData && inputs[f.path] && kept:
			t.Errorf("input %s (%s) is still live after the compaction", f.path, f.part)
		case f.content == iceberg.EntryContentData && !inputs[f.path] && !kept:
			t.Errorf("data file %s (spec %d, %s, %d records) was live and is not any more, and no compacted group holds it", f.path, f.specID, f.part, f.records)
		case f.content != iceberg.EntryContentData:
			onlyInputs := true
			for _, d := range targets[key] {
				if !inputs[d] {
					onlyInputs = false
				}
			}
			switch {
			case !kept && !onlyInputs:
				t.Errorf("delete file %s (%s) was retired, but it still applies to files that were not compacted (%v)", f.path, f.part, targets[key])
			case kept && onlyInputs && len(targets[key]) > 0 && f.content == iceberg.EntryContentPosDeletes && len(inputs) > 0:
				t.Errorf("position delete or deletion vector %s applies only to compacted files %v, and stays", f.path, targets[key])
			}
		}
	}
	for key, f := range newFiles {
		if _, ok := oldFiles[key]; ok {
			continue
		}
		switch {
		case f.content != iceberg.EntryContentData:
			t.Errorf("compaction added the delete file %s", f.path)
		case !groupParts[strconv.Itoa(f.specID)+"/"+f.part]:
			t.Errorf("new data file %s is in spec %d partition %q, no compacted group's", f.path, f.specID, f.part)
		}
	}
	// Outputs may be none: a group whose rows are all deleted writes no
	// file. An input still live is an error above.
	compacted = len(inputs) > 0
	// The snapshot summary's totals are the live set's.
	if s := after.CurrentSnapshot(); s != nil && s.Summary != nil {
		var data, deletes int
		for _, f := range newFiles {
			if f.content == iceberg.EntryContentData {
				data++
			} else {
				deletes++
			}
		}
		for k, want := range map[string]int{"total-data-files": data, "total-delete-files": deletes} {
			if v, ok := s.Summary.Properties[k]; ok && v != strconv.Itoa(want) {
				t.Errorf("snapshot %d summary: %s = %s, the live set has %d", s.SnapshotID, k, v, want)
			}
		}
	}

	goAfter, err := goFingerprint(ctx, after)
	if err != nil {
		t.Fatal(err)
	}
	if !goAfter.equal(goBefore) {
		t.Errorf("iceberg-go reads other rows after apply:\n before %v\n after  %v", goBefore, goAfter)
	}
	if duck != nil {
		duckAfter, err := duckFingerprint(ctx, *duck, after)
		if err != nil {
			t.Fatal(err)
		}
		if !duckAfter.equal(duckBefore) {
			t.Errorf("DuckDB reads other rows after apply:\n before %v\n after  %v", duckBefore, duckAfter)
		}
	}
	requireReferencedPresent(ctx, t, addr, after)
	return compacted, refused
}
