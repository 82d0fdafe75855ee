package expirydiff

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icewright/icewright/diff"
)

// Every generated age is a whole number of hours plus half an hour, and every
// retention limit a whole number of hours, so no snapshot is ever within 30
// minutes of a cutoff: the few milliseconds between our clock and the one
// iceberg-go reads inside ExpireSnapshots cannot change a decision.
const (
	hour   = time.Hour
	margin = 30 * time.Minute
	cases  = 600
)

// history is one generated table plus the policy the plan would apply.
type history struct {
	meta         table.Metadata
	maxAge       time.Duration // 0: WithOlderThan not passed
	minSnapshots int           // 0: WithRetainLast not passed
	maxRefAge    time.Duration // 0: policy has no max_ref_age
	addedOnMain  int
	desc         string
}

func randHours(r *rand.Rand, maxHours int) int64 { return int64(1 + r.IntN(maxHours)) }

// generate builds a random history with branches, tags, rollbacks, forks,
// roots without parents, per-ref retention and retention properties.
func generate(t *testing.T, r *rand.Rand, now time.Time) history {
	t.Helper()
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	props := iceberg.Properties{}
	// Retention properties: standard, legacy, both, or garbage.
	if r.IntN(3) == 0 {
		props["history.expire.min-snapshots-to-keep"] = strconv.Itoa(1 + r.IntN(5))
	}
	if r.IntN(5) == 0 {
		props["min-snapshots-to-keep"] = strconv.Itoa(1 + r.IntN(5))
	}
	if r.IntN(3) == 0 {
		props["history.expire.max-snapshot-age-ms"] = strconv.FormatInt(randHours(r, 400)*hour.Milliseconds(), 10)
	}
	if r.IntN(5) == 0 {
		props["max-snapshot-age-ms"] = strconv.FormatInt(randHours(r, 400)*hour.Milliseconds(), 10)
	}
	if r.IntN(4) == 0 {
		props["history.expire.max-ref-age-ms"] = strconv.FormatInt(randHours(r, 600)*hour.Milliseconds(), 10)
	}
	if r.IntN(8) == 0 {
		props["max-ref-age-ms"] = "not-a-number"
	}
	if r.IntN(4) == 0 {
		props["gc.enabled"] = "true"
	}
	h := history{}
	if r.IntN(7) != 0 {
		h.maxAge = time.Duration(randHours(r, 400)) * hour
	}
	if r.IntN(7) != 0 {
		h.minSnapshots = 1 + r.IntN(6)
	}
	if r.IntN(3) == 0 {
		h.maxRefAge = time.Duration(randHours(r, 600)) * hour
		// update_properties writes the policy's max_ref_age before expiry.
		props["history.expire.max-ref-age-ms"] = strconv.FormatInt(h.maxRefAge.Milliseconds(), 10)
	}
	if r.IntN(3) == 0 {
		h.addedOnMain = 1 + r.IntN(2)
	}

	// Built from scratch rather than from table.NewMetadata, whose
	// last-updated time (now) would forbid adding older snapshots.
	b, err := table.NewMetadataBuilder(2)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{
		b.AddSchema(schema),
		b.SetCurrentSchemaID(-1),
		b.AddPartitionSpec(iceberg.UnpartitionedSpec, true),
		b.SetDefaultSpecID(-1),
		b.AddSortOrder(&table.UnsortedSortOrder),
		b.SetDefaultSortOrderID(-1),
		b.SetLoc("file:///tmp/expirydiff"),
		b.SetUUID(uuid.New()),
		b.SetProperties(props),
	} {
		if step != nil {
			t.Fatalf("base metadata: %v", step)
		}
	}

	n := 1 + r.IntN(40)
	// Ages in whole hours, oldest first (iceberg-go rejects a snapshot
	// much older than the previous one), up to ~40 days.
	ages := make([]int64, n)
	for i := range ages {
		ages[i] = int64(r.IntN(960))
	}
	slices.SortFunc(ages, func(a, b int64) int { return int(b - a) })

	var ids []int64
	used := map[int64]bool{}
	heads := map[string]int64{} // branch -> head
	var seq int64
	for i := range n {
		id := r.Int64N(1<<53) + 1
		for used[id] {
			id = r.Int64N(1<<53) + 1
		}
		used[id] = true
		var parent *int64
		onto := "main"
		switch k := r.IntN(20); {
		case i == 0 || k < 1: // a new root, as after a table replace
		case k < 13: // a commit on main
			if p, ok := heads["main"]; ok {
				parent = &p
			}
		case k < 17: // a commit on another branch, new or existing
			onto = fmt.Sprintf("b%d", r.IntN(3))
			if p, ok := heads[onto]; ok {
				parent = &p
			} else {
				p := ids[r.IntN(len(ids))]
				parent = &p
			}
		default: // a rollback of main to an older snapshot, then a commit
			p := ids[r.IntN(len(ids))]
			parent = &p
		}
		seq++
		s := table.Snapshot{
			SnapshotID:       id,
			ParentSnapshotID: parent,
			SequenceNumber:   seq,
			TimestampMs:      now.Add(-time.Duration(ages[i])*hour - margin).UnixMilli(),
			ManifestList:     fmt.Sprintf("file:///tmp/expirydiff/metadata/snap-%d.avro", id),
			Summary:          &table.Summary{Operation: table.OpAppend},
		}
		if err := b.AddSnapshot(&s); err != nil {
			t.Fatalf("add snapshot: %v", err)
		}
		ids = append(ids, id)
		heads[onto] = id
		// Sometimes main is rolled back without a new commit.
		if r.IntN(12) == 0 && len(ids) > 1 {
			heads["main"] = ids[r.IntN(len(ids)-1)]
		}
	}
	if _, ok := heads["main"]; !ok {
		heads["main"] = ids[len(ids)-1]
	}

	spec := func(tag bool) refSpec {
		var rs refSpec
		if r.IntN(3) == 0 {
			rs.maxRefAgeMs = randHours(r, 800) * hour.Milliseconds()
		}
		if tag {
			return rs
		}
		if r.IntN(3) == 0 {
			rs.minSnapshots = 1 + r.IntN(6)
		}
		if r.IntN(3) == 0 {
			rs.maxSnapshotAgeMs = randHours(r, 400) * hour.Milliseconds()
		}
		return rs
	}
	for _, name := range slices.Sorted(maps.Keys(heads)) {
		if err := setRef(b, name, heads[name], table.BranchRef, spec(false)); err != nil {
			t.Fatalf("set branch %s: %v", name, err)
		}
	}
	for i := range r.IntN(4) {
		if err := setRef(b, fmt.Sprintf("t%d", i), ids[r.IntN(len(ids))], table.TagRef, spec(true)); err != nil {
			t.Fatalf("set tag: %v", err)
		}
	}
	// Refs are set now, after the commits: a rollback is a later change
	// than the snapshot it points back to.
	b.SetLastUpdatedMS()
	h.meta, err = b.Build()
	if err != nil {
		t.Fatalf("build metadata: %v", err)
	}
	h.desc = fmt.Sprintf("maxAge=%v minSnapshots=%d maxRefAge=%v added=%d props=%v", h.maxAge, h.minSnapshots, h.maxRefAge, h.addedOnMain, props)
	return h
}

// refSpec is a ref's own retention; zero fields are unset.
type refSpec struct {
	maxRefAgeMs, maxSnapshotAgeMs int64
	minSnapshots                  int
}

// setRef sets a ref with its retention. iceberg-go's option type is
// unexported, so the slice's type comes from inference (noneLike).
func setRef(b *table.MetadataBuilder, name string, id int64, typ table.RefType, rs refSpec) error {
	opts := noneLike(table.WithMaxRefAgeMs(1))
	if rs.maxRefAgeMs > 0 {
		opts = append(opts, table.WithMaxRefAgeMs(rs.maxRefAgeMs))
	}
	if rs.maxSnapshotAgeMs > 0 {
		opts = append(opts, table.WithMaxSnapshotAgeMs(rs.maxSnapshotAgeMs))
	}
	if rs.minSnapshots > 0 {
		opts = append(opts, table.WithMinSnapshotsToKeep(rs.minSnapshots))
	}
	return b.SetSnapshotRef(name, id, typ, opts...)
}

// noneLike returns an empty slice of v's type.
func noneLike[T any](T) []T { return nil }

// stateOf converts iceberg-go metadata to diff's plain observed state, as a
// provider does.
func stateOf(meta table.Metadata) *diff.TableState {
	st := &diff.TableState{Properties: maps.Clone(meta.Properties())}
	for _, s := range meta.Snapshots() {
		st.Snapshots = append(st.Snapshots, diff.Snapshot{
			ID: s.SnapshotID, ParentID: s.ParentSnapshotID, SequenceNumber: s.SequenceNumber, TimestampMs: s.TimestampMs,
		})
	}
	for name, ref := range meta.Refs() {
		st.Refs = append(st.Refs, diff.Ref{
			Name: name, Type: string(ref.SnapshotRefType), SnapshotID: ref.SnapshotID,
			MinSnapshotsToKeep: ref.MinSnapshotsToKeep, MaxSnapshotAgeMs: ref.MaxSnapshotAgeMs, MaxRefAgeMs: ref.MaxRefAgeMs,
		})
	}
	slices.SortFunc(st.Refs, func(a, b diff.Ref) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	if cur := meta.CurrentSnapshot(); cur != nil {
		id := cur.SnapshotID
		st.CurrentSnapshotID = &id
	}
	return st
}

// icebergExpire runs iceberg-go's real expiry on a transaction, after
// committing addedOnMain snapshots on main the way a compaction would (same
// ref retention kept), and returns what the staged table lost.
func icebergExpire(t *testing.T, h history, now time.Time) (expired []int64, refsRemoved []string) {
	t.Helper()
	meta := h.meta
	if h.addedOnMain > 0 {
		b, err := table.MetadataBuilderFromBase(meta, "")
		if err != nil {
			t.Fatal(err)
		}
		head := meta.CurrentSnapshot().SnapshotID
		seq := meta.LastSequenceNumber()
		for i := range h.addedOnMain {
			parent := head
			seq++
			s := table.Snapshot{
				SnapshotID: int64(1<<60) + int64(i), ParentSnapshotID: &parent, SequenceNumber: seq,
				TimestampMs: now.UnixMilli(), Summary: &table.Summary{Operation: table.OpReplace},
				ManifestList: "file:///tmp/expirydiff/metadata/plan.avro",
			}
			if err := b.AddSnapshot(&s); err != nil {
				t.Fatalf("add plan snapshot: %v", err)
			}
			if err := b.NewRetainingSnapshotRefUpdate("main", s.SnapshotID, table.BranchRef).Apply(b); err != nil {
				t.Fatalf("move main: %v", err)
			}
			head = s.SnapshotID
		}
		if meta, err = b.Build(); err != nil {
			t.Fatalf("build: %v", err)
		}
	}
	tbl := table.New(table.Identifier{"db", "t"}, meta, "file:///tmp/expirydiff/metadata/v1.metadata.json", nil, nil)
	txn := tbl.NewTransaction()
	var opts []table.ExpireSnapshotsOpt
	if h.maxAge > 0 {
		opts = append(opts, table.WithOlderThan(h.maxAge))
	}
	if h.minSnapshots > 0 {
		opts = append(opts, table.WithRetainLast(h.minSnapshots))
	}
	if err := txn.ExpireSnapshots(opts...); err != nil {
		t.Fatalf("ExpireSnapshots: %v", err)
	}
	staged, err := txn.StagedTable()
	if err != nil {
		t.Fatalf("StagedTable: %v", err)
	}
	remaining := map[int64]bool{}
	for _, s := range staged.Metadata().Snapshots() {
		remaining[s.SnapshotID] = true
	}
	expired = []int64{}
	for _, s := range h.meta.Snapshots() {
		if !remaining[s.SnapshotID] {
			expired = append(expired, s.SnapshotID)
		}
	}
	for _, s := range meta.Snapshots() {
		if s.SnapshotID >= 1<<60 && !remaining[s.SnapshotID] {
			t.Fatalf("iceberg-go expired a snapshot the plan adds; the generator's margins are wrong")
		}
	}
	stagedRefs := map[string]bool{}
	for name := range staged.Metadata().Refs() {
		stagedRefs[name] = true
	}
	for name := range h.meta.Refs() {
		if !stagedRefs[name] {
			refsRemoved = append(refsRemoved, name)
		}
	}
	slices.Sort(refsRemoved)
	return expired, refsRemoved
}

func TestSelectExpiredMatchesIcebergGo(t *testing.T) {
	r := rand.New(rand.NewPCG(20261130, 3))
	var withExpired, withRefs, withAdded, rollbacks int
	for i := range cases {
		now := time.Now()
		h := generate(t, r, now)
		st := stateOf(h.meta)
		got := diff.SelectExpired(st, h.maxAge, h.minSnapshots, h.maxRefAge, h.addedOnMain, now)
		if got.Problem != "" {
			t.Fatalf("case %d: problem %s", i, got.Problem)
		}
		wantExpired, wantRefs := icebergExpire(t, h, now)
		if !slices.Equal(got.Expired, wantExpired) || !slices.Equal(got.RefsToRemove, wantRefs) {
			t.Fatalf("case %d (%s)\nsnapshots %+v\nrefs %+v\ndiff:     expired %v refs %v\niceberg:  expired %v refs %v",
				i, h.desc, st.Snapshots, st.Refs, got.Expired, got.RefsToRemove, wantExpired, wantRefs)
		}
		if len(wantExpired) > 0 {
			withExpired++
		}
		if len(wantRefs) > 0 {
			withRefs++
		}
		if h.addedOnMain > 0 && len(wantExpired) > 0 {
			withAdded++
		}
		if cur := h.meta.CurrentSnapshot(); cur != nil && cur.SnapshotID != h.meta.Snapshots()[len(h.meta.Snapshots())-1].SnapshotID {
			rollbacks++
		}
	}
	t.Logf("%d cases: %d expire something, %d remove refs, %d with plan-added snapshots expiring, %d where main is not the newest", cases, withExpired, withRefs, withAdded, rollbacks)
	// The generator must exercise every rule, or agreement proves little.
	if withExpired < cases/4 || withRefs < cases/20 || withAdded < cases/20 || rollbacks < cases/10 {
		t.Fatalf("generator coverage too thin: %d expiring, %d ref removals, %d with added, %d rollbacks", withExpired, withRefs, withAdded, rollbacks)
	}
}

// testTime is a fixed clock for tests that do not race iceberg-go's own.
func testTime() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
